// What real ranks with emulated peers added to the wire: the OpReport frame and
// Complete's synthetic flag against hand-written layouts and every rule of their strict
// decoding, and the shared listen handle with its synthetic listen ids; and ArrivalLag, a
// realtime rank's own lag figures (protocol version 3 on).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "bridge/wire/arrival_lag.h"
#include "bridge/wire/frame_codec.h"
#include "bridge/wire/listen_handle.h"

namespace nbox::bridge::wire {
namespace {

using Bytes = std::vector<uint8_t>;

void Append(Bytes* out, std::initializer_list<uint8_t> bytes) {
  out->insert(out->end(), bytes.begin(), bytes.end());
}

TEST(WireRealRanks, OpReportLayoutByHand) {
  Bytes expected = {'N', 'B', 'X', 'W', kProtocolVersion, 19, 0, 0, 40, 0, 0, 0};
  Append(&expected, {0x10, 0x27, 0, 0, 0, 0, 0, 0});  // vtime 10000
  Append(&expected, {1, 4, 7, 0});                    // kind, op broadcast, float32, redop
  Append(&expected, {2, 0, 0, 0});                    // root 2
  Append(&expected, {0x00, 0x01, 0, 0, 0, 0, 0, 0});  // count 256
  Append(&expected, {0x00, 0x04, 0, 0, 0, 0, 0, 0});  // bytes 1024
  Append(&expected, {5, 0, 0, 0, 0, 0, 0, 0});        // seq 5
  const OpReport report{
      10000, OpReportKind::kCollective, ReportedOp::kBroadcast, 7, 0, 2, 256, 1024, 5};
  EXPECT_EQ(EncodeFrame(report), expected);
  const Decoded decoded = DecodeFrame(expected.data(), expected.size(), Direction::kToServer);
  ASSERT_EQ(decoded.refusal, Refusal::kNone) << decoded.reason;
  const OpReport& back = std::get<OpReport>(decoded.message);
  EXPECT_EQ(back.root, 2);
  EXPECT_EQ(back.count, 256u);
  EXPECT_EQ(back.seq, 5u);
  // Only a rank reports its program: the client's decoder refuses it.
  EXPECT_EQ(DecodeFrame(expected.data(), expected.size(), Direction::kToClient).refusal,
            Refusal::kWrongDirection);
}

TEST(WireRealRanks, CompleteCarriesTheSyntheticFlagAtOffset20) {
  Bytes expected = {'N', 'B', 'X', 'W', kProtocolVersion, 15, 0, 0, 32, 0, 0, 0};
  Append(&expected, {9, 0, 0, 0, 0, 0, 0, 0});   // request
  Append(&expected, {0, 2, 0, 0, 0, 0, 0, 0});   // delivery 512
  Append(&expected, {1, 0, 0, 0, 1, 0, 0, 0});   // one size, flags: synthetic
  Append(&expected, {0, 16, 0, 0, 0, 0, 0, 0});  // 4096 bytes
  EXPECT_EQ(EncodeFrame(Complete{9, 512, {4096}, true}), expected);
  const Decoded decoded = DecodeFrame(expected.data(), expected.size(), Direction::kToClient);
  ASSERT_EQ(decoded.refusal, Refusal::kNone) << decoded.reason;
  EXPECT_TRUE(std::get<Complete>(decoded.message).synthetic);
}

// Changes byte `at` of the frame (header included) and expects kBadField naming `why`.
void ExpectBadField(const Message& message, Direction direction, size_t at, uint8_t value,
                    const std::string& why) {
  Bytes frame = EncodeFrame(message);
  ASSERT_LT(at, frame.size());
  frame[at] = value;
  const Decoded decoded = DecodeFrame(frame.data(), frame.size(), direction);
  EXPECT_EQ(decoded.refusal, Refusal::kBadField) << why;
  EXPECT_NE(decoded.reason.find(why), std::string::npos) << decoded.reason;
}

TEST(WireRealRanks, OpReportFieldsOutsideTheirKindsRulesAreRefused) {
  const Direction up = Direction::kToServer;
  const OpReport all_reduce{1, OpReportKind::kCollective, ReportedOp::kAllReduce, 7, 2, -1, 4, 16,
                            0};
  const OpReport send{1, OpReportKind::kCollective, ReportedOp::kSend, 2, 0, 3, 4, 16, 0};
  const OpReport mark{1, OpReportKind::kIterationEnd, ReportedOp::kNone, 0, 0, -1, 0, 0, 4};
  // Body offsets: 8 kind, 9 op, 10 dtype, 11 redop, 12 root, 16 count, 24 bytes (+12 header).
  ExpectBadField(all_reduce, up, 20, 0, "unknown kind 0");
  ExpectBadField(all_reduce, up, 20, 4, "unknown kind 4");
  ExpectBadField(all_reduce, up, 21, 9, "unknown op 9");
  ExpectBadField(all_reduce, up, 21, 0, "a collective with op 0");
  ExpectBadField(all_reduce, up, 22, 10, "unknown data type 10");
  ExpectBadField(all_reduce, up, 23, 4, "unknown reduction 4");
  ExpectBadField(all_reduce, up, 24, 0, "root -256 on a call without a root");
  ExpectBadField(all_reduce, up, 41, 2, "bytes over 1 TiB");  // 2^41 + 16
  ExpectBadField(send, up, 23, 1, "a reduction op on a call that does not reduce");
  ExpectBadField(send, up, 27, 0xFF, "is not a rank");  // root -16777213
  ExpectBadField(mark, up, 21, 1, "an iteration mark with op");
  ExpectBadField(mark, up, 28, 1, "an iteration mark with op");  // count
  ExpectBadField(mark, up, 24, 0, "an iteration mark with op");  // root 0, not -1
}

TEST(WireRealRanks, CompleteFlagsAreChecked) {
  const Direction down = Direction::kToClient;
  ExpectBadField(Complete{1, 2, {3}, false}, down, 32, 2, "unknown flags 2");
  ExpectBadField(Complete{1, 2, {}, false}, down, 32, 1, "synthetic flag on a send's completion");
}

TEST(WireRealRanks, ArrivalLagLayoutByHandAndItsRules) {
  Bytes expected = {'N', 'B', 'X', 'W', kProtocolVersion, 20, 0, 0, 24, 0, 0, 0};
  Append(&expected, {0xD4, 0x0A, 0, 0, 0, 0, 0, 0});  // 2772 completions
  Append(&expected, {0xDC, 0x05, 0, 0, 0, 0, 0, 0});  // p99 1500 ns
  Append(&expected, {0xC4, 0x09, 0, 0, 0, 0, 0, 0});  // max 2500 ns
  EXPECT_EQ(EncodeFrame(ArrivalLag{2772, 1500, 2500}), expected);
  const Decoded decoded = DecodeFrame(expected.data(), expected.size(), Direction::kToServer);
  ASSERT_EQ(decoded.refusal, Refusal::kNone) << decoded.reason;
  EXPECT_EQ(std::get<ArrivalLag>(decoded.message).max_ns, 2500u);
  EXPECT_EQ(DecodeFrame(expected.data(), expected.size(), Direction::kToClient).refusal,
            Refusal::kWrongDirection);
  const Direction up = Direction::kToServer;
  ExpectBadField(ArrivalLag{3, 10, 20}, up, 20, 30, "p99 above the maximum");
  ExpectBadField(ArrivalLag{0, 0, 0}, up, 28, 1, "a lag with no Complete");
}

// The nearest-rank p-quantile of `values`, worked out by sorting: the reference the histogram's
// quantiles are held to.
uint64_t ExactQuantile(std::vector<uint64_t> values, double p) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::max<size_t>(rank, 1) - 1];
}

