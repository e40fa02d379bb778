#include "tools/bench/tcp_send_probe.h"

#include <algorithm>

#include "ns3/callback.h"
#include "ns3/object-vector.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-tx-buffer.h"

namespace nbox::bench {

uint32_t TcpSendProbe::Attach(const ns3::NodeContainer& nodes) {
  uint32_t watched = 0;
  for (auto node = nodes.Begin(); node != nodes.End(); ++node) {
    auto tcp = (*node)->GetObject<ns3::TcpL4Protocol>();
    if (!tcp) continue;
    ns3::ObjectVectorValue sockets;
    tcp->GetAttribute("SocketList", sockets);
    for (auto it = sockets.Begin(); it != sockets.End(); ++it) {
      auto socket = ns3::DynamicCast<ns3::TcpSocketBase>(it->second);
      if (!socket) continue;
      socket->TraceConnectWithoutContext("Tx", ns3::MakeCallback(&TcpSendProbe::OnTx, this));
      ++watched;
    }
  }
  return watched;
}

double TcpSendProbe::MeanOutstandingBytes() const {
  return data_segments_ > 0 ? outstanding_sum_ / static_cast<double>(data_segments_) : 0;
}

void TcpSendProbe::OnTx(ns3::Ptr<const ns3::Packet> segment, const ns3::TcpHeader& /*header*/,
                        ns3::Ptr<const ns3::TcpSocketBase> socket) {
  const uint32_t size = segment->GetSize();
  if (size == 0) return;  // SYN, FIN, pure ACK
  // The segment is already on the sent list. Its length in bytes is what TcpTxBuffer's
  // BytesInFlight() subtracts SACKed and lost bytes from and adds retransmitted ones to.
  const ns3::Ptr<ns3::TcpTxBuffer> tx = socket->GetTxBuffer();
  const uint64_t outstanding = static_cast<uint64_t>(tx->BytesInFlight()) + tx->GetSacked() +
                               tx->GetLost() - tx->GetRetransmitsCount();
  ++data_segments_;
  data_bytes_ += size;
  outstanding_sum_ += static_cast<double>(outstanding);
  max_outstanding_bytes_ = std::max(max_outstanding_bytes_, outstanding);
}

}  // namespace nbox::bench
