// ncclProfiler_v5 of libnccl-net-nbox.so, driven as NCCL 2.28.9 drives it: dlopen, dlsym of the
// table, init per communicator, then hand-made event descriptors in the order NCCL sends them
// (a coll event, its proxy ops and kernel channels started by the proxy thread, NCCL's own
// stop of the coll event right after the launch, the children's stops later), and finalize.
// The trace lines are read back with a JSON parser and compared field by field with what the
// descriptors said.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bridge/profiler/profiler_v5.h"
#include "tests/bridge/plugin_loader.h"
#include "tests/bridge/warning_capture.h"

namespace nbox::bridge::testing {
namespace {

uint64_t MonotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

ncclProfilerEventDescr_v5_t CollDescr(uint64_t seq, const char* func, size_t count,
                                      const char* datatype, int channels) {
  ncclProfilerEventDescr_v5_t d{};
  d.type = ncclProfileColl;
  d.rank = 2;
  d.coll.seqNumber = seq;
  d.coll.func = func;
  d.coll.count = count;
  d.coll.root = 0;
  d.coll.datatype = datatype;
  d.coll.nChannels = static_cast<uint8_t>(channels);
  d.coll.nWarps = 16;
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
  return d;
}

ncclProfilerEventDescr_v5_t ProxyOpDescr(void* parent, pid_t pid, int channel) {
  ncclProfilerEventDescr_v5_t d{};
  d.type = ncclProfileProxyOp;
  d.parentObj = parent;
  d.rank = 2;
  d.proxyOp.pid = pid;
  d.proxyOp.channelId = static_cast<uint8_t>(channel);
  d.proxyOp.peer = 3;
  d.proxyOp.nSteps = 8;
  d.proxyOp.chunkSize = 1 << 19;
  d.proxyOp.isSend = 1;
  return d;
}

ncclProfilerEventDescr_v5_t KernelChDescr(void* parent, int channel, uint64_t gpu_start) {
  ncclProfilerEventDescr_v5_t d{};
  d.type = ncclProfileKernelCh;
  d.parentObj = parent;
  d.kernelCh.channelId = static_cast<uint8_t>(channel);
  d.kernelCh.pTimer = gpu_start;
  return d;
}

class NboxProfiler : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/nbox-profiler-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    trace_path_ = dir_ + "/trace.jsonl";
    setenv("NBOX_PROFILE_TRACE", trace_path_.c_str(), 1);
    ASSERT_TRUE(library_.loaded()) << library_.error();
    profiler_ = library_.Symbol<ncclProfiler_v5_t>("ncclProfiler_v5");
    ASSERT_NE(profiler_, nullptr);
  }
  void TearDown() override {
    unsetenv("NBOX_PROFILE_TRACE");
    std::remove(trace_path_.c_str());
    rmdir(dir_.c_str());
  }

  // init as NCCL calls it for rank 2 of a 4-rank communicator.
  void* Init(uint64_t comm_id, const char* name = "world") {
    void* context = nullptr;
    int mask = -1;
    EXPECT_EQ(profiler_->init(&context, comm_id, &mask, name, 1, 4, 2, CaptureLog), ncclSuccess);
    // What the recorder needs: coll events and the two kinds of work they parent.
    EXPECT_EQ(mask, 2 | 8 | 64);
    EXPECT_NE(context, nullptr);
    return context;
  }
  void* Start(void* context, ncclProfilerEventDescr_v5_t descr) {
    void* handle = nullptr;
    EXPECT_EQ(profiler_->startEvent(context, &handle, &descr), ncclSuccess);
    return handle;
  }
  void StopKernel(void* handle, uint64_t gpu_stop) {
    ncclProfilerEventStateArgs_v5_t args{};
    args.kernelCh.pTimer = gpu_stop;
    EXPECT_EQ(profiler_->recordEventState(handle, ncclProfilerKernelChStop, &args), ncclSuccess);
    EXPECT_EQ(profiler_->stopEvent(handle), ncclSuccess);
  }

