/*
 * The reliability of a RoCEv2 reliable-connection QP: packet sequence numbers, go-back-N
 * retransmission at the sender, in-order acceptance with ACK/NACK at the receiver. Pure
 * bookkeeping (no packets, no clock), so the NIC's logic can be tested on its own.
 */
#ifndef NBOX_ROCE_GO_BACK_N_H
#define NBOX_ROCE_GO_BACK_N_H

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief Sender side of a go-back-N QP: messages cut into packets, numbered by PSN.
 *
 * Packets are numbered 0, 1, 2, ... across the messages of the QP in posting order. The
 * sender keeps three marks: Una (lowest PSN not yet acknowledged), Next (the PSN it sends
 * next) and End (one past the last PSN posted); Una <= Next <= End. A NACK or a timeout sets
 * Next back to the first unacknowledged PSN, so everything from there is sent again.
 */
class NboxGoBackNSender
{
  public:
    /** What the NIC puts on the wire next. */
    struct Packet
    {
        uint32_t psn = 0;
        uint32_t payloadBytes = 0;
        bool lastOfMessage = false;
        uint64_t messageBytes = 0;   //!< the whole message's size, when lastOfMessage
        bool retransmission = false; //!< this PSN was sent before
    };

    /** `payloadPerPacket` payload bytes in every packet but a message's last. */
    explicit NboxGoBackNSender(uint32_t payloadPerPacket);

    /** Appends a message of `bytes` (> 0) payload bytes: ceil(bytes / payload) packets. */
    void PostMessage(uint64_t bytes);

    bool HasPacketToSend() const; //!< Next < End
    /** The packet at Next; Next advances by one. Requires HasPacketToSend(). */
    Packet TakeNextPacket();

    /**
     * Cumulative acknowledgement: every PSN below `expectedPsn` arrived. Returns true when it
     * acknowledged something new. If Next was behind (after a timeout), it moves up too.
     */
    bool Acknowledge(uint32_t expectedPsn);
    /** A NACK asking for `expectedPsn`: acknowledges below it and goes back to it. */
    void GoBackTo(uint32_t expectedPsn);
    /** Retransmission timeout: goes back to Una. */
    void GoBackToUnacknowledged();

    uint32_t GetUnacknowledged() const; //!< Una
    uint32_t GetNext() const;           //!< Next
    uint32_t GetEnd() const;            //!< End
    /** Sent but not acknowledged packets exist (Una < Next). */
    bool HasOutstanding() const;
    /** Every posted packet acknowledged (Una == End). */
    bool IsIdle() const;
    uint32_t GetPayloadPerPacket() const;

  private:
    struct Message
    {
        uint32_t firstPsn;
        uint32_t packets;
        uint64_t bytes;
    };

    /** Index in m_messages of the message holding `psn` (which must be in [Una, End)). */
    std::size_t FindMessage(uint32_t psn) const;
    /** Forgets messages whose every packet is acknowledged. */
    void DropAcknowledgedMessages();

    uint32_t m_payload;
    uint32_t m_una;
    uint32_t m_next;
    uint32_t m_end;
    uint32_t m_highestSent;         //!< one past the highest PSN ever sent
    std::deque<Message> m_messages; //!< messages not yet fully acknowledged
    std::size_t m_cursor;           //!< index of the message holding Next
};

/**
 * \ingroup nbox
 * \brief Receiver side of a go-back-N QP: accepts packets in PSN order, or in any order.
 *
 * In order (the RoCE NICs' classic receiver): the packet with the expected PSN is accepted; an
 * ACK is due every `ackInterval` accepted packets and at every message end. A packet beyond
 * the expected PSN is dropped and one NACK is due for the gap (no second NACK until the
 * expected packet arrives).
 *
 * Out of order (`acceptOutOfOrder`, for per-packet spraying: the receivers of AI fabrics that
 * spray place every packet where it belongs): a packet beyond the expected PSN is kept, never
 * NACKed (reordering is normal there; a loss is left to the sender's timeout); the expected
 * PSN then moves over every packet held, and ACKs are due as above, counted on that progress.
 *
 * Either way a message is delivered once every packet up to its last is in, in message order
 * (the PSN order of their last packets), and a packet below the expected PSN (a go-back-N
 * duplicate) is dropped, the first duplicate after progress answered with an ACK, so a
 * sender that timed out after its ACK was lost moves on.
 */
class NboxGoBackNReceiver
{
  public:
    /** What to do with one data packet. */
    struct Verdict
    {
        bool accept = false;
        bool sendAck = false;  //!< ACK carrying GetExpected()
        bool sendNack = false; //!< NACK carrying GetExpected()
        /** Messages this packet completed, oldest first: each one's size in bytes. */
        std::vector<uint64_t> delivered;
    };

    explicit NboxGoBackNReceiver(uint32_t ackInterval, bool acceptOutOfOrder = false);

    /** `messageBytes`: the message's size, carried by its last packet (0 on the others). */
    Verdict OnData(uint32_t psn, bool lastOfMessage, uint64_t messageBytes = 0);
    uint32_t GetExpected() const;

  private:
    uint32_t m_ackInterval;
    bool m_acceptOutOfOrder;
    /** Out of order: packets beyond the expected PSN, by PSN: their message's size if the
     * message's last (messages have at least one byte), else 0. */
    std::map<uint32_t, uint64_t> m_held;
    uint32_t m_expected;
    uint32_t m_sinceAck; //!< accepted packets since the last ACK
    bool m_nackSent;     //!< a NACK for the current gap went out
    bool m_dupAckSent;   //!< an ACK answered a duplicate since the last in-order packet
};

} // namespace ns3

#endif /* NBOX_ROCE_GO_BACK_N_H */
