/*
 * NboxTransport over RoCEv2: one reliable-connection QP per (source rank, destination rank,
 * channel), carried by the NboxRoceNic of each host.
 */
#ifndef NBOX_ROCE_TRANSPORT_H
#define NBOX_ROCE_TRANSPORT_H

#include "ns3/nbox-network.h"
#include "ns3/nbox-roce-nic.h"
#include "ns3/nbox-transport.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief Moves messages between ranks over RoCEv2 QPs (NboxRoceNic).
 *
 * Connection (a, b, c) is QP number k (its flow id), k counting connections in the order
 * they were first asked for, on the NIC of a's host towards b's host. Connection setup takes
 * no simulated time: RDMA QPs are set up out of band (NCCL exchanges QP numbers over its
 * bootstrap sockets during communicator init, which nbox does not time, as on the TCP path
 * where the job starts once connected). So WhenAllConnected calls back at once.
 *
 * A message's `delivered` fires when the receiving NIC has accepted its last packet in
 * order. Statistics: retransmissions are data packets sent again (go-back-N), their payload
 * is retransmittedBytes. The network must have been built by NboxRoceNetworkHelper (every
 * host Node carries a NboxRoceNic). Ranks sharing a host are refused, as on the TCP path.
 */
class NboxRoceTransport : public NboxTransport
{
  public:
    static TypeId GetTypeId();
    NboxRoceTransport();
    NboxRoceTransport(Ptr<NboxNetwork> network, const std::vector<int>& rankToHost);
    ~NboxRoceTransport() override;

    /**
     * Uses `network`, with rank r on host rankToHost[r]. Call once, before Connect or Send.
     * Throws std::invalid_argument when a rank names a host the network does not have or a
     * host has no NboxRoceNic.
     */
    void Setup(Ptr<NboxNetwork> network, const std::vector<int>& rankToHost);

    /** Throws std::invalid_argument for an unknown rank or two ranks on one host. */
    void Connect(uint32_t srcRank, uint32_t dstRank, uint32_t channel) override;
    void WhenAllConnected(std::function<void()> ready) override;
    /** Opens the connection if needed. Throws std::invalid_argument when bytes == 0. */
    void Send(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint64_t bytes,
              std::function<void()> delivered) override;
    NboxTransportStats GetStats() const override;

    /** NIC counters summed over every host. */
    NboxRoceNicStats GetNicStats() const;
    /** The flow id (QP) of connection (src, dst, channel); throws if it is not open. */
    uint32_t GetFlowId(uint32_t srcRank, uint32_t dstRank, uint32_t channel) const;

  protected:
    void DoDispose() override;

  private:
    struct Message
    {
        uint64_t bytes;
        std::function<void()> delivered;
    };

    struct Connection
    {
        uint32_t srcHost = 0;
        uint32_t dstHost = 0;
        std::deque<Message> inFlight;
    };

    using ConnectionKey = std::tuple<uint32_t, uint32_t, uint32_t>;

    uint32_t HostOf(uint32_t rank) const;
    Ptr<NboxRoceNic> NicOf(uint32_t host) const;
    uint32_t GetOrOpen(uint32_t srcRank, uint32_t dstRank, uint32_t channel);
    void HandleDelivered(uint32_t flowId, uint64_t bytes);

    Ptr<NboxNetwork> m_network;
    std::vector<uint32_t> m_rankToHost;
    std::map<ConnectionKey, uint32_t> m_flowIds; //!< connection -> flow id
    std::vector<Connection> m_connections;       //!< by flow id
    std::vector<bool> m_listening;               //!< by host: delivered callback set
    NboxTransportStats m_stats;
};

} // namespace ns3

#endif /* NBOX_ROCE_TRANSPORT_H */
