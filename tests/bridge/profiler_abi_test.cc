// The ncclProfiler_v5 ABI as declared in bridge/profiler/profiler_v5.h.
//
// Expected offsets and sizes are the LP64 layout worked out by hand from NCCL 2.28.9's
// ext-profiler/example/nccl/profiler_v5.h and profiler.h (8-byte pointers, size_t and
// uint64_t, 4-byte int, pid_t and enums, 1-byte bool and uint8_t, natural alignment):
//   descriptor: type 0, parentObj 8, rank 16, 4 bytes padding, the union at 24;
//   coll (the largest member, 88 bytes): seqNumber 0, func 8, sendBuff 16, recvBuff 24,
//     count 32, root 40 (+4 padding), datatype 48, nChannels 56, nWarps 57 (+6 padding),
//     algo 64, proto 72, parentGroup 80;
//   so sizeof = 24 + 88 = 112.
#include <gtest/gtest.h>

#include <cstddef>

#include "bridge/profiler/profiler_v5.h"

extern "C" int NboxProfilerAbiDescriptorSizeInC(void);

namespace nbox::bridge::testing {
namespace {

using Descr = ncclProfilerEventDescr_v5_t;

TEST(NcclProfilerAbi, EventTypeBitsMatchNccl) {
  EXPECT_EQ(ncclProfileGroup, 1);
  EXPECT_EQ(ncclProfileColl, 2);
  EXPECT_EQ(ncclProfileP2p, 4);
  EXPECT_EQ(ncclProfileProxyOp, 8);
  EXPECT_EQ(ncclProfileProxyStep, 16);
  EXPECT_EQ(ncclProfileProxyCtrl, 32);
  EXPECT_EQ(ncclProfileKernelCh, 64);
  EXPECT_EQ(ncclProfileNetPlugin, 128);
  EXPECT_EQ(ncclProfileGroupApi, 256);
  EXPECT_EQ(ncclProfileCollApi, 512);
  EXPECT_EQ(ncclProfileP2pApi, 1024);
  EXPECT_EQ(ncclProfileKernelLaunch, 2048);
}

TEST(NcclProfilerAbi, StatesMatchNccl) {
  EXPECT_EQ(ncclProfilerProxyOpSendPosted, 0);
  EXPECT_EQ(ncclProfilerProxyStepSendGPUWait, 8);
  EXPECT_EQ(ncclProfilerProxyCtrlIdle, 13);
  EXPECT_EQ(ncclProfilerProxyCtrlAppendEnd, 18);
  EXPECT_EQ(ncclProfilerProxyOpInProgress_v4, 19);
  EXPECT_EQ(ncclProfilerProxyStepSendPeerWait_v4, 20);
  EXPECT_EQ(ncclProfilerNetPluginUpdate, 21);
  EXPECT_EQ(ncclProfilerKernelChStop, 22);
  EXPECT_EQ(ncclProfilerBeginGroupApiEnd, 24);
  EXPECT_EQ(sizeof(ncclProfilerEventState_v5_t), 4u);
}

TEST(NcclProfilerAbi, DescriptorHeaderAndSize) {
  EXPECT_EQ(offsetof(Descr, type), 0u);
  EXPECT_EQ(offsetof(Descr, parentObj), 8u);
  EXPECT_EQ(offsetof(Descr, rank), 16u);
  EXPECT_EQ(offsetof(Descr, groupApi), 24u);
  EXPECT_EQ(sizeof(Descr), 112u);
  EXPECT_EQ(alignof(Descr), 8u);
  EXPECT_EQ(NboxProfilerAbiDescriptorSizeInC(), 112);
}

TEST(NcclProfilerAbi, CollMembers) {
  EXPECT_EQ(offsetof(Descr, coll.seqNumber), 24u);
  EXPECT_EQ(offsetof(Descr, coll.func), 32u);
  EXPECT_EQ(offsetof(Descr, coll.sendBuff), 40u);
  EXPECT_EQ(offsetof(Descr, coll.recvBuff), 48u);
  EXPECT_EQ(offsetof(Descr, coll.count), 56u);
  EXPECT_EQ(offsetof(Descr, coll.root), 64u);
  EXPECT_EQ(offsetof(Descr, coll.datatype), 72u);
  EXPECT_EQ(offsetof(Descr, coll.nChannels), 80u);
  EXPECT_EQ(offsetof(Descr, coll.nWarps), 81u);
  EXPECT_EQ(offsetof(Descr, coll.algo), 88u);
  EXPECT_EQ(offsetof(Descr, coll.proto), 96u);
  EXPECT_EQ(offsetof(Descr, coll.parentGroup), 104u);
}

TEST(NcclProfilerAbi, OtherUnionMembers) {
  // groupApi: two ints.
  EXPECT_EQ(offsetof(Descr, groupApi.groupDepth), 28u);
  // collApi: func 0, count 8, datatype 16, root 24, stream 32, graphCaptured 40.
  EXPECT_EQ(offsetof(Descr, collApi.root), 48u);
  EXPECT_EQ(offsetof(Descr, collApi.stream), 56u);
  EXPECT_EQ(offsetof(Descr, collApi.graphCaptured), 64u);
  // p2pApi: func 0, count 8, datatype 16, stream 24, graphCaptured 32.
  EXPECT_EQ(offsetof(Descr, p2pApi.stream), 48u);
  EXPECT_EQ(offsetof(Descr, p2pApi.graphCaptured), 56u);
  // p2p: func 0, buff 8, datatype 16, count 24, peer 32, nChannels 36, parentGroup 40.
  EXPECT_EQ(offsetof(Descr, p2p.count), 48u);
  EXPECT_EQ(offsetof(Descr, p2p.peer), 56u);
  EXPECT_EQ(offsetof(Descr, p2p.nChannels), 60u);
  EXPECT_EQ(offsetof(Descr, p2p.parentGroup), 64u);
  // proxyOp: pid 0, channelId 4, peer 8, nSteps 12, chunkSize 16, isSend 20.
  EXPECT_EQ(offsetof(Descr, proxyOp.pid), 24u);
  EXPECT_EQ(offsetof(Descr, proxyOp.channelId), 28u);
  EXPECT_EQ(offsetof(Descr, proxyOp.peer), 32u);
  EXPECT_EQ(offsetof(Descr, proxyOp.isSend), 44u);
  EXPECT_EQ(offsetof(Descr, proxyStep.step), 24u);
  // kernelCh: channelId 0, 7 bytes padding, pTimer 8.
  EXPECT_EQ(offsetof(Descr, kernelCh.channelId), 24u);
  EXPECT_EQ(offsetof(Descr, kernelCh.pTimer), 32u);
  EXPECT_EQ(offsetof(Descr, netPlugin.id), 24u);
  EXPECT_EQ(offsetof(Descr, netPlugin.data), 32u);
}

TEST(NcclProfilerAbi, StateArgsAndTable) {
  EXPECT_EQ(sizeof(ncclProfilerEventStateArgs_v5_t), 8u);
  EXPECT_EQ(offsetof(ncclProfilerEventStateArgs_v5_t, kernelCh.pTimer), 0u);
  // name, then init, startEvent, stopEvent, recordEventState, finalize.
  EXPECT_EQ(sizeof(ncclProfiler_v5_t), 48u);
  EXPECT_EQ(offsetof(ncclProfiler_v5_t, init), 8u);
  EXPECT_EQ(offsetof(ncclProfiler_v5_t, startEvent), 16u);
  EXPECT_EQ(offsetof(ncclProfiler_v5_t, stopEvent), 24u);
  EXPECT_EQ(offsetof(ncclProfiler_v5_t, recordEventState), 32u);
  EXPECT_EQ(offsetof(ncclProfiler_v5_t, finalize), 40u);
}

}  // namespace
}  // namespace nbox::bridge::testing