TEST(WireRealRanks, LagHistogramIsExactBelowAMicrosecond) {
  // 1..100 ns in reverse: the 99th percentile by nearest rank is the 99th value.
  LagHistogram lags;
  for (uint64_t i = 100; i >= 1; --i) lags.Add(i);
  EXPECT_EQ(lags.count(), 100u);
  EXPECT_EQ(lags.Quantile(0.99), 99u);
  EXPECT_EQ(lags.Quantile(0.5), 50u);
  EXPECT_EQ(lags.Quantile(1.0), 100u);
  EXPECT_EQ(lags.max_ns(), 100u);
  LagHistogram one;
  one.Add(1023);
  EXPECT_EQ(one.Quantile(0.99), 1023u);
  EXPECT_EQ(LagHistogram().Quantile(0.99), 0u);
}

TEST(WireRealRanks,
     LagHistogramQuantilesAreNeverBelowTheExactOnesNorMoreThanAFiveHundredTwelfthAbove) {
  // Lags spread evenly in log from 1 ns to 10 s, as a realtime run's could be.
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> log_ns(0, std::log(1e10));
  std::vector<uint64_t> values;
  LagHistogram lags;
  for (int i = 0; i < 20000; ++i) {
    const auto ns = static_cast<uint64_t>(std::exp(log_ns(random)));
    values.push_back(ns);
    lags.Add(ns);
  }
  for (double p : {0.01, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    const uint64_t exact = ExactQuantile(values, p);
    SCOPED_TRACE("p = " + std::to_string(p) + ", exact " + std::to_string(exact));
    EXPECT_GE(lags.Quantile(p), exact);
    EXPECT_LE(lags.Quantile(p), exact + exact / 512);
  }
  EXPECT_EQ(lags.max_ns(), *std::max_element(values.begin(), values.end()));
  // Every bucket's largest value lies in it, and the next value starts the next bucket.
  for (uint64_t ns : {uint64_t{1023}, uint64_t{1024}, uint64_t{1025}, uint64_t{2047},
                      uint64_t{2048}, uint64_t{123456789}, UINT64_MAX / 3, UINT64_MAX}) {
    const size_t bucket = LagHistogram::BucketOf(ns);
    EXPECT_EQ(LagHistogram::BucketOf(LagHistogram::LargestIn(bucket)), bucket) << ns;
    EXPECT_GE(LagHistogram::LargestIn(bucket), ns) << ns;
    if (ns != UINT64_MAX) {
      EXPECT_EQ(LagHistogram::BucketOf(LagHistogram::LargestIn(bucket) + 1), bucket + 1) << ns;
    }
  }
  LagHistogram extreme;
  extreme.Add(UINT64_MAX);
  EXPECT_EQ(extreme.Quantile(0.99), UINT64_MAX);
}

TEST(WireRealRanks, TheArrivalLagSummary) {
  // 200 lags of 10 .. 2000 ns: the p99 is the 198th smallest (ceil(0.99 x 200)), 1980 ns, which
  // the histogram reports to its 2 ns buckets between 1024 and 2048 ns.
  LagHistogram lags;
  for (uint64_t i = 200; i >= 1; --i) lags.Add(i * 10);
  const ArrivalLag lag = SummariseArrivalLags(lags);
  EXPECT_EQ(lag.completions, 200u);
  EXPECT_EQ(lag.p99_ns, 1981u);
  EXPECT_EQ(lag.max_ns, 2000u);
  const ArrivalLag none = SummariseArrivalLags(LagHistogram());
  EXPECT_EQ(none.completions + none.p99_ns + none.max_ns, 0u);
}

TEST(WireRealRanks, ListenHandleLayoutByHand) {
  uint8_t bytes[kListenHandleBytes];
  std::memset(bytes, 0xEE, sizeof(bytes));
  EncodeListenHandle(ListenHandle{3, 0x0102, 0xAABB, 0}, bytes);
  Bytes expected(kListenHandleBytes, 0);
  const uint8_t head[] = {'N',  'B',  'X', 'H', 1, 0, 0, 0, 3,    0,    0, 0, 0, 0, 0, 0,
                          0x02, 0x01, 0,   0,   0, 0, 0, 0, 0xBB, 0xAA, 0, 0, 0, 0, 0, 0};
  std::copy(head, head + sizeof(head), expected.begin());
  EXPECT_EQ(Bytes(bytes, bytes + kListenHandleBytes), expected);
  SetListenHandleProgress(bytes, 0x42);
  ListenHandle back;
  ASSERT_TRUE(DecodeListenHandle(bytes, &back));
  EXPECT_EQ(back.rank, 3u);
  EXPECT_EQ(back.listen, 0x0102u);
  EXPECT_EQ(back.nonce, 0xAABBu);
  EXPECT_EQ(back.progress, 0x42u);
  bytes[12] = 1;  // the zero word
  EXPECT_FALSE(DecodeListenHandle(bytes, &back));
  bytes[12] = 0;
  bytes[4] = 2;  // version
  EXPECT_FALSE(DecodeListenHandle(bytes, &back));
}

TEST(WireRealRanks, SyntheticListenIdsEncodeSenderAndLane) {
  const uint64_t id = SyntheticListenId(5, 2);
  EXPECT_EQ(id, (uint64_t{1} << 63) | (uint64_t{5} << 32) | 2);
  uint32_t sender = 0, lane = 0;
  ASSERT_TRUE(DecodeSyntheticListenId(id, &sender, &lane));
  EXPECT_EQ(sender, 5u);
  EXPECT_EQ(lane, 2u);
  const uint64_t largest = SyntheticListenId((1u << 31) - 1, 0xFFFFFFFFu);
  ASSERT_TRUE(DecodeSyntheticListenId(largest, &sender, &lane));
  EXPECT_EQ(sender, (1u << 31) - 1);
  EXPECT_EQ(lane, 0xFFFFFFFFu);
  // A plugin's ids count up from 1: never synthetic.
  EXPECT_FALSE(IsSyntheticListenId(1));
  EXPECT_FALSE(DecodeSyntheticListenId((uint64_t{1} << 63) - 1, &sender, &lane));
}

}  // namespace
}  // namespace nbox::bridge::wire
