// The alpha-beta closed form of a ring all-reduce on a non-blocking star, shared by the tests
// that check simulated all-reduces against it:
//   T = 2(W-1)/W * S / B + 2(W-1) * L
// where B is the TCP goodput of a host link (rate less IP, TCP, timestamp and PPP headers)
// and L the per-step latency: two link propagation delays plus the switch's
// store-and-forward of one full packet. One channel, no chunking: each of the 2(W-1) ring
// steps moves S/W bytes and must fully arrive before the next step's send starts.
#pragma once

#include <cstdint>

namespace nbox::testing {

inline double AlphaBetaSeconds(int world, double bytes, double rate_bps, double latency_s,
                               uint32_t mtu) {
  constexpr double kIpTcpTimestampBytes = 20 + 20 + 12;
  constexpr double kPppBytes = 2;
  const double payload = mtu - kIpTcpTimestampBytes;
  const double wire_packet = mtu + kPppBytes;
  const double goodput_bytes_per_s = rate_bps / 8 * payload / wire_packet;
  const double step_latency = 2 * latency_s + wire_packet * 8 / rate_bps;
  const double steps = 2.0 * (world - 1);
  return steps / world * bytes / goodput_bytes_per_s + steps * step_latency;
}

}  // namespace nbox::testing