  std::vector<nlohmann::json> Lines() const {
    std::vector<nlohmann::json> lines;
    std::ifstream in(trace_path_);
    std::string text;
    while (std::getline(in, text)) lines.push_back(nlohmann::json::parse(text));
    return lines;
  }

  PluginLibrary library_{NBOX_PLUGIN_PATH};
  ncclProfiler_v5_t* profiler_ = nullptr;
  std::string dir_;
  std::string trace_path_;
};

TEST_F(NboxProfiler, IsNamedAndFoundByDlsym) {
  EXPECT_STREQ(profiler_->name, "nbox");
  EXPECT_NE(profiler_->init, nullptr);
  EXPECT_NE(profiler_->finalize, nullptr);
}

TEST_F(NboxProfiler, WithoutTheTraceVariableItAsksForNothing) {
  unsetenv("NBOX_PROFILE_TRACE");
  void* context = reinterpret_cast<void*>(0x1);
  int mask = -1;
  ASSERT_EQ(profiler_->init(&context, 7, &mask, "world", 1, 4, 0, CaptureLog), ncclSuccess);
  EXPECT_EQ(mask, 0);
  EXPECT_EQ(context, nullptr);
  // NCCL's mask is per process: a context-less communicator may still get a call.
  void* handle = reinterpret_cast<void*>(0x1);
  auto descr = CollDescr(0, "AllReduce", 1, "ncclFloat32", 1);
  EXPECT_EQ(profiler_->startEvent(nullptr, &handle, &descr), ncclSuccess);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(access(trace_path_.c_str(), F_OK), -1) << "no file without NBOX_PROFILE_TRACE";
}

TEST_F(NboxProfiler, ACollectiveIsWrittenWhenItsLastWorkStops) {
  void* context = Init(0x1234);
  const uint64_t before_start = MonotonicNs();
  void* coll = Start(context, CollDescr(7, "AllReduce", 1048576, "ncclFloat32", 2));
  const uint64_t after_start = MonotonicNs();
  ASSERT_NE(coll, nullptr);
  void* proxy = Start(context, ProxyOpDescr(coll, getpid(), 0));
  void* kernel0 = Start(context, KernelChDescr(coll, 0, 5000));
  void* kernel1 = Start(context, KernelChDescr(coll, 1, 4000));
  ASSERT_NE(proxy, nullptr);
  ASSERT_NE(kernel0, nullptr);
  ASSERT_NE(kernel1, nullptr);
  EXPECT_EQ(profiler_->stopEvent(coll), ncclSuccess);  // NCCL: launched, not done
  EXPECT_TRUE(Lines().empty());
  StopKernel(kernel0, 9000);
  StopKernel(kernel1, 9500);
  EXPECT_TRUE(Lines().empty()) << "the proxy op is still open";
  const uint64_t before_last_stop = MonotonicNs();
  EXPECT_EQ(profiler_->stopEvent(proxy), ncclSuccess);
  const uint64_t after_last_stop = MonotonicNs();

  const auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  const nlohmann::json& line = lines[0];
  EXPECT_EQ(line["v"], 1);
  EXPECT_EQ(line["kind"], "coll");
  EXPECT_EQ(line["comm"], "0x0000000000001234");
  EXPECT_EQ(line["comm_name"], "world");
  EXPECT_EQ(line["nranks"], 4);
  EXPECT_EQ(line["rank"], 2);
  EXPECT_EQ(line["pid"], getpid());
  EXPECT_EQ(line["seq"], 7);
  EXPECT_EQ(line["func"], "AllReduce");
  EXPECT_EQ(line["count"], 1048576);
  EXPECT_EQ(line["datatype"], "ncclFloat32");
  EXPECT_EQ(line["root"], 0);
  EXPECT_EQ(line["algo"], "RING");
  EXPECT_EQ(line["proto"], "SIMPLE");
  EXPECT_EQ(line["nchannels"], 2);
  EXPECT_EQ(line["nwarps"], 16);
  EXPECT_EQ(line["gpu_start_ns"], 4000);  // earliest channel start
  EXPECT_EQ(line["gpu_end_ns"], 9500);    // latest channel stop
  EXPECT_EQ(line["complete"], true);
  const uint64_t start = line["start_ns"];
  const uint64_t end = line["end_ns"];
  EXPECT_GE(start, before_start);
  EXPECT_LE(start, after_start);
  EXPECT_GE(end, before_last_stop);
  EXPECT_LE(end, after_last_stop);
  EXPECT_EQ(profiler_->finalize(context), ncclSuccess);
  EXPECT_EQ(Lines().size(), 1u);
}

