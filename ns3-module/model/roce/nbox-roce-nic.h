/*
 * A RoCEv2 NIC: reliable-connection queue pairs over NboxRoceNetDevice ports, with per-QP
 * rate limiting by DCQCN, go-back-N loss recovery and CNP generation.
 */
#ifndef NBOX_ROCE_NIC_H
#define NBOX_ROCE_NIC_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nbox-dcqcn.h"
#include "ns3/nbox-hpcc.h"
#include "ns3/nbox-roce-congestion-control.h"
#include "ns3/nbox-roce-go-back-n.h"
#include "ns3/nbox-roce-net-device.h"
#include "ns3/nbox-timely.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/** Counters of one NIC (sender and receiver sides together). */
struct NboxRoceNicStats
{
    uint64_t dataPacketsSent = 0;      //!< first transmissions and retransmissions
    uint64_t retransmittedPackets = 0; //!< data packets with a PSN sent before
    uint64_t retransmittedBytes = 0;   //!< their payload bytes
    uint64_t acksSent = 0;
    uint64_t nacksSent = 0;
    uint64_t cnpsSent = 0;
    uint64_t cnpsReceived = 0;
    uint64_t timeouts = 0;          //!< retransmission timeouts that went back
    uint64_t outOfOrderDropped = 0; //!< data packets dropped by the receiver (out of order or
                                    //!< duplicate)
    uint64_t messagesDelivered = 0;
};

/**
 * \ingroup nbox
 * \brief The RDMA NIC of one host (aggregated to its Node), reliable connections only.
 *
 * A QP is named by a flow id unique in the network; the sending NIC creates it with
 * CreateQp, the receiving NIC learns it from the first packet. Messages posted on a QP leave
 * in order, cut into packets of GetPayloadBytes() (IP MTU - IPv4 20 - UDP 8 - BTH 12 -
 * ICRC 4), all carrying ECT(0) on priority DataPriority.
 *
 * Transmission is pulled: a port keeps at most one data packet queued in its device (the one
 * being serialised aside), and takes the next one when the device reports it is ready, so a
 * PFC pause or a rate cut acts on the very next packet. Among the QPs of a port that have a
 * packet and whose rate limiter allows it, the port serves them round robin. The rate limiter
 * spaces a QP's packets by wire size / current rate (no limit at line rate).
 *
 * Receiver: go-back-N (NboxGoBackNReceiver): ACK every AckInterval packets and at message
 * ends, one NACK per gap; ACK, NACK and CNP travel on ControlPriority as 64-byte frames. A CE
 * mark on a data packet makes the receiver (DCQCN's notification point) send a CNP, at most
 * one per QP per CnpInterval. Sender: go-back-N on NACK, and after RetransmissionTimeout
 * without acknowledgement progress and without sending while packets are outstanding (a
 * tail loss, or a lost NACK once the QP has nothing new to send).
 *
 * Congestion control (attribute CongestionControl), one NboxRoceCongestionControl per QP:
 * "dcqcn", DCQCN's reaction point (NboxDcqcnRateControl) sets the QP's rate from CNPs; "hpcc",
 * HPCC (NboxHpccWindowControl) sets a window and a rate from the in-band telemetry its ACKs
 * echo: its data packets carry an INT block (NboxRoceHeader::kIntBytes, so their payload is
 * that much smaller) that NboxRoceSwitch ports with StampTelemetry fill, and the receiver
 * acknowledges each of them, whatever AckInterval, copying the block into the ACK; "none", every QP
 * sends at line rate and the fabric relies on PFC; "timely", TIMELY (NboxTimelyRateControl)
 * sets a rate from the round trips its ACKs measure: its data packets carry their send time,
 * which the receiver echoes in an ACK per packet. A QP sends while its wire bytes in flight
 * (packets sent and not acknowledged, each counted as a full one) stay below the window, when it
 * has one. HPCC needs each QP's base round trip: attribute BaseRtt, or, when it is 0, the base-RTT
 * function the network helper sets from the QP's path (SetBaseRttFunction).
 *
 * Multi-homed hosts (a GPU with an NVLink port and a NIC port) have several ports; the port
 * of a QP is chosen once, at CreateQp, by the port selector (the network helper sets it from
 * the topology's routes).
 */
class NboxRoceNic : public Object
{
  public:
    /** A message of `bytes` on QP `flowId` has fully arrived at this NIC. */
    using DeliveredCallback = Callback<void, uint32_t, uint64_t>;
    /** Port index (in AddPort order) that QP `flowId` from this host to `dstHost` uses. */
    using PortSelector = std::function<uint32_t(uint32_t dstHost, uint32_t flowId)>;
    /** The base round trip of a QP to `dstHost` leaving through `port` (no queues). */
    using BaseRttFunction = std::function<Time(uint32_t dstHost, uint32_t port)>;

    static TypeId GetTypeId();
    NboxRoceNic();
    ~NboxRoceNic() override;

    /** This NIC's host index (the topology's), written into every packet it sends. */
    void SetHostIndex(uint32_t host);
    uint32_t GetHostIndex() const;
    /** Adds a port; the NIC takes the device's receive and tx-ready callbacks. */
    void AddPort(Ptr<NboxRoceNetDevice> device);
    uint32_t GetNPorts() const;
    Ptr<NboxRoceNetDevice> GetPort(uint32_t index) const;
    /** Needed when the NIC has more than one port. */
    void SetPortSelector(PortSelector selector);
    /** Where HPCC takes a QP's base RTT from when attribute BaseRtt is 0. */
    void SetBaseRttFunction(BaseRttFunction baseRtt);

