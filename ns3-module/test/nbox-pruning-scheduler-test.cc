/*
 * NboxPruningScheduler: live events run in exactly the order ns-3's MapScheduler runs them,
 * cancelled ones are dropped (and released) once the heap has doubled, and removal works
 * anywhere in the heap.
 */
#include "nbox-test-util.h"

#include "ns3/event-impl.h"
#include "ns3/nbox-pruning-scheduler.h"
#include "ns3/object-factory.h"
#include "ns3/random-variable-stream.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/uinteger.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

/** An event that does nothing; the tests drive the scheduler by hand. */
class NoOpEvent : public EventImpl
{
  protected:
    void
    Notify() override
    {
    }
};

Scheduler::Event
MakeSchedulerEvent(uint64_t ts, uint32_t uid)
{
    Scheduler::Event ev;
    ev.impl = new NoOpEvent(); // one reference, the scheduler's, as the simulator hands over
    ev.key.m_ts = ts;
    ev.key.m_uid = uid;
    ev.key.m_context = 0;
    return ev;
}

std::vector<uint32_t>
DrainUids(NboxPruningScheduler& scheduler)
{
    std::vector<uint32_t> uids;
    while (!scheduler.IsEmpty())
    {
        Scheduler::Event ev = scheduler.RemoveNext();
        uids.push_back(ev.key.m_uid);
        ev.impl->Unref();
    }
    return uids;
}

TEST(NboxPruningScheduler, RunsEventsByTimeThenBySchedulingOrder)
{
    Ptr<NboxPruningScheduler> scheduler = CreateObject<NboxPruningScheduler>();
    // (time, uid): ties in time go by uid, the order they were scheduled in.
    const std::vector<std::pair<uint64_t, uint32_t>> inserted
        = {{30, 1}, {10, 2}, {20, 3}, {10, 4}, {30, 5}, {0, 6}, {20, 7}};
    for (const auto& [ts, uid] : inserted)
    {
        scheduler->Insert(MakeSchedulerEvent(ts, uid));
    }
    EXPECT_EQ(scheduler->PeekNext().key.m_uid, 6u);
    EXPECT_EQ(DrainUids(*scheduler), (std::vector<uint32_t>{6, 2, 4, 3, 7, 1, 5}));
}

TEST(NboxPruningScheduler, RemovesAnEventFromTheMiddleAndKeepsTheOrder)
{
    Ptr<NboxPruningScheduler> scheduler = CreateObject<NboxPruningScheduler>();
    std::vector<Scheduler::Event> events;
    for (uint32_t uid = 0; uid < 9; ++uid)
    {
        events.push_back(MakeSchedulerEvent(100 - 10 * uid, uid)); // uid 8 is due first
        scheduler->Insert(events.back());
    }
    scheduler->Remove(events[4]);
    events[4].impl->Unref(); // the simulator releases what it removes
    scheduler->Remove(events[8]);
    events[8].impl->Unref();
    EXPECT_EQ(DrainUids(*scheduler), (std::vector<uint32_t>{7, 6, 5, 3, 2, 1, 0}));
}

TEST(NboxPruningScheduler, DropsAndReleasesCancelledEventsOnceTheHeapHasDoubled)
{
    Ptr<NboxPruningScheduler> scheduler = CreateObject<NboxPruningScheduler>();
    scheduler->SetAttribute("MinPruneSize", UintegerValue(100));
    // 100 events, every other one cancelled, each watched through a reference of our own.
    std::vector<Ptr<EventImpl>> watched;
    for (uint32_t uid = 0; uid < 100; ++uid)
    {
        Scheduler::Event ev = MakeSchedulerEvent(1000 + uid, uid);
        watched.emplace_back(ev.impl); // Ptr's constructor adds a reference
        scheduler->Insert(ev);
    }
    for (uint32_t uid = 0; uid < 100; uid += 2)
    {
        watched[uid]->Cancel();
    }
    EXPECT_EQ(scheduler->GetPrunedCount(), 0u); // below MinPruneSize nothing was swept
    // The 101st insertion sweeps: 50 cancelled events go and the scheduler's reference with them.
    scheduler->Insert(MakeSchedulerEvent(1, 100));
    EXPECT_EQ(scheduler->GetPrunedCount(), 50u);
    for (uint32_t uid = 0; uid < 100; ++uid)
    {
        EXPECT_EQ(watched[uid]->GetReferenceCount(), uid % 2 == 0 ? 1u : 2u) << uid;
    }
    // The next sweep waits for the heap to double from the 50 events the first one left: the
    // insertion that finds 100 queued. Uids 101-149 bring it there without a sweep.
    for (uint32_t uid = 101; uid < 150; ++uid)
    {
        scheduler->Insert(MakeSchedulerEvent(2000 + uid, uid));
    }
    EXPECT_EQ(scheduler->GetPrunedCount(), 50u);
    watched[1]->Cancel();
    scheduler->Insert(MakeSchedulerEvent(3000, 150)); // finds 100 queued: sweeps the one cancelled
    EXPECT_EQ(scheduler->GetPrunedCount(), 51u);
    EXPECT_EQ(watched[1]->GetReferenceCount(), 1u);
    std::vector<uint32_t> expected = {100};
    for (uint32_t uid = 3; uid < 100; uid += 2)
    {
        expected.push_back(uid);
    }
    for (uint32_t uid = 101; uid <= 150; ++uid)
    {
        expected.push_back(uid);
    }
    EXPECT_EQ(DrainUids(*scheduler), expected);
}

