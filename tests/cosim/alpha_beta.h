// The alpha-beta closed forms of all-reduces on a non-blocking star, shared by the tests
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

// Rabenseifner's halving-doubling all-reduce (Thakur, Rabenseifner and Gropp 2005) on the same
// star, its rounds one after another: with P the largest power of two <= W and r = W - P, the
// first r even ranks fold into their odd neighbours (a whole buffer in, a step, and the same
// back at the end), so the P ranks left own segments of S/W bytes, r of them two. The round of
// distance m (m = P/2, ..., 1 in the halving, 1, ..., P/2 in the doubling) moves at most m
// virtual ranks' segments, min(m, r) of them doubled: (m + min(m, r)) S/W. For W a power of
// two that is the ring's 2(W-1)/W S in 2 log2 W steps.
inline double HalvingDoublingAlphaBetaSeconds(int world, double bytes, double rate_bps,
                                              double latency_s, uint32_t mtu) {
  int p = 1;
  int rounds = 0;
  while (2 * p <= world) {
    p *= 2;
    ++rounds;
  }
  const int folded = world - p;
  double segments = 0;  // moved in one phase's rounds, on the critical path
  for (int m = 1; m < p; m *= 2) segments += m + (m < folded ? m : folded);
  const double volume = 2 * segments / world + (folded > 0 ? 2 : 0);
  const double steps = 2.0 * rounds + (folded > 0 ? 2 : 0);
  return volume * bytes / GoodputBytesPerSecond(rate_bps, mtu) +
         steps * StepLatencySeconds(rate_bps, latency_s, mtu);
}

// One message of `bytes` between two hosts of the star.
inline double PointToPointSeconds(double bytes, double rate_bps, double latency_s, uint32_t mtu) {
  return bytes / GoodputBytesPerSecond(rate_bps, mtu) +
         StepLatencySeconds(rate_bps, latency_s, mtu);
}

}  // namespace nbox::testing
