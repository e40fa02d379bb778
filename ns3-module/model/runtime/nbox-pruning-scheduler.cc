#include "nbox-pruning-scheduler.h"

#include "ns3/assert.h"
#include "ns3/event-impl.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NboxPruningScheduler);

TypeId
NboxPruningScheduler::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxPruningScheduler")
              .SetParent<Scheduler>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxPruningScheduler>()
              .AddAttribute("MinPruneSize",
                            "No sweep for cancelled events while fewer than this many events are "
                            "queued; above it, a sweep runs whenever the queue has doubled since "
                            "the last one.",
                            UintegerValue(4096),
                            MakeUintegerAccessor(&NboxPruningScheduler::m_minPruneSize),
                            MakeUintegerChecker<uint32_t>(1));
    return tid;
}

NboxPruningScheduler::NboxPruningScheduler()
    : m_pruneAt(0)
    , m_minPruneSize(4096)
{
}

NboxPruningScheduler::~NboxPruningScheduler()
{
    // The simulator removes and releases every event before it destroys its scheduler.
    NS_ASSERT(m_events.empty());
}

void
NboxPruningScheduler::Insert(const Event& ev)
{
    if (m_events.size() >= std::max<std::size_t>(m_pruneAt, m_minPruneSize))
    {
        Prune();
    }
    // Most new events are the latest yet (timers far ahead): the hint makes those O(1).
    m_events.emplace_hint(m_events.end(), ev.key, ev.impl);
}

bool
NboxPruningScheduler::IsEmpty() const
{
    return m_events.empty();
}

Scheduler::Event
NboxPruningScheduler::PeekNext() const
{
    NS_ASSERT(!m_events.empty());
    const auto first = m_events.begin();
    return Event{first->second, first->first};
}

Scheduler::Event
NboxPruningScheduler::RemoveNext()
{
    NS_ASSERT(!m_events.empty());
    const auto first = m_events.begin();
    const Event next{first->second, first->first};
    m_events.erase(first);
    return next;
}

void
NboxPruningScheduler::Remove(const Event& ev)
{
    const auto erased = m_events.erase(ev.key);
    NS_ASSERT(erased == 1);
    (void)erased;
}

uint64_t
NboxPruningScheduler::GetPrunedCount() const
{
    return m_pruned;
}

void
NboxPruningScheduler::Prune()
{
    // The simulator hands the scheduler one reference to each event it queues and releases it
    // after running the event; an event dropped here is released here instead.
    for (auto it = m_events.begin(); it != m_events.end();)
    {
        if (it->second->IsCancelled())
        {
            it->second->Unref();
            it = m_events.erase(it);
            ++m_pruned;
        }
        else
        {
            ++it;
        }
    }
    m_pruneAt = 2 * m_events.size();
}

} // namespace ns3
