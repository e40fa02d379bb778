/*
 * NboxTcpSocket's RACK-TLP glue (RFC 8985): feeds NboxTcpRack every transmission and ACK, and
 * acts on what it finds with TcpSocketBase's own machinery. A loss RACK finds while the
 * connection is open starts RFC 6675's fast recovery (TcpSocketBase::EnterRecovery: the head is
 * resent, ssthresh set by the congestion control); in recovery TcpSocketBase's NextSeg resends
 * the holes below the highest SACK. The probe resends the last segment out (or sends one new
 * segment when the window allows), then restarts the RTO, as Linux's tcp_send_loss_probe().
 *
 * Not modelled: TLP's episode detection (RFC 8985 7.4, a congestion response when the probe
 * alone repaired a loss; Linux's TCPLossProbeRecovery). The reordering window grows on
 * retransmissions proven spurious by an early ACK, in place of the DSACKs ns-3's receivers do
 * not send (model/tcp/nbox-tcp-rack.h).
 */
#include "nbox-tcp-socket.h"

#include "ns3/log.h"
#include "ns3/rtt-estimator.h"
#include "ns3/simulator.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-option-sack.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/tcp-tx-buffer.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxTcpSocketRack");

uint64_t
NboxTcpSocket::GetLossProbeCount() const
{
    return m_lossProbes;
}

uint64_t
NboxTcpSocket::GetRackRecoveryCount() const
{
    return m_rackRecoveries;
}

bool
NboxTcpSocket::CanSendData() const
{
    return m_state == TcpSocket::ESTABLISHED || m_state == TcpSocket::CLOSE_WAIT;
}

bool
NboxTcpSocket::OnlyForwardRetransmissionsLeft() const
{
    if (m_forwardRetransmissions || !m_sackEnabled
        || m_tcb->m_congState != TcpSocketState::CA_RECOVERY)
    {
        return false;
    }
    // RACK's losses are not in ns-3's scoreboard, whose rule 1 knows only RFC 6675's: rule 3
    // resends them, the lowest segment neither SACKed nor resent being the lowest RACK deems
    // lost (segments sent earlier are due earlier). A lost retransmission is not rule 3's to
    // resend (ActOnRack resends the head's), so it does not open the window.
    if (m_rackTlpEnabled && m_rack.HasLostOriginal())
    {
        return false;
    }
    // NextSeg without rule 3 finds a lost segment not yet resent (rule 1) or new data the
    // receiver's window takes (rule 2); it changes nothing but its search hint.
    SequenceNumber32 seq;
    SequenceNumber32 seqHigh;
    return !m_txBuffer->NextSeg(&seq, &seqHigh, false);
}

NboxTcpRack::Path
NboxTcpSocket::RackPath() const
{
    NboxTcpRack::Path path;
    path.minRtt = m_tcb->m_minRtt;
    path.srtt = m_rtt->GetEstimate();
    path.inRecovery = m_tcb->m_congState == TcpSocketState::CA_RECOVERY;
    path.dupThresh = m_retxThresh;
    return path;
}

void
NboxTcpSocket::UpdateRttHistory(const SequenceNumber32& seq, uint32_t sz, bool isRetransmission)
{
    TcpSocketBase::UpdateRttHistory(seq, sz, isRetransmission);
    if (m_rackTlpEnabled && sz > 0)
    {
        m_rack.Sent(seq, sz, Simulator::Now(), isRetransmission);
        UpdateProbeDeadline();
    }
}

void
NboxTcpSocket::ReceivedAck(Ptr<Packet> packet, const TcpHeader& tcpHeader)
{
    TcpSocketBase::ReceivedAck(packet, tcpHeader);
    if (!m_rackTlpEnabled || !CanSendData())
    {
        return;
    }
    const SequenceNumber32 ack = tcpHeader.GetAckNumber();
    if (m_probeOut && ack >= m_probeEnd)
    {
        m_probeOut = false;
    }
    TcpOptionSack::SackList sacks;
    if (Ptr<const TcpOptionSack> option
        = DynamicCast<const TcpOptionSack>(tcpHeader.GetOption(TcpOption::SACK)))
    {
        sacks = option->GetSackList();
    }
    ActOnRack(m_rack.Acked(ack, sacks, Simulator::Now(), RackPath()));
    UpdateProbeDeadline();
}

void
NboxTcpSocket::ReTxTimeout()
{
    if (m_rackTlpEnabled)
    {
        m_rack.Reset();
        m_rackTimer.Cancel();
        m_probeOut = false;
        m_probeDeadline = Time(0);
    }
    TcpSocketBase::ReTxTimeout();
}

