/*
 * The host side of TCP Small Queues: tells each NboxTcpSocket when a data segment it sent has
 * left the host (Linux frees the skb on TX completion and calls tcp_wfree(), which wakes the
 * socket). See nbox-tcp-socket.h for the rule.
 *
 * A socket marks each data segment with a small packet tag (its index here and the segment's
 * payload bytes) as it hands the segment to IP; the host's devices report the end of each
 * transmission and the queue discs their drops, and the tag names the socket to tell. Packet
 * uids cannot serve: every segment cut from one application write shares the write's uid.
 */
#ifndef NBOX_TCP_SMALL_QUEUES_H
#define NBOX_TCP_SMALL_QUEUES_H

#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class NboxTcpSocket;
class Node;
class Packet;
class QueueDiscItem;

class NboxTcpSmallQueues : public Object
{
  public:
    static TypeId GetTypeId();
    NboxTcpSmallQueues();

    /**
     * Aggregates a new NboxTcpSmallQueues to `node` and watches every device of the node (the
     * end of each transmission, and drops) and the root queue disc on each device (drops).
     * Call once the node's devices and queue discs are installed.
     */
    static Ptr<NboxTcpSmallQueues> Install(Ptr<Node> node);

    /** Makes `socket` known; returns the index its segments' tags carry. */
    uint32_t Register(Ptr<NboxTcpSocket> socket);

    /** Tags `segment` (`bytes` of payload) as socket `index`'s, on its way down to IP. */
    void Track(Ptr<const Packet> segment, uint32_t index, uint32_t bytes) const;

  protected:
    void DoDispose() override;

  private:
    /** A packet left the host (transmitted or dropped): tell its socket, if it has one. */
    void Release(Ptr<const Packet> packet);
    void ReleaseItem(Ptr<const QueueDiscItem> item);

    std::vector<Ptr<NboxTcpSocket>> m_sockets; //!< by index
};

} // namespace ns3

#endif /* NBOX_TCP_SMALL_QUEUES_H */
