#include "nbox-switch-mmu.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxSwitchMmu");

NS_OBJECT_ENSURE_REGISTERED(NboxSwitchMmu);

TypeId
NboxSwitchMmu::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxSwitchMmu")
              .SetParent<Object>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxSwitchMmu>()
              .AddAttribute("BufferSize",
                            "Total packet buffer of the switch in bytes. Default 12 MiB: "
                            "Broadcom Trident II's buffer, the default of HPCC's ns-3 switch "
                            "MMU.",
                            UintegerValue(12 * 1024 * 1024),
                            MakeUintegerAccessor(&NboxSwitchMmu::m_bufferSize),
                            MakeUintegerChecker<uint64_t>(1))
              .AddAttribute("Reserve",
                            "Bytes guaranteed to each (ingress port, priority) before it draws "
                            "on the shared pool. Default 4 KiB, HPCC's per-queue reserve.",
                            UintegerValue(4 * 1024),
                            MakeUintegerAccessor(&NboxSwitchMmu::m_reserve),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("ReservedPriorities",
                            "Bit mask of the priorities whose (port, priority) queues get the "
                            "Reserve; the others draw on the shared pool from their first "
                            "byte. Default 0x48: priorities 3 and 6, NboxRoceNic's data and "
                            "control priorities, so that no buffer is set aside for classes "
                            "nothing uses.",
                            UintegerValue(0x48),
                            MakeUintegerAccessor(&NboxSwitchMmu::m_reservedMask),
                            MakeUintegerChecker<uint8_t>())
              .AddAttribute("PfcEnabled",
                            "Run the priorities in LosslessPriorities lossless: carve "
                            "headroom, send PFC pauses, never drop them. When false every "
                            "priority is lossy (egress-limit drops). Default true: RoCEv2 "
                            "fabrics are deployed lossless.",
                            BooleanValue(true), MakeBooleanAccessor(&NboxSwitchMmu::m_pfcEnabled),
                            MakeBooleanChecker())
              .AddAttribute("LosslessPriorities",
                            "Bit mask of the priorities PFC protects. Default 0x08 (priority "
                            "3): NVIDIA's RoCE configuration runs RoCE traffic lossless on "
                            "priority 3.",
                            UintegerValue(0x08),
                            MakeUintegerAccessor(&NboxSwitchMmu::m_losslessMask),
                            MakeUintegerChecker<uint8_t>())
              .AddAttribute("DynamicXoff",
                            "Xoff threshold = Alpha x free shared pool (dynamic threshold, "
                            "Choudhury and Hahne 1998, as in Broadcom switches); else "
                            "StaticXoff.",
                            BooleanValue(true), MakeBooleanAccessor(&NboxSwitchMmu::m_dynamicXoff),
                            MakeBooleanChecker())
              .AddAttribute("Alpha",
                            "Dynamic-threshold factor of ingress (PFC) accounting. Default "
                            "1/8, HPCC's default shift of 3 at NIC rate: one congested queue "
                            "holds at most alpha/(1+alpha) = 1/9 of the pool.",
                            DoubleValue(0.125), MakeDoubleAccessor(&NboxSwitchMmu::m_alpha),
                            MakeDoubleChecker<double>(0.0))
              .AddAttribute("StaticXoff",
                            "Xoff threshold in shared bytes per ingress queue when DynamicXoff "
                            "is false. Default 256 KiB (about 20 us at 100 Gb/s).",
                            UintegerValue(256 * 1024),
                            MakeUintegerAccessor(&NboxSwitchMmu::m_staticXoff),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("XonOffset",
                            "A paused queue resumes once its shared bytes are this far below "
                            "the xoff threshold (hysteresis). Default 3 KiB, HPCC's resume "
                            "offset: two 1500-byte frames.",
                            UintegerValue(3 * 1024),
                            MakeUintegerAccessor(&NboxSwitchMmu::m_xonOffset),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("EgressAlpha",
                            "Dynamic-threshold factor of lossy egress queues: limit = "
                            "EgressAlpha x free shared pool. Default 1 (Choudhury and Hahne's "
                            "usual choice: a queue alone may take half the pool).",
                            DoubleValue(1.0), MakeDoubleAccessor(&NboxSwitchMmu::m_egressAlpha),
                            MakeDoubleChecker<double>(0.0))
              .AddAttribute("EgressStaticLimit",
                            "When non-zero, a static egress limit in bytes for lossy queues "
                            "instead of the dynamic one. Default 0 (dynamic).",
                            UintegerValue(0),
                            MakeUintegerAccessor(&NboxSwitchMmu::m_egressStaticLimit),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("EcnKmin",
                            "Egress queue bytes above which marking starts (per port; "
                            "NboxRoceSwitch scales it with the port rate / 100 Gb/s). Default "
                            "400 KB: 100 KB at 25 Gb/s, the public RDMA models' value, scaled "
                            "to 100 Gb/s.",
                            UintegerValue(400000), MakeUintegerAccessor(&NboxSwitchMmu::m_ecnKmin),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("EcnKmax",
                            "Egress queue bytes above which every ECT packet is marked. "
                            "Default 1600 KB (400 KB at 25 Gb/s, scaled).",
                            UintegerValue(1600000), MakeUintegerAccessor(&NboxSwitchMmu::m_ecnKmax),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("EcnPmax",
                            "Marking probability at Kmax. Default 0.2, the public RDMA "
                            "models' value.",
                            DoubleValue(0.2), MakeDoubleAccessor(&NboxSwitchMmu::m_ecnPmax),
                            MakeDoubleChecker<double>(0.0, 1.0));
    return tid;
}

NboxSwitchMmu::NboxSwitchMmu()
    : m_bufferSize(0)
    , m_reserve(0)
    , m_reservedMask(0)
    , m_pfcEnabled(true)
    , m_losslessMask(0)
    , m_dynamicXoff(true)
    , m_alpha(0)
    , m_staticXoff(0)
    , m_xonOffset(0)
    , m_egressAlpha(0)
    , m_egressStaticLimit(0)
    , m_ecnKmin(0)
    , m_ecnKmax(0)
    , m_ecnPmax(0)
    , m_nPorts(0)
    , m_pool(0)
    , m_sharedUsed(0)
    , m_totalUsed(0)
    , m_peakTotalUsed(0)
    , m_uniform(CreateObject<UniformRandomVariable>())
{
    NS_LOG_FUNCTION(this);
}

NboxSwitchMmu::~NboxSwitchMmu()
{
    NS_LOG_FUNCTION(this);
}

uint64_t
NboxSwitchMmu::GetRequiredHeadroom(DataRate rate, Time delay, uint32_t ipMtu)
{
    const uint64_t maxFrame = static_cast<uint64_t>(ipMtu) + 14 + 4;
    // Bytes on the wire during one propagation delay, rounded up.
    const uint64_t bitsPerSecond = rate.GetBitRate();
    const uint64_t delayPs = static_cast<uint64_t>(delay.GetPicoSeconds());
    const uint64_t bitsInFlight = (bitsPerSecond / 1000 * delayPs + 999999999) / 1000000000;
    const uint64_t bytesInFlight = (bitsInFlight + 7) / 8;
    return 2 * bytesInFlight + 3 * maxFrame + NboxRoceHeader::kControlFrameBytes;
}

void
NboxSwitchMmu::SetNPorts(uint32_t nPorts)
{
    NS_LOG_FUNCTION(this << nPorts);
    m_nPorts = nPorts;
    const size_t queues = static_cast<size_t>(nPorts) * NboxRoceHeader::kNPriorities;
    m_headroom.assign(nPorts, 0);
    m_ingressBytes.assign(queues, 0);
    m_headroomUsed.assign(queues, 0);
    m_peakHeadroomUsed.assign(queues, 0);
    m_egressBytes.assign(queues, 0);
    m_paused.assign(queues, false);
    NS_ABORT_MSG_IF(m_ecnKmin > m_ecnKmax,
                    "NboxSwitchMmu: EcnKmin " << m_ecnKmin << " exceeds EcnKmax " << m_ecnKmax);
    m_kmin.assign(nPorts, m_ecnKmin);
    m_kmax.assign(nPorts, m_ecnKmax);
    m_sharedUsed = 0;
    m_totalUsed = 0;
    UpdatePool();
}

uint32_t
NboxSwitchMmu::AddPort(uint64_t headroom, uint64_t kmin, uint64_t kmax)
{
    NS_LOG_FUNCTION(this << headroom << kmin << kmax);
    NS_ABORT_MSG_IF(m_totalUsed > 0, "NboxSwitchMmu::AddPort while packets are buffered");
    NS_ABORT_MSG_IF(kmin > kmax, "NboxSwitchMmu: ECN Kmin " << kmin << " exceeds Kmax " << kmax);
    const uint32_t port = m_nPorts++;
    m_headroom.push_back(headroom);
    m_kmin.push_back(kmin);
    m_kmax.push_back(kmax);
    for (uint8_t p = 0; p < NboxRoceHeader::kNPriorities; ++p)
    {
        m_ingressBytes.push_back(0);
        m_headroomUsed.push_back(0);
        m_peakHeadroomUsed.push_back(0);
        m_egressBytes.push_back(0);
        m_paused.push_back(false);
    }
    UpdatePool();
    return port;
}

uint32_t
NboxSwitchMmu::GetNPorts() const
{
    return m_nPorts;
}

void
NboxSwitchMmu::SetHeadroom(uint32_t port, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << port << bytes);
    CheckPort(port);
    m_headroom[port] = bytes;
    UpdatePool();
}

uint64_t
NboxSwitchMmu::GetHeadroom(uint32_t port) const
{
    CheckPort(port);
    return m_headroom[port];
}

void
NboxSwitchMmu::SetEcnThresholds(uint32_t port, uint64_t kmin, uint64_t kmax)
{
    CheckPort(port);
    NS_ABORT_MSG_IF(kmin > kmax, "NboxSwitchMmu: ECN Kmin " << kmin << " exceeds Kmax " << kmax);
    m_kmin[port] = kmin;
    m_kmax[port] = kmax;
}

void
NboxSwitchMmu::UpdatePool()
{
    uint64_t carved = 0;
    for (uint8_t p = 0; p < NboxRoceHeader::kNPriorities; ++p)
    {
        carved += static_cast<uint64_t>(m_nPorts) * ReserveOf(p);
    }
    if (m_pfcEnabled)
    {
        uint32_t lossless = 0;
        for (uint8_t p = 0; p < NboxRoceHeader::kNPriorities; ++p)
        {
            lossless += IsLossless(p) ? 1 : 0;
        }
        for (uint64_t h : m_headroom)
        {
            carved += h * lossless;
        }
    }
    if (carved > m_bufferSize)
    {
        // An exception, not an abort: a builder can name the scenario key that caused it.
        std::ostringstream what;
        what << "switch buffer too small: " << m_nPorts << " ports need " << carved
             << " bytes of reserve and PFC headroom, more than BufferSize (" << m_bufferSize
             << " bytes)";
        throw std::invalid_argument(what.str());
    }
    m_pool = m_bufferSize - carved;
}

bool
NboxSwitchMmu::IsLossless(uint8_t prio) const
{
    return m_pfcEnabled && prio < NboxRoceHeader::kNPriorities && ((m_losslessMask >> prio) & 1u);
}

size_t
NboxSwitchMmu::Index(uint32_t port, uint8_t prio) const
{
    return static_cast<size_t>(port) * NboxRoceHeader::kNPriorities + prio;
}

void
NboxSwitchMmu::CheckPort(uint32_t port) const
{
    NS_ABORT_MSG_IF(port >= m_nPorts, "NboxSwitchMmu: port " << port << " does not exist ("
                                                             << m_nPorts
                                                             << " ports; call SetNPorts first)");
}

uint64_t
NboxSwitchMmu::ReserveOf(uint8_t prio) const
{
    return ((m_reservedMask >> prio) & 1u) ? m_reserve : 0;
}

uint64_t
NboxSwitchMmu::SharedPart(uint8_t prio, uint64_t ingressBytes) const
{
    const uint64_t reserve = ReserveOf(prio);
    return ingressBytes > reserve ? ingressBytes - reserve : 0;
}

uint64_t
NboxSwitchMmu::GetXoffThreshold() const
{
    if (!m_dynamicXoff)
    {
        return m_staticXoff;
    }
    return static_cast<uint64_t>(m_alpha * static_cast<double>(m_pool - m_sharedUsed));
}

uint64_t
NboxSwitchMmu::GetEgressLimit() const
{
    if (m_egressStaticLimit > 0)
    {
        return m_egressStaticLimit;
    }
    return static_cast<uint64_t>(m_egressAlpha * static_cast<double>(m_pool - m_sharedUsed));
}

NboxSwitchMmu::Verdict
NboxSwitchMmu::CheckAdmission(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes) const
{
    CheckPort(inPort);
    CheckPort(outPort);
    const size_t in = Index(inPort, prio);
    const uint64_t ingress = m_ingressBytes[in];
    const uint64_t sharedNeeded = SharedPart(prio, ingress + bytes) - SharedPart(prio, ingress);
    const bool poolHasRoom = m_sharedUsed + sharedNeeded <= m_pool;

    if (IsLossless(prio))
    {
        if (sharedNeeded == 0)
        {
            return ADMIT; // fits in the reserve
        }
        if (poolHasRoom && SharedPart(prio, ingress + bytes) <= GetXoffThreshold())
        {
            return ADMIT;
        }
        return m_headroomUsed[in] + bytes <= m_headroom[inPort] ? ADMIT : DROP_HEADROOM_FULL;
    }

    if (!poolHasRoom)
    {
        return DROP_NO_BUFFER;
    }
    if (m_egressBytes[Index(outPort, prio)] + bytes > GetEgressLimit())
    {
        return DROP_EGRESS_LIMIT;
    }
    return ADMIT;
}

void
NboxSwitchMmu::Admit(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes)
{
    NS_LOG_FUNCTION(this << inPort << outPort << unsigned(prio) << bytes);
    const size_t in = Index(inPort, prio);
    const uint64_t ingress = m_ingressBytes[in];
    const uint64_t sharedNeeded = SharedPart(prio, ingress + bytes) - SharedPart(prio, ingress);
    const bool toShared
        = sharedNeeded == 0
       || (m_sharedUsed + sharedNeeded <= m_pool
           && (!IsLossless(prio) || SharedPart(prio, ingress + bytes) <= GetXoffThreshold()));
    if (toShared)
    {
        m_ingressBytes[in] += bytes;
        m_sharedUsed += sharedNeeded;
    }
    else
    {
        NS_ABORT_MSG_UNLESS(IsLossless(prio), "NboxSwitchMmu::Admit without admission");
        m_headroomUsed[in] += bytes;
        m_peakHeadroomUsed[in] = std::max(m_peakHeadroomUsed[in], m_headroomUsed[in]);
    }
    m_egressBytes[Index(outPort, prio)] += bytes;
    m_totalUsed += bytes;
    m_peakTotalUsed = std::max(m_peakTotalUsed, m_totalUsed);
}

void
NboxSwitchMmu::Release(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes)
{
    NS_LOG_FUNCTION(this << inPort << outPort << unsigned(prio) << bytes);
    const size_t in = Index(inPort, prio);
    const size_t out = Index(outPort, prio);
    NS_ABORT_MSG_IF(m_egressBytes[out] < bytes || m_totalUsed < bytes,
                    "NboxSwitchMmu::Release of bytes never admitted");
    const uint64_t fromHeadroom = std::min<uint64_t>(m_headroomUsed[in], bytes);
    m_headroomUsed[in] -= fromHeadroom;
    const uint64_t rest = bytes - fromHeadroom;
    const uint64_t ingress = m_ingressBytes[in];
    NS_ABORT_MSG_IF(ingress < rest, "NboxSwitchMmu::Release of bytes never admitted");
    m_sharedUsed -= SharedPart(prio, ingress) - SharedPart(prio, ingress - rest);
    m_ingressBytes[in] = ingress - rest;
    m_egressBytes[out] -= bytes;
    m_totalUsed -= bytes;
}

bool
NboxSwitchMmu::ShouldPause(uint32_t inPort, uint8_t prio) const
{
    CheckPort(inPort);
    const size_t in = Index(inPort, prio);
    if (!IsLossless(prio) || m_paused[in])
    {
        return false;
    }
    return m_headroomUsed[in] > 0 || SharedPart(prio, m_ingressBytes[in]) >= GetXoffThreshold();
}

bool
NboxSwitchMmu::ShouldResume(uint32_t inPort, uint8_t prio) const
{
    CheckPort(inPort);
    const size_t in = Index(inPort, prio);
    if (!m_paused[in] || m_headroomUsed[in] > 0)
    {
        return false;
    }
    const uint64_t shared = SharedPart(prio, m_ingressBytes[in]);
    return shared == 0 || shared + m_xonOffset <= GetXoffThreshold();
}

void
NboxSwitchMmu::SetPaused(uint32_t inPort, uint8_t prio, bool paused)
{
    CheckPort(inPort);
    m_paused[Index(inPort, prio)] = paused;
}

bool
NboxSwitchMmu::IsPaused(uint32_t inPort, uint8_t prio) const
{
    CheckPort(inPort);
    return m_paused[Index(inPort, prio)];
}

double
NboxSwitchMmu::GetEcnMarkProbability(uint32_t outPort, uint8_t prio) const
{
    CheckPort(outPort);
    const uint64_t q = m_egressBytes[Index(outPort, prio)];
    const uint64_t kmin = m_kmin[outPort];
    const uint64_t kmax = m_kmax[outPort];
    if (q <= kmin)
    {
        return 0.0;
    }
    if (q > kmax)
    {
        return 1.0;
    }
    return m_ecnPmax * static_cast<double>(q - kmin) / static_cast<double>(kmax - kmin);
}

bool
NboxSwitchMmu::DecideEcnMark(uint32_t outPort, uint8_t prio)
{
    const double p = GetEcnMarkProbability(outPort, prio);
    if (p <= 0.0)
    {
        return false; // no draw: marking-free runs use no random numbers
    }
    if (p >= 1.0)
    {
        return true;
    }
    return m_uniform->GetValue() < p;
}

int64_t
NboxSwitchMmu::AssignStreams(int64_t stream)
{
    m_uniform->SetStream(stream);
    return 1;
}

uint64_t
NboxSwitchMmu::GetSharedPoolSize() const
{
    return m_pool;
}

uint64_t
NboxSwitchMmu::GetSharedUsed() const
{
    return m_sharedUsed;
}

uint64_t
NboxSwitchMmu::GetIngressBytes(uint32_t inPort, uint8_t prio) const
{
    CheckPort(inPort);
    return m_ingressBytes[Index(inPort, prio)];
}

uint64_t
NboxSwitchMmu::GetIngressSharedBytes(uint32_t inPort, uint8_t prio) const
{
    return SharedPart(prio, GetIngressBytes(inPort, prio));
}

uint64_t
NboxSwitchMmu::GetHeadroomUsed(uint32_t inPort, uint8_t prio) const
{
    CheckPort(inPort);
    return m_headroomUsed[Index(inPort, prio)];
}

uint64_t
NboxSwitchMmu::GetPeakHeadroomUsed(uint32_t inPort, uint8_t prio) const
{
    CheckPort(inPort);
    return m_peakHeadroomUsed[Index(inPort, prio)];
}

uint64_t
NboxSwitchMmu::GetEgressBytes(uint32_t outPort, uint8_t prio) const
{
    CheckPort(outPort);
    return m_egressBytes[Index(outPort, prio)];
}

uint64_t
NboxSwitchMmu::GetTotalUsed() const
{
    return m_totalUsed;
}

uint64_t
NboxSwitchMmu::GetPeakTotalUsed() const
{
    return m_peakTotalUsed;
}

} // namespace ns3
