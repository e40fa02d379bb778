/*
 * An event scheduler that forgets cancelled events. ns-3's EventId::Cancel() only flags an
 * event; it stays in the scheduler until its time comes. TCP cancels and reschedules its
 * retransmission timer, 200 ms or more ahead, on every ACK that advances the window, so a job
 * shorter than that keeps one dead event per ACK in the queue: the queue, and the cost of every
 * insertion and removal in it, grows with the data the whole job has moved, which is the world
 * size times the message size. This scheduler drops them whenever the queue has doubled since
 * the last sweep (the sweeps cost amortised O(1) per event), so its size follows the events
 * that are still due. ns3-module/README.md, "Event scheduler".
 */
#ifndef NBOX_PRUNING_SCHEDULER_H
#define NBOX_PRUNING_SCHEDULER_H

#include "ns3/scheduler.h"

#include <cstdint>
#include <map>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief ns-3's MapScheduler (a std::map on (time, uid)) that drops cancelled events in
 * sweeps. Live events run in the same order as under MapScheduler; cancelled events swept
 * before their time are not dispatched (and so not counted by Simulator::GetEventCount()).
 * A binary heap was tried first: as ns-3's PriorityQueueScheduler, up to 2-3x faster per
 * operation in isolation (nbox-bench-scheduler), but 10-18% slower in four paired whole runs,
 * so the map stays (tools/bench/README.md, "Event scheduler").
 */
class NboxPruningScheduler : public Scheduler
{
  public:
    static TypeId GetTypeId();

    NboxPruningScheduler();
    ~NboxPruningScheduler() override;

    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    void Remove(const Event& ev) override;

    /** Cancelled events dropped so far. */
    uint64_t GetPrunedCount() const;

  private:
    /** Drops every cancelled event. */
    void Prune();

    std::map<EventKey, EventImpl*> m_events; //!< by (time, uid), ns-3's order of events
    std::size_t m_pruneAt;   //!< twice the events left by the last sweep (0 before any)
    uint32_t m_minPruneSize; //!< no sweep below this many events
    uint64_t m_pruned = 0;   //!< cancelled events dropped
};

} // namespace ns3

#endif /* NBOX_PRUNING_SCHEDULER_H */
