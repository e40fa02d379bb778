/*
 * Every point-to-point message of a simulated job, with the messages it depended on and when
 * it was posted and delivered (nbox-cosim's messages.csv; docs/TRACES.md, "Traffic out").
 *
 * A message is one step of a rank's schedule (a chunk of a collective, a point-to-point
 * transfer). Its dependencies are the messages whose completion released its step:
 *   - within its op, those of the steps the step waits for (coll::Step::deps): a message
 *     received, or a message the rank sent (a send completes on delivery);
 *   - for a step that waits for nothing in its op (an op's first sends), the message whose
 *     completion last advanced the sending rank before it was posted: the end of the earlier
 *     communication the rank's program went on from (after compute, if any: the gap between
 *     that delivery and this post). The run satisfied this dependency; with several ops in
 *     flight on a rank it may belong to one the message did not need.
 * A job's first messages have none.
 *
 * Held whole, the log grows with the run (some 270 bytes per message). With a sink it hands
 * each message on, in posting order, once it and every message posted before it are
 * delivered, and forgets it: it then holds only the messages from the oldest one in flight on.
 */
#ifndef NBOX_MESSAGE_LOG_H
#define NBOX_MESSAGE_LOG_H

#include "ns3/nstime.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ns3
{

struct NboxMessageRecord
{
    uint32_t src = 0;     //!< world rank
    uint32_t dst = 0;     //!< world rank
    uint32_t comm = 0;    //!< communicator id (NboxJobRecords::communicatorNames)
    uint32_t channel = 0; //!< the communicator's channel (its point-to-point lane for transfers)
    uint64_t bytes = 0;
    int iteration = 0;
    uint32_t label = 0;         //!< index into NboxMessageLog::GetLabels(): the op's label
    std::vector<uint64_t> deps; //!< ids (indexes into the log) of earlier messages
    Time posted;
    Time delivered; //!< zero until delivered
    bool isDelivered = false;
};

class NboxMessageLog
{
  public:
    static constexpr uint64_t kNoMessage = UINT64_MAX;

    /** Starts logging for a job of `worldSize` ranks (off until called). */
    void Enable(uint32_t worldSize);
    bool IsEnabled() const;

    /** Receives a message the log hands on: its id (posting order, from 0) and its record. */
    using Sink = std::function<void(uint64_t id, const NboxMessageRecord& message)>;
    /** Hands messages on to `sink` as they and every earlier one are delivered (see above). */
    void SetSink(Sink sink);
    /** Hands every message still held to the sink, delivered or not (a run's end). */
    void Flush();

    /** Logs a message posted now; returns its id. */
    uint64_t Post(const NboxMessageRecord& message, const std::string& label);
    void Deliver(uint64_t id, Time at);
    /** The completion of message `id` (sent or received) advanced `rank`'s schedule. */
    void Advanced(uint32_t rank, uint64_t id);
    /** The message whose completion last advanced `rank`, or kNoMessage. */
    uint64_t LastAdvanced(uint32_t rank) const;

    /** The messages held, from id GetFirstHeld() on: every one without a sink. */
    const std::deque<NboxMessageRecord>& GetHeld() const;
    uint64_t GetFirstHeld() const;
    const std::vector<std::string>& GetLabels() const;

  private:
    /** Hands on the delivered messages at the front (with a sink). */
    void HandOnDelivered();
    /** Hands on the messages at the front, up to the first undelivered one if `deliveredOnly`. */
    void HandOn(bool deliveredOnly);

    bool m_enabled = false;
    Sink m_sink;
    std::deque<NboxMessageRecord> m_held;
    uint64_t m_firstHeld = 0;             //!< the id of m_held.front()
    std::vector<uint64_t> m_lastAdvanced; //!< per world rank
    std::vector<std::string> m_labels;
    std::map<std::string, uint32_t> m_labelIndex;
};

} // namespace ns3

#endif /* NBOX_MESSAGE_LOG_H */
