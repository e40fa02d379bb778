// The ncclNet ABI as declared in bridge/nccl/ and as exported by libnccl-net-nboxtcp.so.
//
// Expected offsets and sizes are the LP64 layout worked out by hand from NCCL 2.28.9's
// ext-net/example/nccl/net_v*.h (8-byte pointers and size_t, 4-byte int/float/enum, natural
// alignment); a table laid out differently would crash NCCL.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bridge/include/nbox_net_ext.h"
#include "bridge/nccl/net.h"
#include "tests/bridge/exported_symbols.h"
#include "tests/bridge/plugin_loader.h"

extern "C" int NboxAbiCheckCompiledAsC(void);

namespace nbox::bridge::testing {
namespace {

// Two devices for every test of this binary (device 0 is 127.0.0.1 everywhere); the plugin
// reads the variable at its first init.
const bool kDevicesSet = setenv("NBOX_TCP_IFADDR", "127.0.0.1, lo", 1) == 0;

TEST(NcclNetAbi, ConstantsMatchNccl) {
  EXPECT_EQ(NCCL_NET_HANDLE_MAXSIZE, 128);
  EXPECT_EQ(NCCL_PTR_HOST, 1);
  EXPECT_EQ(NCCL_PTR_CUDA, 2);
  EXPECT_EQ(NCCL_PTR_DMABUF, 4);
  EXPECT_EQ(NCCL_NET_MAX_REQUESTS, 32);
  EXPECT_EQ(NCCL_NET_MAX_DEVS_PER_NIC, 4);
  EXPECT_EQ(NCCL_NET_OPTIONAL_RECV_COMPLETION, 1);
  EXPECT_EQ(NCCL_MAX_NET_SIZE_BYTES, 1LL << 40);
  EXPECT_EQ(ncclRemoteError, 6);
  EXPECT_EQ(ncclInvalidUsage, 5);
  EXPECT_EQ(NCCL_NET_DEVICE_HOST, 0);
  EXPECT_EQ(NboxAbiCheckCompiledAsC(), 128);
}

TEST(NcclNetAbi, PropertiesLayout) {
  EXPECT_EQ(sizeof(ncclNetProperties_v8_t), 64u);
  EXPECT_EQ(offsetof(ncclNetProperties_v8_t, regIsGlobal), 28u);
  EXPECT_EQ(offsetof(ncclNetProperties_v8_t, speed), 32u);
  EXPECT_EQ(offsetof(ncclNetProperties_v8_t, latency), 40u);
  EXPECT_EQ(offsetof(ncclNetProperties_v8_t, netDeviceVersion), 56u);

  EXPECT_EQ(sizeof(ncclNetProperties_v9_t), 104u);
  EXPECT_EQ(offsetof(ncclNetProperties_v9_t, forceFlush), 32u);
  EXPECT_EQ(offsetof(ncclNetProperties_v9_t, speed), 36u);
  EXPECT_EQ(offsetof(ncclNetProperties_v9_t, vProps), 64u);
  EXPECT_EQ(offsetof(ncclNetProperties_v9_t, maxP2pBytes), 88u);
  EXPECT_EQ(offsetof(ncclNetProperties_v9_t, maxCollBytes), 96u);

  EXPECT_EQ(sizeof(ncclNetProperties_v10_t), 104u);
  EXPECT_EQ(offsetof(ncclNetProperties_v10_t, maxCollBytes), 96u);

  EXPECT_EQ(sizeof(ncclNetProperties_v11_t), 112u);
  EXPECT_EQ(offsetof(ncclNetProperties_v11_t, vProps), 64u);
  EXPECT_EQ(offsetof(ncclNetProperties_v11_t, maxMultiRequestSize), 104u);
  EXPECT_EQ(sizeof(ncclNetVDeviceProps_v11_t), 20u);
  EXPECT_EQ(sizeof(ncclNetDeviceHandle_v11_t), 32u);
  EXPECT_EQ(offsetof(ncclNetDeviceHandle_v11_t, needsProxyProgress), 24u);
  EXPECT_EQ(sizeof(ncclNetAttr_v11_t), 44u);
  EXPECT_EQ(offsetof(ncclNetAttr_v11_t, op), 32u);
}

TEST(NcclNetAbi, TableLayout) {
  // name, then one pointer per function: 18 (v8), 19 (v9, v10: + makeVDevice),
  // 21 (v11: + finalize, setNetAttr).
  EXPECT_EQ(sizeof(ncclNet_v8_t), 8u * 19);
  EXPECT_EQ(sizeof(ncclNet_v9_t), 8u * 20);
  EXPECT_EQ(sizeof(ncclNet_v10_t), 8u * 20);
  EXPECT_EQ(sizeof(ncclNet_v11_t), 8u * 22);
  EXPECT_EQ(offsetof(ncclNet_v11_t, init), 8u);
  EXPECT_EQ(offsetof(ncclNet_v11_t, listen), 32u);
  EXPECT_EQ(offsetof(ncclNet_v11_t, isend), 80u);
  EXPECT_EQ(offsetof(ncclNet_v11_t, test), 104u);
  EXPECT_EQ(offsetof(ncclNet_v11_t, irecvConsumed), 144u);
  EXPECT_EQ(offsetof(ncclNet_v11_t, makeVDevice), 152u);
  EXPECT_EQ(offsetof(ncclNet_v11_t, finalize), 160u);
  EXPECT_EQ(offsetof(ncclNet_v11_t, setNetAttr), 168u);
  EXPECT_EQ(offsetof(ncclNet_v8_t, irecvConsumed), 144u);
  EXPECT_EQ(offsetof(ncclNet_v9_t, makeVDevice), 152u);
}

TEST(TcpPluginExports, NmListsExactlyTheDataTables) {
  EXPECT_TRUE(ExportsExactlyTheseData(TcpPluginPath(),
                                      {"ncclNetPlugin_v11", "ncclNetPlugin_v10", "ncclNetPlugin_v9",
                                       "ncclNetPlugin_v8", "nboxNetExt_v1"}));
}

class TcpPluginTables : public ::testing::Test {
 protected:
  PluginLibrary library_{TcpPluginPath()};
};

TEST_F(TcpPluginTables, EveryVersionIsFoundByDlsymAndNamed) {
  ASSERT_TRUE(library_.loaded()) << library_.error();
  auto* v11 = library_.Symbol<ncclNet_v11_t>("ncclNetPlugin_v11");
  auto* v10 = library_.Symbol<ncclNet_v10_t>("ncclNetPlugin_v10");
  auto* v9 = library_.Symbol<ncclNet_v9_t>("ncclNetPlugin_v9");
  auto* v8 = library_.Symbol<ncclNet_v8_t>("ncclNetPlugin_v8");
  ASSERT_NE(v11, nullptr);
  ASSERT_NE(v10, nullptr);
  ASSERT_NE(v9, nullptr);
  ASSERT_NE(v8, nullptr);
  EXPECT_STREQ(v11->name, "nboxtcp");
  EXPECT_STREQ(v8->name, "nboxtcp");
  // NCCL calls finalize for every context and needs test, isend, irecv, close*.
  EXPECT_NE(v11->finalize, nullptr);
  EXPECT_NE(v11->test, nullptr);
  EXPECT_NE(v11->iflush, nullptr);
  // No device offload, no DMA-BUF, no virtual NICs: NCCL checks these for NULL.
  EXPECT_EQ(v11->regMrDmaBuf, nullptr);
  EXPECT_EQ(v11->getDeviceMr, nullptr);
  EXPECT_EQ(v11->makeVDevice, nullptr);
  auto* ext = library_.Symbol<nboxNetExt_v1_t>(NBOX_NET_EXT_SYMBOL);
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->version, 1);
}

TEST_F(TcpPluginTables, DevicesComeFromNboxTcpIfaddr) {
  auto* net = library_.Symbol<ncclNet_v11_t>("ncclNetPlugin_v11");
  ASSERT_NE(net, nullptr);
  void* ctx = nullptr;
  ASSERT_EQ(net->init(&ctx, 42, nullptr, nullptr, nullptr), ncclSuccess);
  int ndev = 0;
  ASSERT_EQ(net->devices(&ndev), ncclSuccess);
  ASSERT_EQ(ndev, 2);  // "127.0.0.1, lo"
  ncclNetProperties_v11_t props;
  ASSERT_EQ(net->getProperties(0, &props), ncclSuccess);
  EXPECT_STREQ(props.name, "127.0.0.1");
  EXPECT_EQ(props.ptrSupport, NCCL_PTR_HOST);
  EXPECT_EQ(props.guid, 0u);
  EXPECT_EQ(props.maxRecvs, 8);
  EXPECT_GT(props.maxComms, 0);
  EXPECT_EQ(props.netDeviceType, NCCL_NET_DEVICE_HOST);
  EXPECT_EQ(props.vProps.ndevs, 1);
  EXPECT_EQ(props.vProps.devs[0], 0);
  EXPECT_EQ(props.maxP2pBytes, static_cast<size_t>(NCCL_MAX_NET_SIZE_BYTES));
  EXPECT_EQ(props.maxMultiRequestSize, 1);
  // The loopback has no link speed: the documented default.
  EXPECT_EQ(props.speed, 10000);
  ASSERT_EQ(net->getProperties(1, &props), ncclSuccess);
  EXPECT_STREQ(props.name, "lo");
  EXPECT_EQ(props.guid, 1u);
  EXPECT_EQ(props.vProps.devs[0], 1);
  EXPECT_EQ(net->getProperties(2, &props), ncclInvalidArgument);
  EXPECT_EQ(net->finalize(ctx), ncclSuccess);
}

// getProperties of an older version must write exactly its own struct: NCCL passes a struct
// of that size, and a byte more would overwrite NCCL's stack.
template <typename Properties, typename Table>
void ExpectWritesOnlyItsOwnStruct(Table* table, size_t expected_size) {
  ASSERT_EQ(sizeof(Properties), expected_size);
  std::vector<unsigned char> buffer(sizeof(ncclNetProperties_v11_t) + 64, 0xAB);
  ASSERT_EQ(table->getProperties(0, reinterpret_cast<Properties*>(buffer.data())), ncclSuccess);
  for (size_t i = expected_size; i < buffer.size(); ++i) {
    ASSERT_EQ(buffer[i], 0xAB) << "byte " << i << " past a struct of " << expected_size;
  }
  const auto* props = reinterpret_cast<const Properties*>(buffer.data());
  EXPECT_EQ(props->ptrSupport, NCCL_PTR_HOST);
  EXPECT_STREQ(props->name, "127.0.0.1");
}

TEST_F(TcpPluginTables, OlderVersionsFillOnlyTheirOwnProperties) {
  auto* v8 = library_.Symbol<ncclNet_v8_t>("ncclNetPlugin_v8");
  auto* v9 = library_.Symbol<ncclNet_v9_t>("ncclNetPlugin_v9");
  auto* v10 = library_.Symbol<ncclNet_v10_t>("ncclNetPlugin_v10");
  ASSERT_TRUE(v8 && v9 && v10);
  ASSERT_EQ(v8->init(nullptr), ncclSuccess);
  ExpectWritesOnlyItsOwnStruct<ncclNetProperties_v8_t>(v8, 64);
  ExpectWritesOnlyItsOwnStruct<ncclNetProperties_v9_t>(v9, 104);
  ExpectWritesOnlyItsOwnStruct<ncclNetProperties_v10_t>(v10, 104);
}

TEST_F(TcpPluginTables, RegMrTakesHostMemoryOnly) {
  auto* net = library_.Symbol<ncclNet_v11_t>("ncclNetPlugin_v11");
  ASSERT_NE(net, nullptr);
  char data[64];
  void* mhandle = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(net->regMr(nullptr, data, sizeof(data), NCCL_PTR_HOST, &mhandle), ncclSuccess);
  EXPECT_EQ(net->deregMr(nullptr, mhandle), ncclSuccess);
  EXPECT_EQ(net->regMr(nullptr, data, sizeof(data), NCCL_PTR_CUDA, &mhandle), ncclInternalError);
}

}  // namespace
}  // namespace nbox::bridge::testing
