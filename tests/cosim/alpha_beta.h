// The alpha-beta closed form of a ring all-reduce on a non-blocking star, shared by the tests
// that check simulated communication against it (and a single message's, below):
//   T = 2(W-1)/W * S / B + 2(W-1) * L
// where B is the TCP goodput of a host link (rate less IP, TCP, timestamp and PPP headers)
// and L the per-step latency: two link propagation delays plus the switch's
// store-and-forward of one full packet. One channel, no chunking: each of the 2(W-1) ring
// steps moves S/W bytes and must fully arrive before the next step's send starts.
#pragma once

#include <cstdint>

namespace nbox::testing {

// TCP goodput of a host link: the rate less IP, TCP, timestamp and PPP headers.
inline double GoodputBytesPerSecond(double rate_bps, uint32_t mtu) {
  constexpr double kIpTcpTimestampBytes = 20 + 20 + 12;
  constexpr double kPppBytes = 2;
  return rate_bps / 8 * (mtu - kIpTcpTimestampBytes) / (mtu + kPppBytes);
}

// One step's latency: two link propagation delays and the switch's store-and-forward of one
// full packet.
inline double StepLatencySeconds(double rate_bps, double latency_s, uint32_t mtu) {
  return 2 * latency_s + (mtu + 2.0) * 8 / rate_bps;
}

inline double AlphaBetaSeconds(int world, double bytes, double rate_bps, double latency_s,
                               uint32_t mtu) {
  const double steps = 2.0 * (world - 1);
  return steps / world * bytes / GoodputBytesPerSecond(rate_bps, mtu) +
         steps * StepLatencySeconds(rate_bps, latency_s, mtu);
}

// One message of `bytes` between two hosts of the star.
inline double PointToPointSeconds(double bytes, double rate_bps, double latency_s, uint32_t mtu) {
  return bytes / GoodputBytesPerSecond(rate_bps, mtu) +
         StepLatencySeconds(rate_bps, latency_s, mtu);
}

}  // namespace nbox::testing
