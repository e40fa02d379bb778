#include "nbox-roce-nic.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRoceNic");

NS_OBJECT_ENSURE_REGISTERED(NboxRoceNic);

namespace
{

/** NCCL's QP timeout: 4.096 us x 2^NCCL_IB_TIMEOUT, whose default is 18 (NCCL
 * src/transport/net_ib.cc, NCCL_PARAM(IbTimeout, "IB_TIMEOUT", 18)). */
constexpr double kNcclQpTimeoutSeconds = 4.096e-6 * (1 << 18);

bool
IsValidCongestionControl(const std::string& name)
{
    return name == "dcqcn" || name == "hpcc" || name == "timely" || name == "none";
}

} // namespace

TypeId
NboxRoceNic::GetTypeId()
{
    // Defaults and their sources: the attribute texts and ns3-module/README.md ("The RoCE
    // path"); scenarios/README.md repeats them.
    static TypeId tid
        = TypeId("ns3::NboxRoceNic")
              .SetParent<Object>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxRoceNic>()
              .AddAttribute("Mtu",
                            "IP MTU of the host's links, bytes; payload per packet is the MTU "
                            "minus IPv4 20, UDP 8, BTH 12 and ICRC 4.",
                            UintegerValue(1500), MakeUintegerAccessor(&NboxRoceNic::m_mtu),
                            MakeUintegerChecker<uint32_t>(45, 65535))
              .AddAttribute("DataPriority",
                            "PFC priority of data packets (3: the RoCE traffic class of "
                            "NVIDIA's lossless RoCE configuration).",
                            UintegerValue(3), MakeUintegerAccessor(&NboxRoceNic::m_dataPriority),
                            MakeUintegerChecker<uint8_t>(0, 7))
              .AddAttribute("ControlPriority",
                            "PFC priority of ACK, NACK and CNP frames (6: NVIDIA NICs' default "
                            "CNP priority), so that pausing data does not hold them.",
                            UintegerValue(6), MakeUintegerAccessor(&NboxRoceNic::m_controlPriority),
                            MakeUintegerChecker<uint8_t>(0, 7))
              .AddAttribute("AckInterval",
                            "Data packets the receiver accepts before it acknowledges (and at "
                            "every message end). 16: coalesced ACKs cost under 0.3% of the "
                            "reverse link at MTU 1500 (HPCC's ns-3 model ACKs every packet).",
                            UintegerValue(16), MakeUintegerAccessor(&NboxRoceNic::m_ackInterval),
                            MakeUintegerChecker<uint32_t>(1))
              .AddAttribute("AcceptOutOfOrder",
                            "Whether the receiver keeps data packets that arrive ahead of a "
                            "gap (and NACKs none), as the NICs of fabrics that spray packets "
                            "over paths do; false: the classic RoCE receiver, which drops them "
                            "and NACKs the gap (NboxGoBackNReceiver).",
                            BooleanValue(false),
                            MakeBooleanAccessor(&NboxRoceNic::m_acceptOutOfOrder),
                            MakeBooleanChecker())
              .AddAttribute("CnpInterval",
                            "Shortest time between two CNPs of one QP (DCQCN's N, 50 us).",
                            TimeValue(MicroSeconds(50)),
                            MakeTimeAccessor(&NboxRoceNic::m_cnpInterval), MakeTimeChecker())
              .AddAttribute("RetransmissionTimeout",
                            "Time without acknowledgement progress and without sending after "
                            "which a QP with packets outstanding goes back to the first "
                            "unacknowledged one (tail losses, lost NACKs). Default: the QP "
                            "timeout NCCL programs, 4.096 us x 2^NCCL_IB_TIMEOUT with its "
                            "default 18 (1.074 s); a shorter one fires while PFC pauses or "
                            "DCQCN slows a QP between two ACKs.",
                            TimeValue(Seconds(kNcclQpTimeoutSeconds)),
                            MakeTimeAccessor(&NboxRoceNic::m_rto), MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("CongestionControl",
                            "Congestion control of every QP: dcqcn, hpcc, timely or none.",
                            StringValue("dcqcn"),
                            MakeStringAccessor(&NboxRoceNic::m_congestionControl),
                            MakeStringChecker())
              .AddAttribute("MinRate", "DCQCN: lowest rate of a QP, bits/s.", DoubleValue(100e6),
                            MakeDoubleAccessor(&NboxRoceNic::m_minRateBps),
                            MakeDoubleChecker<double>(1))
              .AddAttribute("G", "DCQCN: gain g of the alpha moving average.",
                            DoubleValue(1.0 / 16), MakeDoubleAccessor(&NboxRoceNic::m_g),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("AlphaUpdatePeriod",
                            "DCQCN: alpha decays by (1 - g) per period without a CNP (K).",
                            TimeValue(MicroSeconds(55)),
                            MakeTimeAccessor(&NboxRoceNic::m_alphaUpdatePeriod),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("RateIncreasePeriod", "DCQCN: the rate-increase timer (T).",
                            TimeValue(MicroSeconds(300)),
                            MakeTimeAccessor(&NboxRoceNic::m_rateIncreasePeriod),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute(
                  "ByteCounter", "DCQCN: bytes sent per byte-counter rate-increase event (B).",
                  UintegerValue(150000), MakeUintegerAccessor(&NboxRoceNic::m_byteCounter),
                  MakeUintegerChecker<uint64_t>(1))
              .AddAttribute("FastRecoverySteps",
                            "DCQCN: increase events spent in fast recovery (F).", UintegerValue(5),
                            MakeUintegerAccessor(&NboxRoceNic::m_fastRecoverySteps),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("Rai", "DCQCN: additive increase step, bits/s.", DoubleValue(50e6),
                            MakeDoubleAccessor(&NboxRoceNic::m_raiBps),
                            MakeDoubleChecker<double>(0))
              .AddAttribute("Rhai", "DCQCN: hyper increase step, bits/s.", DoubleValue(100e6),
                            MakeDoubleAccessor(&NboxRoceNic::m_rhaiBps),
                            MakeDoubleChecker<double>(0))
              .AddAttribute("ClampTargetRate",
                            "DCQCN: whether every CNP sets the target rate to the current rate "
                            "(true, the DCQCN paper's reaction point) or only one that comes "
                            "after the rate began to increase again (false, NVIDIA's "
                            "clamp_tgt_rate = 0, as HPCC's ns-3 model of it).",
                            BooleanValue(false),
                            MakeBooleanAccessor(&NboxRoceNic::m_clampTargetRate),
                            MakeBooleanChecker())
              .AddAttribute("TimelyAlpha",
                            "TIMELY: EWMA weight of a new RTT difference (0.875, HPCC's ns-3 "
                            "TIMELY).",
                            DoubleValue(0.875), MakeDoubleAccessor(&NboxRoceNic::m_timelyAlpha),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("TimelyBeta",
                            "TIMELY: multiplicative decrease factor (0.8, TIMELY paper).",
                            DoubleValue(0.8), MakeDoubleAccessor(&NboxRoceNic::m_timelyBeta),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("TimelyTLow",
                            "TIMELY: RTT below which the rate only grows (50 us, TIMELY paper).",
                            TimeValue(MicroSeconds(50)),
                            MakeTimeAccessor(&NboxRoceNic::m_timelyTLow), MakeTimeChecker())
              .AddAttribute("TimelyTHigh",
                            "TIMELY: RTT above which the rate falls by how far it is above "
                            "(500 us, TIMELY paper).",
                            TimeValue(MicroSeconds(500)),
                            MakeTimeAccessor(&NboxRoceNic::m_timelyTHigh), MakeTimeChecker())
              .AddAttribute("TimelyMinRtt",
                            "TIMELY: the RTT that normalises the gradient (20 us, TIMELY paper).",
                            TimeValue(MicroSeconds(20)),
                            MakeTimeAccessor(&NboxRoceNic::m_timelyMinRtt),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("TimelyDelta",
                            "TIMELY: additive step delta, bits/s; 5 delta after 5 increases in "
                            "a row (10 Mb/s, TIMELY paper).",
                            DoubleValue(10e6), MakeDoubleAccessor(&NboxRoceNic::m_timelyDeltaBps),
                            MakeDoubleChecker<double>(0))
              .AddAttribute("BaseRtt",
                            "HPCC: the base round trip T of every QP; 0 takes each QP's from "
                            "its path (the function the network helper sets: propagation both "
                            "ways plus a full data packet and an ACK serialised at every hop).",
                            TimeValue(Seconds(0)), MakeTimeAccessor(&NboxRoceNic::m_baseRtt),
                            MakeTimeChecker(Seconds(0)))
              .AddAttribute("HpccEta",
                            "HPCC: target utilisation eta of the bottleneck (0.95, HPCC paper).",
                            DoubleValue(0.95), MakeDoubleAccessor(&NboxRoceNic::m_hpccEta),
                            MakeDoubleChecker<double>(0, 1))
              .AddAttribute("HpccMaxStage",
                            "HPCC: additive-increase rounds before a multiplicative step "
                            "(maxStage, 5, HPCC paper).",
                            UintegerValue(5), MakeUintegerAccessor(&NboxRoceNic::m_hpccMaxStage),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("HpccRateAi",
                            "HPCC: additive increase W_AI as a rate, W_AI = rate x T, bits/s "
                            "(50 Mb/s: HPCC's ns-3 configuration; the paper sets W_AI = "
                            "W_init (1 - eta) / N for N flows, N = 100 at 100 Gb/s).",
                            DoubleValue(50e6), MakeDoubleAccessor(&NboxRoceNic::m_hpccRateAiBps),
                            MakeDoubleChecker<double>(0));
    return tid;
}

NboxRoceNic::NboxRoceNic()
    : m_mtu(1500)
    , m_dataPriority(3)
    , m_controlPriority(6)
    , m_ackInterval(16)
    , m_acceptOutOfOrder(false)
    , m_cnpInterval(MicroSeconds(50))
    , m_rto(Seconds(kNcclQpTimeoutSeconds))
    , m_congestionControl("dcqcn")
    , m_minRateBps(100e6)
    , m_g(1.0 / 16)
    , m_alphaUpdatePeriod(MicroSeconds(55))
    , m_rateIncreasePeriod(MicroSeconds(300))
    , m_byteCounter(150000)
    , m_fastRecoverySteps(5)
    , m_raiBps(50e6)
    , m_rhaiBps(100e6)
    , m_clampTargetRate(false)
    , m_baseRtt(Seconds(0))
    , m_hpccEta(0.95)
    , m_hpccMaxStage(5)
    , m_hpccRateAiBps(50e6)
    , m_timelyAlpha(0.875)
    , m_timelyBeta(0.8)
    , m_timelyTLow(MicroSeconds(50))
    , m_timelyTHigh(MicroSeconds(500))
    , m_timelyMinRtt(MicroSeconds(20))
    , m_timelyDeltaBps(10e6)
    , m_host(0)
{
    NS_LOG_FUNCTION(this);
}

NboxRoceNic::~NboxRoceNic()
{
    NS_LOG_FUNCTION(this);
}

void
NboxRoceNic::DoDispose()
{
    for (Port& port : m_ports)
    {
        Simulator::Cancel(port.wakeEvent);
        port.device->SetRoceReceiveCallback(NboxRoceNetDevice::RoceReceiveCallback());
        port.device->SetTxReadyCallback(NboxRoceNetDevice::TxReadyCallback());
        port.device = nullptr;
    }
    for (auto& [flowId, qp] : m_sendQps)
    {
        Simulator::Cancel(qp->rtoEvent);
    }
    m_ports.clear();
    m_sendQps.clear();
    m_recvQps.clear();
    m_delivered = DeliveredCallback();
    m_portSelector = nullptr;
    m_baseRttFunction = nullptr;
    Object::DoDispose();
}

void
NboxRoceNic::SetHostIndex(uint32_t host)
{
    m_host = host;
}

uint32_t
NboxRoceNic::GetHostIndex() const
{
    return m_host;
}

void
NboxRoceNic::AddPort(Ptr<NboxRoceNetDevice> device)
{
    NS_ABORT_MSG_UNLESS(device, "NboxRoceNic::AddPort: null device");
    device->SetRoceReceiveCallback(MakeCallback(&NboxRoceNic::HandleReceive, this));
    device->SetTxReadyCallback(MakeCallback(&NboxRoceNic::HandleTxReady, this));
    Port port;
    port.device = device;
    m_ports.push_back(port);
}

uint32_t
NboxRoceNic::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

Ptr<NboxRoceNetDevice>
NboxRoceNic::GetPort(uint32_t index) const
{
    return m_ports.at(index).device;
}

void
NboxRoceNic::SetPortSelector(PortSelector selector)
{
    m_portSelector = std::move(selector);
}

void
NboxRoceNic::SetBaseRttFunction(BaseRttFunction baseRtt)
{
    m_baseRttFunction = std::move(baseRtt);
}

void
NboxRoceNic::SetDeliveredCallback(DeliveredCallback cb)
{
    m_delivered = cb;
}

uint32_t
NboxRoceNic::GetPayloadBytes() const
{
    return NboxRoceHeader::GetDataPayloadPerMtu(m_mtu);
}

NboxDcqcnConfig
NboxRoceNic::DcqcnConfigFor(const Port& port) const
{
    NboxDcqcnConfig c;
    c.lineRateBps = static_cast<double>(port.device->GetDataRate().GetBitRate());
    c.minRateBps = std::min(m_minRateBps, c.lineRateBps);
    c.g = m_g;
    c.alphaUpdatePeriod = m_alphaUpdatePeriod;
    c.rateIncreasePeriod = m_rateIncreasePeriod;
    c.byteCounterBytes = m_byteCounter;
    c.fastRecoverySteps = m_fastRecoverySteps;
    c.raiBps = m_raiBps;
    c.rhaiBps = m_rhaiBps;
    c.clampTargetRate = m_clampTargetRate;
    return c;
}

std::unique_ptr<NboxRoceCongestionControl>
NboxRoceNic::MakeCongestionControl(const Port& port, uint32_t dstHost, uint32_t portIndex) const
{
    if (m_congestionControl == "dcqcn")
    {
        return std::make_unique<NboxDcqcnRateControl>(DcqcnConfigFor(port));
    }
    if (m_congestionControl == "hpcc")
    {
        NboxHpccConfig c;
        c.lineRateBps = static_cast<double>(port.device->GetDataRate().GetBitRate());
        c.baseRtt = m_baseRtt;
        if (c.baseRtt.IsZero())
        {
            NS_ABORT_MSG_UNLESS(m_baseRttFunction,
                                "NboxRoceNic: HPCC needs BaseRtt or a base-RTT function");
            c.baseRtt = m_baseRttFunction(dstHost, portIndex);
        }
        c.eta = m_hpccEta;
        c.maxStage = m_hpccMaxStage;
        c.rateAiBps = m_hpccRateAiBps;
        c.minRateBps = std::min(m_minRateBps, c.lineRateBps);
        return std::make_unique<NboxHpccWindowControl>(c);
    }
    if (m_congestionControl == "timely")
    {
        NboxTimelyConfig c;
        c.lineRateBps = static_cast<double>(port.device->GetDataRate().GetBitRate());
        c.minRateBps = std::min(m_minRateBps, c.lineRateBps);
        c.alpha = m_timelyAlpha;
        c.beta = m_timelyBeta;
        c.tLow = m_timelyTLow;
        c.tHigh = m_timelyTHigh;
        c.minRtt = m_timelyMinRtt;
        c.deltaBps = m_timelyDeltaBps;
        return std::make_unique<NboxTimelyRateControl>(c);
    }
    return nullptr;
}

void
NboxRoceNic::CreateQp(uint32_t flowId, uint32_t dstHost)
{
    NS_LOG_FUNCTION(this << flowId << dstHost);
    NS_ABORT_MSG_IF(m_sendQps.count(flowId), "NboxRoceNic: QP " << flowId << " exists");
    NS_ABORT_MSG_IF(m_ports.empty(), "NboxRoceNic: no port on host " << m_host);
    NS_ABORT_MSG_UNLESS(IsValidCongestionControl(m_congestionControl),
                        "NboxRoceNic: CongestionControl is '" << m_congestionControl
                                                              << "', expected dcqcn, hpcc or none");
    uint32_t port = 0;
    if (m_ports.size() > 1)
    {
        NS_ABORT_MSG_UNLESS(m_portSelector, "NboxRoceNic: several ports and no port selector");
        port = m_portSelector(dstHost, flowId);
        NS_ABORT_MSG_UNLESS(port < m_ports.size(), "NboxRoceNic: port selector out of range");
    }
    auto qp = std::make_unique<SendQp>();
    qp->flowId = flowId;
    qp->dstHost = dstHost;
    qp->port = port;
    qp->cc = MakeCongestionControl(m_ports[port], dstHost, port);
    const bool telemetry = qp->cc && qp->cc->WantsTelemetry();
    const uint32_t payload = GetPayloadBytes() - (telemetry ? NboxRoceHeader::kIntBytes : 0);
    NS_ABORT_MSG_IF(GetPayloadBytes() <= (telemetry ? NboxRoceHeader::kIntBytes : 0),
                    "NboxRoceNic: MTU " << m_mtu << " leaves no payload beside INT");
    qp->gbn = std::make_unique<NboxGoBackNSender>(payload);
    qp->fullPacketWireBytes = payload + NboxRoceHeader::kDataOverheadBytes
                            + (telemetry ? NboxRoceHeader::kIntBytes : 0);
    m_ports[port].qps.push_back(qp.get());
    m_sendQps.emplace(flowId, std::move(qp));
}

NboxRoceNic::SendQp&
NboxRoceNic::GetSendQp(uint32_t flowId)
{
    auto it = m_sendQps.find(flowId);
    NS_ABORT_MSG_IF(it == m_sendQps.end(),
                    "NboxRoceNic: no QP " << flowId << " on host " << m_host);
    return *it->second;
}

const NboxRoceNic::SendQp&
NboxRoceNic::GetSendQp(uint32_t flowId) const
{
    auto it = m_sendQps.find(flowId);
    NS_ABORT_MSG_IF(it == m_sendQps.end(),
                    "NboxRoceNic: no QP " << flowId << " on host " << m_host);
    return *it->second;
}

void
NboxRoceNic::PostSend(uint32_t flowId, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << flowId << bytes);
    SendQp& qp = GetSendQp(flowId);
    qp.gbn->PostMessage(bytes);
    Pump(qp.port);
}

uint32_t
NboxRoceNic::PortOfDevice(Ptr<NboxRoceNetDevice> device) const
{
    for (uint32_t i = 0; i < m_ports.size(); ++i)
    {
        if (m_ports[i].device == device)
        {
            return i;
        }
    }
    NS_ABORT_MSG("NboxRoceNic: a device that is not one of its ports");
    return 0;
}

void
NboxRoceNic::HandleTxReady(Ptr<NboxRoceNetDevice> device)
{
    Pump(PortOfDevice(device));
}

void
NboxRoceNic::ScheduleWake(uint32_t portIndex, Time when)
{
    Port& port = m_ports[portIndex];
    if (port.wakeEvent.IsRunning())
    {
        if (port.wakeTime <= when)
        {
            return;
        }
        port.wakeEvent.Cancel();
    }
    port.wakeTime = when;
    port.wakeEvent
        = Simulator::Schedule(when - Simulator::Now(), &NboxRoceNic::Pump, this, portIndex);
}

void
NboxRoceNic::Pump(uint32_t portIndex)
{
    Port& port = m_ports[portIndex];
    const Time now = Simulator::Now();
    // One packet waiting in the device keeps the wire busy (the device starts it the moment
    // the current frame ends and then asks for more); more would delay pauses and rate cuts.
    while (port.device->GetQueuedPackets(m_dataPriority) == 0
           && !port.device->IsPaused(m_dataPriority))
    {
        SendQp* chosen = nullptr;
        Time earliest = Time::Max();
        const std::size_t n = port.qps.size();
        for (std::size_t k = 0; k < n; ++k)
        {
            SendQp* qp = port.qps[(port.nextQp + k) % n];
            if (!qp->gbn->HasPacketToSend() || !WindowAllows(*qp))
            {
                continue; // a window-limited QP resumes when an ACK opens its window
            }
            if (qp->nextSendTime <= now)
            {
                chosen = qp;
                port.nextQp = (port.nextQp + k + 1) % n;
                break;
            }
            earliest = std::min(earliest, qp->nextSendTime);
        }
        if (chosen == nullptr)
        {
            if (earliest != Time::Max())
            {
                ScheduleWake(portIndex, earliest);
            }
            return;
        }
        SendDataPacket(port, *chosen);
    }
}

bool
NboxRoceNic::WindowAllows(const SendQp& qp) const
{
    if (!qp.cc)
    {
        return true;
    }
    const uint64_t inFlight = static_cast<uint64_t>(qp.gbn->GetNext() - qp.gbn->GetUnacknowledged())
                            * qp.fullPacketWireBytes;
    return inFlight < qp.cc->GetWindowBytes();
}

void
NboxRoceNic::SendDataPacket(Port& port, SendQp& qp)
{
    const Time now = Simulator::Now();
    const NboxGoBackNSender::Packet p = qp.gbn->TakeNextPacket();
    NboxRoceHeader h(NboxRoceHeader::kData);
    h.SetPriority(m_dataPriority);
    h.SetEcn(NboxRoceHeader::kEct0);
    h.SetSrcHost(m_host);
    h.SetDstHost(qp.dstHost);
    h.SetFlowId(qp.flowId);
    h.SetPsn(p.psn);
    if (p.lastOfMessage)
    {
        h.SetMessageEnd(p.messageBytes);
    }
    const bool telemetry = qp.cc && qp.cc->WantsTelemetry();
    h.SetTelemetry(telemetry);
    if (qp.cc && qp.cc->WantsTimestamps())
    {
        h.SetTimestamp(now);
    }
    Ptr<Packet> packet = Create<Packet>(p.payloadBytes);
    packet->AddHeader(h);
    if (telemetry)
    {
        packet->AddPacketTag(NboxIntTag()); // filled by the switches it crosses
    }
    const uint32_t wireBytes = packet->GetSize();

    ++m_stats.dataPacketsSent;
    if (p.retransmission)
    {
        ++m_stats.retransmittedPackets;
        m_stats.retransmittedBytes += p.payloadBytes;
    }
    if (qp.cc)
    {
        qp.cc->OnPacketSent(wireBytes, now);
        const double rate = qp.cc->GetRate();
        if (rate < static_cast<double>(port.device->GetDataRate().GetBitRate()))
        {
            // Truncated to the time resolution: the limiter never adds a gap at line rate.
            qp.nextSendTime = now + Seconds(wireBytes * 8.0 / rate);
        }
    }
    // Sending counts as activity: the timer is for tail losses and lost NACKs, not for a
    // QP whose own (DCQCN-limited) rate spaces its ACKs further apart than the timeout.
    qp.lastActivity = now;
    if (!qp.rtoEvent.IsRunning())
    {
        ArmRetransmissionTimer(qp);
    }
    port.device->Enqueue(packet, m_dataPriority);
}

void
NboxRoceNic::SendControl(uint32_t portIndex, NboxRoceHeader::Type type, uint32_t dstHost,
                         uint32_t flowId, uint32_t psn, const NboxRoceHeader* echo,
                         const NboxIntTag* telemetry)
{
    NboxRoceHeader h(type);
    h.SetPriority(m_controlPriority);
    h.SetSrcHost(m_host);
    h.SetDstHost(dstHost);
    h.SetFlowId(flowId);
    h.SetPsn(psn);
    h.SetTelemetry(telemetry != nullptr);
    if (echo && echo->HasTimestamp())
    {
        h.SetTimestamp(echo->GetTimestamp());
    }
    Ptr<Packet> packet = Create<Packet>(0);
    packet->AddHeader(h);
    if (telemetry)
    {
        packet->AddPacketTag(*telemetry);
    }
    m_ports[portIndex].device->Enqueue(packet, m_controlPriority);
}

void
NboxRoceNic::ArmRetransmissionTimer(SendQp& qp)
{
    qp.rtoEvent = Simulator::Schedule(qp.lastActivity + m_rto - Simulator::Now(),
                                      &NboxRoceNic::RetransmissionTimeout, this, qp.flowId);
}

void
NboxRoceNic::RetransmissionTimeout(uint32_t flowId)
{
    SendQp& qp = GetSendQp(flowId);
    if (!qp.gbn->HasOutstanding())
    {
        return; // everything sent was acknowledged; the next send re-arms the timer
    }
    const Time now = Simulator::Now();
    if (now < qp.lastActivity + m_rto)
    {
        ArmRetransmissionTimer(qp); // progress since the timer was set: wait the rest
        return;
    }
    NS_LOG_LOGIC("QP " << flowId << " timed out at PSN " << qp.gbn->GetUnacknowledged());
    ++m_stats.timeouts;
    qp.gbn->GoBackToUnacknowledged();
    qp.lastActivity = now;
    ArmRetransmissionTimer(qp);
    Pump(qp.port);
}

void
NboxRoceNic::HandleReceive(Ptr<NboxRoceNetDevice> device, Ptr<Packet> packet)
{
    NboxRoceHeader h;
    packet->PeekHeader(h);
    NS_ABORT_MSG_UNLESS(h.GetDstHost() == m_host, "NboxRoceNic on host "
                                                      << m_host << " got a packet for host "
                                                      << h.GetDstHost());
    switch (h.GetType())
    {
    case NboxRoceHeader::kData:
        ReceiveData(PortOfDevice(device), h, packet);
        break;
    case NboxRoceHeader::kAck:
        ReceiveAck(h, false, packet);
        break;
    case NboxRoceHeader::kNack:
        ReceiveAck(h, true, packet);
        break;
    case NboxRoceHeader::kCnp:
        ReceiveCnp(h);
        break;
    default:
        NS_ABORT_MSG("NboxRoceNic: unexpected packet type " << int(h.GetType()));
    }
}

void
NboxRoceNic::ReceiveData(uint32_t port, const NboxRoceHeader& h, Ptr<const Packet> packet)
{
    auto it = m_recvQps.find(h.GetFlowId());
    if (it == m_recvQps.end())
    {
        RecvQp qp;
        qp.srcHost = h.GetSrcHost();
        qp.port = port;
        qp.gbn = std::make_unique<NboxGoBackNReceiver>(m_ackInterval, m_acceptOutOfOrder);
        it = m_recvQps.emplace(h.GetFlowId(), std::move(qp)).first;
    }
    RecvQp& qp = it->second;
    const Time now = Simulator::Now();
    // Notification point: CE asks for a CNP, at most one per CnpInterval per QP.
    if (h.GetEcn() == NboxRoceHeader::kCe && (!qp.cnpSent || now >= qp.lastCnp + m_cnpInterval))
    {
        qp.cnpSent = true;
        qp.lastCnp = now;
        ++m_stats.cnpsSent;
        SendControl(qp.port, NboxRoceHeader::kCnp, qp.srcHost, h.GetFlowId(), 0, nullptr, nullptr);
    }
    const auto verdict = qp.gbn->OnData(h.GetPsn(), h.IsLastOfMessage(), h.GetMessageBytes());
    if (!verdict.accept)
    {
        ++m_stats.outOfOrderDropped;
    }
    // A packet with telemetry or a timestamp is acknowledged on its own (HPCC's receiver ACKs
    // every packet; TIMELY measures every RTT it can): its sender's window may be smaller than
    // AckInterval packets, and every record and sample counts.
    const bool ackEach = (h.HasTelemetry() || h.HasTimestamp()) && verdict.accept;
    if (verdict.sendAck || verdict.sendNack || ackEach)
    {
        const auto type = verdict.sendNack ? NboxRoceHeader::kNack : NboxRoceHeader::kAck;
        ++(verdict.sendNack ? m_stats.nacksSent : m_stats.acksSent);
        // An ACK echoes the telemetry (HPCC) and the send time (TIMELY) of the data packet it
        // answers.
        const bool ack = type == NboxRoceHeader::kAck;
        NboxIntTag telemetry;
        const bool echoTelemetry = ack && h.HasTelemetry() && packet->PeekPacketTag(telemetry);
        SendControl(qp.port, type, qp.srcHost, h.GetFlowId(), qp.gbn->GetExpected(),
                    ack ? &h : nullptr, echoTelemetry ? &telemetry : nullptr);
    }
    for (uint64_t bytes : verdict.delivered)
    {
        ++m_stats.messagesDelivered;
        if (!m_delivered.IsNull())
        {
            m_delivered(h.GetFlowId(), bytes);
        }
    }
}

void
NboxRoceNic::ReceiveAck(const NboxRoceHeader& h, bool nack, Ptr<const Packet> packet)
{
    SendQp& qp = GetSendQp(h.GetFlowId());
    const uint32_t before = qp.gbn->GetUnacknowledged();
    const uint32_t nextBefore = qp.gbn->GetNext();
    if (nack)
    {
        qp.gbn->GoBackTo(h.GetPsn());
    }
    else
    {
        qp.gbn->Acknowledge(h.GetPsn());
    }
    const uint32_t after = qp.gbn->GetUnacknowledged();
    if (after != before)
    {
        qp.lastActivity = Simulator::Now();
        if (qp.gbn->IsIdle())
        {
            Simulator::Cancel(qp.rtoEvent);
        }
    }
    if (qp.cc && !nack)
    {
        NboxIntTag telemetry;
        if (h.HasTelemetry())
        {
            packet->PeekPacketTag(telemetry);
        }
        qp.cc->OnAck(h.GetPsn(), qp.gbn->GetNext(), telemetry, Simulator::Now());
        if (h.HasTimestamp())
        {
            qp.cc->OnRttSample(Simulator::Now() - h.GetTimestamp(), h.GetPsn(), qp.gbn->GetNext(),
                               Simulator::Now());
        }
    }
    // A NACK rewinds the QP; an ACK may open the window of a QP that has one.
    const bool windowed = qp.cc && qp.cc->GetWindowBytes() != std::numeric_limits<uint64_t>::max();
    if (qp.gbn->GetNext() != nextBefore || (windowed && after != before))
    {
        Pump(qp.port);
    }
}

void
NboxRoceNic::ReceiveCnp(const NboxRoceHeader& h)
{
    SendQp& qp = GetSendQp(h.GetFlowId());
    ++m_stats.cnpsReceived;
    if (qp.cc)
    {
        // The cut spaces the packets after the next one (whose send time is already set).
        qp.cc->OnCnp(Simulator::Now());
        NS_LOG_LOGIC("QP " << qp.flowId << " CNP: rate " << qp.cc->GetRate());
    }
}

NboxRoceNicStats
NboxRoceNic::GetStats() const
{
    return m_stats;
}

double
NboxRoceNic::GetQpRate(uint32_t flowId) const
{
    const SendQp& qp = GetSendQp(flowId);
    if (qp.cc)
    {
        return qp.cc->GetRate();
    }
    return static_cast<double>(m_ports[qp.port].device->GetDataRate().GetBitRate());
}

uint64_t
NboxRoceNic::GetQpWindow(uint32_t flowId) const
{
    const SendQp& qp = GetSendQp(flowId);
    return qp.cc ? qp.cc->GetWindowBytes() : std::numeric_limits<uint64_t>::max();
}

uint32_t
NboxRoceNic::GetQpAckedPackets(uint32_t flowId) const
{
    return GetSendQp(flowId).gbn->GetUnacknowledged();
}

} // namespace ns3