void
NboxTcpSocket::ActOnRack(const NboxTcpRack::Verdict& verdict)
{
    const TcpSocketState::TcpCongState_t state = m_tcb->m_congState;
    if (verdict.newlyLost
        && (state == TcpSocketState::CA_OPEN || state == TcpSocketState::CA_DISORDER))
    {
        NS_LOG_INFO(this << " RACK: a loss in " << TcpSocketState::TcpCongStateName[state]
                         << ", entering fast recovery");
        ++m_rackRecoveries;
        EnterRecovery(0);
    }
    // A lost retransmission of the head: RFC 6675's NextSeg never resends a segment twice,
    // so ns-3 alone would wait for the RTO; RACK resends it (RFC 8985 6.2, its detection of
    // lost retransmissions).
    if (state == TcpSocketState::CA_RECOVERY && m_txBuffer->IsHeadRetransmitted()
        && m_rack.IsLost(m_txBuffer->HeadSequence()))
    {
        NS_LOG_INFO(this << " RACK: the head's retransmission was lost, resending it");
        m_txBuffer->DeleteRetransmittedFlagFromHead();
        m_txBuffer->MarkHeadAsLost();
        DoRetransmit();
    }
    m_rackTimer.Cancel();
    if (verdict.recheckIn.IsStrictlyPositive())
    {
        m_rackTimer
            = Simulator::Schedule(verdict.recheckIn, &NboxTcpSocket::RackTimerExpired, this);
    }
}

void
NboxTcpSocket::RackTimerExpired()
{
    if (CanSendData())
    {
        ActOnRack(m_rack.Recheck(Simulator::Now(), RackPath()));
    }
}

void
NboxTcpSocket::UpdateProbeDeadline()
{
    m_probeDeadline = Time(0);
    const uint32_t inFlight = m_rack.InFlightSegments();
    // Linux probes in Open (and CWR) only, one probe per flight, on SACK connections.
    if (!m_sackEnabled || m_probeOut || inFlight == 0 || !CanSendData()
        || m_tcb->m_congState != TcpSocketState::CA_OPEN)
    {
        return;
    }
    const Time timeout
        = NboxTcpRack::ProbeTimeout(m_rtt->GetEstimate(), inFlight, m_probeTimeoutSlack);
    const Time rtoLeft
        = m_retxEvent.IsRunning() ? Simulator::GetDelayLeft(m_retxEvent) : m_rto.Get();
    if (!timeout.IsStrictlyPositive() || timeout >= rtoLeft)
    {
        return; // the retransmission timer comes first
    }
    m_probeDeadline = Simulator::Now() + timeout;
    // The timer is lazy: a later deadline is found when it fires; an earlier one moves it.
    if (!m_probeTimer.IsRunning() || Simulator::GetDelayLeft(m_probeTimer) > timeout)
    {
        m_probeTimer.Cancel();
        m_probeTimer = Simulator::Schedule(timeout, &NboxTcpSocket::ProbeTimerExpired, this);
    }
}

void
NboxTcpSocket::ProbeTimerExpired()
{
    if (!m_probeDeadline.IsStrictlyPositive())
    {
        return;
    }
    if (Simulator::Now() < m_probeDeadline)
    {
        m_probeTimer = Simulator::Schedule(m_probeDeadline - Simulator::Now(),
                                           &NboxTcpSocket::ProbeTimerExpired, this);
        return;
    }
    m_probeDeadline = Time(0);
    if (m_probeOut || !CanSendData() || m_tcb->m_congState != TcpSocketState::CA_OPEN)
    {
        return;
    }
    // A segment still in the host's own queue is not lost (Linux's skb_still_in_host_queue()):
    // look again a probe timeout later.
    if (m_hostQueuedBytes > 0)
    {
        UpdateProbeDeadline();
        return;
    }
    // New data if the receiver's window takes a segment more, else the last segment out again.
    const SequenceNumber32 next = m_tcb->m_nextTxSequence;
    const bool newDataFits = m_txBuffer->SizeFromSequence(next) > 0
                          && next + SequenceNumber32(m_tcb->m_segmentSize)
                                 <= m_txBuffer->HeadSequence() + SequenceNumber32(m_rWnd);
    SequenceNumber32 seq;
    uint32_t bytes = 0;
    if (newDataFits)
    {
        m_tcb->m_nextTxSequence += SendDataPacket(next, m_tcb->m_segmentSize, true);
    }
    else if (m_rack.LastUndelivered(&seq, &bytes))
    {
        SendDataPacket(seq, bytes, true);
    }
    else
    {
        return;
    }
    NS_LOG_INFO(this << " tail loss probe");
    ++m_lossProbes;
    m_probeOut = true;
    m_probeEnd = m_tcb->m_highTxMark;
    m_retxEvent.Cancel();
    m_retxEvent = Simulator::Schedule(m_rto, &NboxTcpSocket::ReTxTimeout, this);
}

} // namespace ns3
