/*
 * The memory management unit of a shared-buffer switch: which packet may take buffer, when
 * an ingress queue must pause its upstream (PFC), and how likely a packet is to be ECN
 * marked.
 */
#ifndef NBOX_SWITCH_MMU_H
#define NBOX_SWITCH_MMU_H

#include "ns3/data-rate.h"
#include "ns3/nbox-roce-header.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"

#include <array>
#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief Shared-buffer accounting, PFC thresholds and RED-style ECN of one switch.
 *
 * The model follows the Broadcom-style MMU used by public RDMA simulators (HPCC's ns-3
 * model, SimAI), written from their published descriptions:
 *
 * Buffer. BufferSize bytes are carved into
 *   - a reserve of Reserve bytes per (port, priority) for the priorities in
 *     ReservedPriorities (the others have none);
 *   - a PFC headroom per (port, lossless priority) (SetHeadroom; only when PfcEnabled);
 *   - the shared pool: whatever is left (GetSharedPoolSize).
 *
 * Ingress accounting per (in port, priority) decides PFC. A packet of s bytes arriving on
 * (i, p) whose ingress bytes I (headroom not included) would exceed the reserve R takes
 * min(s, I + s - R) bytes of the shared pool, if that keeps the queue's shared bytes at or
 * below the xoff threshold T and the pool is not exhausted; else, on a lossless priority, it
 * goes whole into the (i, p) headroom; if the headroom is full too, it is dropped.
 *   T = Alpha x (pool - shared bytes used by all queues)   (dynamic threshold, the default)
 *   T = StaticXoff                                          (when DynamicXoff is false)
 * PFC: (i, p) needs a pause when its headroom holds bytes or its shared bytes reach T; a
 * paused (i, p) may resume when its headroom is empty and its shared bytes are 0 or at most
 * T - XonOffset.
 *
 * Egress accounting per (out port, priority) decides drops on lossy priorities (those not
 * lossless, or all when PFC is off): a packet is dropped when it would push the egress queue
 * above EgressAlpha x (pool - shared used) (or EgressStaticLimit), or when it fits neither the
 * reserve nor the pool. Lossless priorities have no egress limit: PFC bounds them.
 *
 * ECN (DCQCN's RED marking): a packet arriving at egress queue (o, p) holding q bytes is
 * marked CE with probability 0 for q <= Kmin, Pmax (q - Kmin) / (Kmax - Kmin) for
 * Kmin < q <= Kmax, 1 above Kmax; thresholds per port (SetEcnThresholds).
 *
 * Releasing a packet frees its bytes from the ingress headroom first, then from the shared
 * pool, then from the reserve, as when it was admitted.
 */
class NboxSwitchMmu : public Object
{
  public:
    /** What CheckAdmission decided. */
    enum Verdict
    {
        ADMIT = 0,
        DROP_HEADROOM_FULL, //!< lossless: above xoff and the headroom is full
        DROP_NO_BUFFER,     //!< lossy: neither the reserve nor the shared pool has room
        DROP_EGRESS_LIMIT,  //!< lossy: the egress queue is at its limit
    };

    static TypeId GetTypeId();
    NboxSwitchMmu();
    ~NboxSwitchMmu() override;

    /**
     * Headroom one lossless (port, priority) needs so that PFC never drops, on a link of
     * `rate` and propagation `delay` carrying IP MTU `ipMtu`. What the headroom holds once
     * the ingress queue asks for a pause:
     *   - the frame that did not fit under xoff and triggered the pause: F bytes;
     *   - what the upstream sends while the pause is on its way, every byte of which arrives
     *     later: the pause may wait behind a maximum frame our port is sending (F), takes
     *     64 bytes to send and propagates (r x d);
     *   - the frame the upstream has just started when the pause arrives: F;
     *   - bits already on the wire towards us: r x d.
     * Total 2 r d + 3 F + 64, with F = ipMtu + 18 (Ethernet header 14 + FCS 4).
     */
    static uint64_t GetRequiredHeadroom(DataRate rate, Time delay, uint32_t ipMtu);

    /**
     * Sizes the tables for `nPorts` ports (all counters zero, no headroom, ECN thresholds
     * from the attributes). Call once, before any packet.
     */
    void SetNPorts(uint32_t nPorts);
    /**
     * Appends a port with `headroom` bytes per lossless priority and ECN thresholds
     * `kmin` <= `kmax`; returns its index. Only before any packet was admitted. Throws
     * std::invalid_argument when the reserves and headroom of all ports no longer fit in
     * BufferSize (as do SetNPorts and SetHeadroom).
     */
    uint32_t AddPort(uint64_t headroom, uint64_t kmin, uint64_t kmax);
    uint32_t GetNPorts() const;
    /** Headroom of every lossless priority of `port` (bytes). */
    void SetHeadroom(uint32_t port, uint64_t bytes);
    uint64_t GetHeadroom(uint32_t port) const;
    /** ECN thresholds of egress `port` (bytes; kmin <= kmax). */
    void SetEcnThresholds(uint32_t port, uint64_t kmin, uint64_t kmax);

    /** True when PFC is on and `prio` is in LosslessPriorities. */
    bool IsLossless(uint8_t prio) const;

    /// \name Admission (CheckAdmission, then Admit if ADMIT; Release when the packet leaves)
    /// @{
    Verdict CheckAdmission(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes) const;
    void Admit(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes);
    void Release(uint32_t inPort, uint32_t outPort, uint8_t prio, uint32_t bytes);
    /// @}

    /// \name PFC state of ingress queues
    /// @{
    /** Lossless, not paused yet, and the headroom is in use or shared bytes reached xoff. */
    bool ShouldPause(uint32_t inPort, uint8_t prio) const;
    /** Paused, headroom empty, and shared bytes 0 or at most xoff - XonOffset. */
    bool ShouldResume(uint32_t inPort, uint8_t prio) const;
    void SetPaused(uint32_t inPort, uint8_t prio, bool paused);
    bool IsPaused(uint32_t inPort, uint8_t prio) const;
    /// @}

    /// \name ECN
    /// @{
    /** Marking probability for a packet arriving now at egress (outPort, prio). */
    double GetEcnMarkProbability(uint32_t outPort, uint8_t prio) const;
    /** Draws the marking decision for a packet arriving now at (outPort, prio). */
    bool DecideEcnMark(uint32_t outPort, uint8_t prio);
    /** Uses stream `stream` for the marking draws; returns the number of streams used (1). */
    int64_t AssignStreams(int64_t stream);
    /// @}

    /// \name State and counters
    /// @{
    uint64_t GetSharedPoolSize() const;
    uint64_t GetSharedUsed() const; //!< shared-pool bytes used by all queues
    /** The xoff threshold T now (dynamic or static). */
    uint64_t GetXoffThreshold() const;
    /** The egress limit of lossy queues now. */
    uint64_t GetEgressLimit() const;
    uint64_t GetIngressBytes(uint32_t inPort, uint8_t prio) const; //!< without headroom
    uint64_t GetIngressSharedBytes(uint32_t inPort, uint8_t prio) const;
    uint64_t GetHeadroomUsed(uint32_t inPort, uint8_t prio) const;
    /** Largest GetHeadroomUsed(inPort, prio) seen: how close PFC came to dropping. */
    uint64_t GetPeakHeadroomUsed(uint32_t inPort, uint8_t prio) const;
    uint64_t GetEgressBytes(uint32_t outPort, uint8_t prio) const;
    uint64_t GetTotalUsed() const;     //!< bytes of all admitted packets not yet released
    uint64_t GetPeakTotalUsed() const; //!< largest GetTotalUsed() seen
                                       /// @}

  private:
    /** Reserve of every (port, `prio`) queue: Reserve if `prio` is in ReservedPriorities. */
    uint64_t ReserveOf(uint8_t prio) const;
    /** Shared bytes of an ingress queue of priority `prio` holding `ingressBytes`. */
    uint64_t SharedPart(uint8_t prio, uint64_t ingressBytes) const;
    size_t Index(uint32_t port, uint8_t prio) const;
    void CheckPort(uint32_t port) const;
    /** Recomputes the shared pool from BufferSize, reserves and headroom. */
    void UpdatePool();

    // Attributes
    uint64_t m_bufferSize;
    uint64_t m_reserve;
    uint8_t m_reservedMask;
    bool m_pfcEnabled;
    uint8_t m_losslessMask;
    bool m_dynamicXoff;
    double m_alpha;
    uint64_t m_staticXoff;
    uint64_t m_xonOffset;
    double m_egressAlpha;
    uint64_t m_egressStaticLimit;
    uint64_t m_ecnKmin;
    uint64_t m_ecnKmax;
    double m_ecnPmax;

    uint32_t m_nPorts;
    uint64_t m_pool;
    uint64_t m_sharedUsed;
    uint64_t m_totalUsed;
    uint64_t m_peakTotalUsed;
    std::vector<uint64_t> m_headroom;         //!< per port (each lossless priority has it)
    std::vector<uint64_t> m_ingressBytes;     //!< per (port, prio), without headroom
    std::vector<uint64_t> m_headroomUsed;     //!< per (port, prio)
    std::vector<uint64_t> m_peakHeadroomUsed; //!< per (port, prio)
    std::vector<uint64_t> m_egressBytes;      //!< per (port, prio)
    std::vector<bool> m_paused;               //!< per (port, prio): we paused the upstream
    std::vector<uint64_t> m_kmin;             //!< per port
    std::vector<uint64_t> m_kmax;             //!< per port
    Ptr<UniformRandomVariable> m_uniform;
};

} // namespace ns3

#endif /* NBOX_SWITCH_MMU_H */