    /** Opens sending QP `flowId` towards `dstHost`. Aborts if the id is in use here. */
    void CreateQp(uint32_t flowId, uint32_t dstHost);
    /** Posts a message of `bytes` (> 0) on sending QP `flowId`. */
    void PostSend(uint32_t flowId, uint64_t bytes);
    /** Called for every message that completes at this NIC as a receiver. */
    void SetDeliveredCallback(DeliveredCallback cb);

    /** Payload bytes per data packet (an HPCC QP's are kIntBytes fewer). */
    uint32_t GetPayloadBytes() const;
    NboxRoceNicStats GetStats() const;
    /** Current pacing rate of sending QP `flowId` (line rate without congestion control),
     * bits/s. */
    double GetQpRate(uint32_t flowId) const;
    /** Window of sending QP `flowId` in wire bytes (the maximum without one). */
    uint64_t GetQpWindow(uint32_t flowId) const;
    /** Packets of sending QP `flowId` acknowledged so far (its first unacknowledged PSN). */
    uint32_t GetQpAckedPackets(uint32_t flowId) const;

  protected:
    void DoDispose() override;

  private:
    struct SendQp
    {
        uint32_t flowId = 0;
        uint32_t dstHost = 0;
        uint32_t port = 0;
        std::unique_ptr<NboxGoBackNSender> gbn;
        std::unique_ptr<NboxRoceCongestionControl> cc; //!< null without congestion control
        uint32_t fullPacketWireBytes = 0;              //!< what a packet in flight counts
        Time nextSendTime;                             //!< rate limiter
        Time lastActivity;                             //!< last new ACK or packet sent
        EventId rtoEvent;
    };

    struct RecvQp
    {
        uint32_t srcHost = 0;
        uint32_t port = 0; //!< where its ACKs, NACKs and CNPs leave
        std::unique_ptr<NboxGoBackNReceiver> gbn;
        bool cnpSent = false;
        Time lastCnp;
    };

    struct Port
    {
        Ptr<NboxRoceNetDevice> device;
        std::vector<SendQp*> qps; //!< round-robin order (creation order)
        std::size_t nextQp = 0;   //!< where the round robin resumes
        EventId wakeEvent;        //!< a rate-limited QP becomes eligible
        Time wakeTime;
    };

    void HandleReceive(Ptr<NboxRoceNetDevice> device, Ptr<Packet> packet);
    void HandleTxReady(Ptr<NboxRoceNetDevice> device);
    void ReceiveData(uint32_t port, const NboxRoceHeader& header, Ptr<const Packet> packet);
    void ReceiveAck(const NboxRoceHeader& header, bool nack, Ptr<const Packet> packet);
    void ReceiveCnp(const NboxRoceHeader& header);
    /** Queues data packets on `port` while its device takes them. */
    void Pump(uint32_t port);
    void SendDataPacket(Port& port, SendQp& qp);
    /** An ACK answering data header `echo` (not null) echoes its send time, if it has one, and
     * `telemetry` (not null: the data packet's INT record). */
    void SendControl(uint32_t port, NboxRoceHeader::Type type, uint32_t dstHost, uint32_t flowId,
                     uint32_t psn, const NboxRoceHeader* echo, const NboxIntTag* telemetry);
    /** Whether `qp` may send now as far as its window goes. */
    bool WindowAllows(const SendQp& qp) const;
    std::unique_ptr<NboxRoceCongestionControl> MakeCongestionControl(const Port& port,
                                                                     uint32_t dstHost,
                                                                     uint32_t portIndex) const;
    void ArmRetransmissionTimer(SendQp& qp);
    void RetransmissionTimeout(uint32_t flowId);
    void ScheduleWake(uint32_t port, Time when);
    uint32_t PortOfDevice(Ptr<NboxRoceNetDevice> device) const;
    SendQp& GetSendQp(uint32_t flowId);
    const SendQp& GetSendQp(uint32_t flowId) const;
    NboxDcqcnConfig DcqcnConfigFor(const Port& port) const;

    // Attributes
    uint32_t m_mtu;
    uint8_t m_dataPriority;
    uint8_t m_controlPriority;
    uint32_t m_ackInterval;
    bool m_acceptOutOfOrder;
    Time m_cnpInterval;
    Time m_rto;
    std::string m_congestionControl; //!< "dcqcn", "hpcc", "timely" or "none"
    double m_minRateBps;
    double m_g;
    Time m_alphaUpdatePeriod;
    Time m_rateIncreasePeriod;
    uint64_t m_byteCounter;
    uint32_t m_fastRecoverySteps;
    double m_raiBps;
    double m_rhaiBps;
    bool m_clampTargetRate;
    Time m_baseRtt; //!< HPCC; 0: from m_baseRttFunction
    double m_hpccEta;
    uint32_t m_hpccMaxStage;
    double m_hpccRateAiBps;
    double m_timelyAlpha;
    double m_timelyBeta;
    Time m_timelyTLow;
    Time m_timelyTHigh;
    Time m_timelyMinRtt;
    double m_timelyDeltaBps;

    uint32_t m_host;
    std::vector<Port> m_ports;
    PortSelector m_portSelector;
    BaseRttFunction m_baseRttFunction;
    std::map<uint32_t, std::unique_ptr<SendQp>> m_sendQps; //!< by flow id
    std::map<uint32_t, RecvQp> m_recvQps;                  //!< by flow id
    DeliveredCallback m_delivered;
    NboxRoceNicStats m_stats;
};

} // namespace ns3

#endif /* NBOX_ROCE_NIC_H */