/**
 * A random simulation: events at random times schedule more events, cancel some and remove
 * others. Returns the (time, tag) of every event run, in order.
 */
class RandomWorkload
{
  public:
    std::vector<std::pair<int64_t, uint32_t>>
    Run(const TypeId& scheduler)
    {
        Simulator::Destroy();
        RngSeedManager::SetSeed(7);
        RngSeedManager::SetRun(3);
        ObjectFactory factory;
        factory.SetTypeId(scheduler);
        if (scheduler == NboxPruningScheduler::GetTypeId())
        {
            factory.Set("MinPruneSize", UintegerValue(64)); // sweep often
        }
        Simulator::SetScheduler(factory);
        m_random = CreateObject<UniformRandomVariable>();
        m_random->SetStream(11);
        m_ran.clear();
        m_pending.clear();
        m_nextTag = 0;
        for (int i = 0; i < 64; ++i)
        {
            Spawn();
        }
        Simulator::Run();
        dispatched = Simulator::GetEventCount();
        Simulator::Destroy();
        return m_ran;
    }

    /** Events the last run dispatched, cancelled ones included. */
    uint64_t dispatched = 0;

  private:
    void
    Spawn()
    {
        if (m_nextTag >= 60000)
        {
            return;
        }
        // Whole microseconds from a small range, so that many events share a time.
        const Time delay = MicroSeconds(m_random->GetInteger(0, 50));
        m_pending.push_back(Simulator::Schedule(delay, &RandomWorkload::Fire, this, m_nextTag++));
    }

    void
    Fire(uint32_t tag)
    {
        m_ran.emplace_back(Simulator::Now().GetNanoSeconds(), tag);
        // Like TCP's timers: most events reschedule one far ahead and cancel an earlier one.
        Spawn();
        if (m_random->GetValue() < 0.7)
        {
            Spawn();
        }
        const uint32_t pick = m_random->GetInteger(0, 99);
        if (!m_pending.empty() && pick < 45)
        {
            const size_t i = m_random->GetInteger(0, m_pending.size() - 1);
            if (pick < 2)
            {
                m_pending[i].Remove();
            }
            else
            {
                m_pending[i].Cancel();
            }
            m_pending[i] = m_pending.back();
            m_pending.pop_back();
        }
        if (m_pending.size() > 4096)
        {
            m_pending.erase(m_pending.begin(), m_pending.begin() + 2048);
        }
    }

    Ptr<UniformRandomVariable> m_random;
    std::vector<std::pair<int64_t, uint32_t>> m_ran;
    std::vector<EventId> m_pending;
    uint32_t m_nextTag = 0;
};

TEST(NboxPruningScheduler, RunsARandomSimulationExactlyAsMapSchedulerDoes)
{
    RandomWorkload workload;
    const auto reference = workload.Run(TypeId::LookupByName("ns3::MapScheduler"));
    const uint64_t referenceDispatched = workload.dispatched;
    const auto pruning = workload.Run(NboxPruningScheduler::GetTypeId());
    ASSERT_GT(reference.size(), 10000u);
    EXPECT_EQ(pruning, reference);
    // Cancelled events were swept before their time, so fewer were dispatched.
    EXPECT_LT(workload.dispatched, referenceDispatched);
}

} // namespace
} // namespace test
} // namespace ns3