TEST_F(NboxProfiler, WaitsForEveryKernelChannelEvenAfterNcclStoppedIt) {
  void* context = Init(0x99);
  void* coll = Start(context, CollDescr(0, "AllGather", 4096, "ncclInt8", 2));
  void* kernel0 = Start(context, KernelChDescr(coll, 0, 100));
  EXPECT_EQ(profiler_->stopEvent(coll), ncclSuccess);
  StopKernel(kernel0, 200);
  EXPECT_TRUE(Lines().empty()) << "channel 1 of 2 has not even started";
  void* kernel1 = Start(context, KernelChDescr(coll, 1, 150));
  StopKernel(kernel1, 300);
  const auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["func"], "AllGather");
  EXPECT_EQ(lines[0]["datatype"], "ncclInt8");
  EXPECT_EQ(lines[0]["gpu_start_ns"], 100);
  EXPECT_EQ(lines[0]["gpu_end_ns"], 300);
  EXPECT_EQ(profiler_->finalize(context), ncclSuccess);
}

TEST_F(NboxProfiler, EventsItDoesNotRecordGetNoHandle) {
  void* context = Init(0x5);
  void* coll = Start(context, CollDescr(0, "AllReduce", 8, "ncclFloat32", 1));
  ASSERT_NE(coll, nullptr);
  // A PXN proxy op: generated by another process, whose parentObj means nothing here.
  EXPECT_EQ(Start(context, ProxyOpDescr(coll, getpid() + 1, 0)), nullptr);
  // A parent that is not a collective of this communicator (e.g. a p2p event).
  int not_a_handle = 0;
  EXPECT_EQ(Start(context, ProxyOpDescr(&not_a_handle, getpid(), 0)), nullptr);
  EXPECT_EQ(Start(context, KernelChDescr(nullptr, 0, 1)), nullptr);
  for (uint64_t type : {ncclProfileGroup, ncclProfileP2p, ncclProfileProxyStep,
                        ncclProfileProxyCtrl, ncclProfileCollApi, ncclProfileGroupApi}) {
    ncclProfilerEventDescr_v5_t descr{};
    descr.type = type;
    EXPECT_EQ(Start(context, descr), nullptr) << "type " << type;
  }
  EXPECT_EQ(profiler_->stopEvent(nullptr), ncclSuccess);
  EXPECT_EQ(profiler_->recordEventState(nullptr, ncclProfilerKernelChStop, nullptr), ncclSuccess);
  // NCCL's stop alone does not complete a collective whose one kernel channel never showed
  // up: finalize writes it, as incomplete.
  EXPECT_EQ(profiler_->stopEvent(coll), ncclSuccess);
  EXPECT_TRUE(Lines().empty());
  EXPECT_EQ(profiler_->finalize(context), ncclSuccess);
  const auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["complete"], false);
}

