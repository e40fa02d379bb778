// Watches every data segment the TCP senders of a network transmit and records how much
// unacknowledged data each sender had at that moment.
//
// Why: ns-3 3.37's TcpTxBuffer::NextSeg walks the whole list of sent, unacknowledged
// segments for every segment it transmits, so TCP's cost per packet grows with the data in
// flight. Two runs compare fairly only if their senders keep similar amounts in flight; the
// benchmark prints this figure for both sides and sizes the plain run's send buffer from it.
#pragma once

#include <cstdint>

#include "ns3/node-container.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"

namespace nbox::bench {

class TcpSendProbe {
 public:
  // Connects to the "Tx" trace of every TCP socket that exists now on `nodes`; sockets
  // created later are not watched, so attach once the senders exist and before they send.
  // Returns how many sockets it watches.
  uint32_t Attach(const ns3::NodeContainer& nodes);

  uint64_t data_segments() const { return data_segments_; }
  uint64_t data_bytes() const { return data_bytes_; }
  // Mean over transmitted data segments of the sender's sent-but-unacknowledged bytes, the
  // segment itself included.
  double MeanOutstandingBytes() const;
  uint64_t max_outstanding_bytes() const { return max_outstanding_bytes_; }

 private:
  void OnTx(ns3::Ptr<const ns3::Packet> segment, const ns3::TcpHeader& header,
            ns3::Ptr<const ns3::TcpSocketBase> socket);

  uint64_t data_segments_ = 0;
  uint64_t data_bytes_ = 0;
  double outstanding_sum_ = 0;
  uint64_t max_outstanding_bytes_ = 0;
};

}  // namespace nbox::bench
