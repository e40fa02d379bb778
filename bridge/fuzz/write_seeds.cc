// Writes the fuzzer's seed corpus (bridge/fuzz/corpus/): one valid frame of every message type,
// a session's worth of frames in one stream, and a few near misses. Rerun after a deliberate
// protocol change:  nbox_wire_write_seeds bridge/fuzz/corpus
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bridge/wire/frame_codec.h"

namespace {

using namespace nbox::bridge::wire;

void Write(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus directory>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  static const uint8_t kPayload[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  Hello hello;
  hello.rank = 2;
  hello.world = 4;
  hello.clock = ClockMode::kRealtime;
  hello.pid = 4242;
  for (size_t i = 0; i < hello.nonce.size(); ++i) hello.nonce[i] = static_cast<uint8_t>(i * 7);
  hello.job_id = "job-1.a:b_c";
  Challenge challenge;
  challenge.nonce.fill(0x33);
  challenge.proof.fill(0x44);
  Auth auth;
  auth.proof.fill(0x55);
  PostRecv recv{9, 3, 1000, {{4096, 1}, {100, 2}, {0, -1}}};
  Complete complete{9, 2000, {16, 0, 7}, false};
  Complete synthetic{10, 2500, {4096}, true};
  OpReport collective{3000, OpReportKind::kCollective, ReportedOp::kAllReduce, 7, 0, -1, 1024, 4096,
                      5};
  OpReport broadcast{3100, OpReportKind::kCollective, ReportedOp::kBroadcast, 2, 0, 1, 8, 32, 6};
  OpReport iteration{3200, OpReportKind::kIterationEnd, ReportedOp::kNone, 0, 0, -1, 0, 0, 3};
  const std::vector<std::pair<std::string, Message>> frames = {
      {"hello", hello},
      {"challenge", challenge},
      {"auth", auth},
      {"welcome", Welcome{7, 123456789, 250, 100000}},
      {"listen", Listen{1, 0x1122334455667788ull}},
      {"connect", Connect{2, 3, 0x28, 1, 0x1122334455667788ull}},
      {"connected", Connected{2, 17, true, 2500}},
      {"incoming", Incoming{1, 17, 0, 2500}},
      {"accept", Accept{17, 4}},
      {"close", Close{CloseKind::kRecv, 4}},
      {"post_send", PostSend{8, 2, 999, 16, 5}},
      {"post_recv", recv},
      {"data", Data{8, 0, 0, ByteView{kPayload, sizeof(kPayload)}}},
      {"promise", Promise{5000, true, 3}},
      {"complete", complete},
      {"error", Error{ErrorCode::kRefused, 2, "connect refused: no such listen"}},
      {"goodbye", Goodbye{77}},
      {"heartbeat", Heartbeat{78}},
      {"complete_synthetic", synthetic},
      {"op_report", collective},
      {"op_report_broadcast", broadcast},
      {"op_report_iteration", iteration},
      {"arrival_lag", ArrivalLag{2772, 1500, 2500}},
  };
  std::vector<uint8_t> session;
  for (const auto& [name, message] : frames) {
    const std::vector<uint8_t> bytes = EncodeFrame(message);
    Write(dir, name, bytes);
    if (AllowedDirection(TypeOf(message), Direction::kToServer)) {
      session.insert(session.end(), bytes.begin(), bytes.end());
    }
  }
  Write(dir, "client_stream", session);
  // Near misses: one byte changed in a valid frame.
  std::vector<uint8_t> bad = EncodeFrame(Heartbeat{1});
  bad[4] = 4;  // the version before Connected and Incoming carried the clock
  Write(dir, "bad_version", bad);
  bad = EncodeFrame(PostSend{8, 2, 999, 16, 5});
  bad[8] = 41;
  Write(dir, "bad_length", bad);
  bad = EncodeFrame(Close{CloseKind::kSend, 1});
  bad[13] = 1;
  Write(dir, "reserved_not_zero", bad);
  bad = EncodeFrame(iteration);
  bad[12 + 9] = 1;  // an iteration mark naming an op
  Write(dir, "op_report_mark_with_op", bad);
  bad = EncodeFrame(ArrivalLag{2772, 1500, 2500});
  bad[12 + 8 + 1] = 0x0A;  // p99 2,780 ns, above the maximum
  Write(dir, "arrival_lag_p99_above_max", bad);
  return 0;
}