TEST_F(NboxProfiler, FinalizeWritesUnfinishedCollectivesInLaunchOrder) {
  void* context = Init(0x77);
  void* first = Start(context, CollDescr(0, "ReduceScatter", 256, "ncclBfloat16", 1));
  void* second = Start(context, CollDescr(0, "Broadcast", 512, "ncclInt8", 1));
  void* kernel = Start(context, KernelChDescr(second, 0, 10));
  StopKernel(kernel, 20);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(Lines().empty());
  ClearWarning();
  EXPECT_EQ(profiler_->finalize(context), ncclSuccess);
  const auto lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["func"], "ReduceScatter");
  EXPECT_EQ(lines[1]["func"], "Broadcast");
  EXPECT_EQ(lines[0]["complete"], false);
  EXPECT_EQ(lines[1]["complete"], false);
  EXPECT_LE(lines[0]["start_ns"].get<uint64_t>(), lines[1]["start_ns"].get<uint64_t>());
  EXPECT_NE(LastWarning().find("2 collectives had not finished"), std::string::npos)
      << LastWarning();
}

TEST_F(NboxProfiler, TwoCommunicatorsShareTheFileLineByLine) {
  void* world = Init(0xA, "world");
  void* odd = Init(0xB, "a \"quoted\"\nname");
  for (int i = 0; i < 3; ++i) {
    for (void* context : {world, odd}) {
      void* coll = Start(context, CollDescr(i, "AllReduce", 4, "ncclFloat32", 1));
      void* kernel = Start(context, KernelChDescr(coll, 0, 1));
      EXPECT_EQ(profiler_->stopEvent(coll), ncclSuccess);
      StopKernel(kernel, 2);
    }
  }
  EXPECT_EQ(profiler_->finalize(world), ncclSuccess);
  EXPECT_EQ(profiler_->finalize(odd), ncclSuccess);
  const auto lines = Lines();
  ASSERT_EQ(lines.size(), 6u);
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool is_world = i % 2 == 0;
    EXPECT_EQ(lines[i]["comm"], is_world ? "0x000000000000000a" : "0x000000000000000b");
    EXPECT_EQ(lines[i]["comm_name"], is_world ? "world" : "a \"quoted\"\nname");
    EXPECT_EQ(lines[i]["seq"], i / 2);
    EXPECT_EQ(lines[i]["complete"], true);
  }
}

TEST_F(NboxProfiler, AProcessThatExitsWithoutFinalizeStillWritesItsCollectives) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // As a program that never destroys its communicator: init, a launched collective, exit.
    void* context = nullptr;
    int mask = 0;
    profiler_->init(&context, 0x42, &mask, "world", 1, 4, 2, nullptr);
    void* handle = nullptr;
    auto descr = CollDescr(3, "AllReduce", 16, "ncclFloat32", 1);
    profiler_->startEvent(context, &handle, &descr);
    profiler_->stopEvent(handle);
    std::exit(0);  // runs the library's static destructors, unlike _exit
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["comm"], "0x0000000000000042");
  EXPECT_EQ(lines[0]["seq"], 3);
  EXPECT_EQ(lines[0]["pid"], child);
  EXPECT_EQ(lines[0]["complete"], false);
}

TEST_F(NboxProfiler, AFileItCannotOpenFailsInitNamingIt) {
  const std::string bad = dir_ + "/no-such-folder/trace.jsonl";
  setenv("NBOX_PROFILE_TRACE", bad.c_str(), 1);
  void* context = reinterpret_cast<void*>(0x1);
  int mask = -1;
  ClearWarning();
  EXPECT_EQ(profiler_->init(&context, 1, &mask, "world", 1, 4, 0, CaptureLog), ncclSystemError);
  EXPECT_EQ(context, nullptr);
  EXPECT_EQ(mask, 0);
  EXPECT_NE(LastWarning().find(bad), std::string::npos) << LastWarning();
  EXPECT_NE(LastWarning().find("No such file or directory"), std::string::npos) << LastWarning();
}

}  // namespace
}  // namespace nbox::bridge::testing
