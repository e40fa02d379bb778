// nboxNetExt_v1 and _v2 of libnccl-net-nbox.so (bridge/include/nbox_net_ext.h): the wait, and
// in v2 op reports, the rank's virtual clock and synthetic completions for the host runtime. A
// process is one rank with one session (BridgeClient), so every call goes to the process's latest
// session; `ctx` is not needed to find it.
#include "bridge/include/nbox_net_ext.h"

#include <cstdint>
#include <memory>

#include "bridge/nbox/bridge_client.h"
#include "bridge/nbox/nbox_log.h"

namespace nbox::bridge::nboxnet {
namespace {

uint64_t EventCount() {
  const std::shared_ptr<BridgeClient> client = BridgeClient::Latest();
  return client != nullptr ? client->EventCount() : 0;
}

void WaitEvents(uint64_t seen, int timeout_us) {
  const std::shared_ptr<BridgeClient> client = BridgeClient::Latest();
  if (client != nullptr) client->WaitEvents(seen, timeout_us);
}

// Out-of-range enum values are passed on as such (255) so that the decoder's rules refuse them.
uint8_t Narrow(int value) {
  return value >= 0 && value < 255 ? static_cast<uint8_t>(value) : 255;
}

int ReportOp(void* ctx, const nboxOpReport* report) {
  (void)ctx;
  if (report == nullptr) return ncclInvalidArgument;
  const std::shared_ptr<BridgeClient> client = BridgeClient::Latest();
  if (client == nullptr) {
    NBOX_NET_WARN("reportOp before init: no session with nbox-cosim");
    return ncclInvalidUsage;
  }
  wire::OpReport op;
  op.kind = static_cast<wire::OpReportKind>(Narrow(report->kind));
  op.op = static_cast<wire::ReportedOp>(Narrow(report->op));
  op.dtype = Narrow(report->dtype);
  op.redop = Narrow(report->redop);
  op.root = report->root;
  op.count = report->count;
  op.bytes = report->bytes;
  op.seq = report->seq;
  return client->ReportOp(op);
}

int VirtualTimeNs(void* ctx, uint64_t* ns) {
  (void)ctx;
  if (ns == nullptr) return ncclInvalidArgument;
  const std::shared_ptr<BridgeClient> client = BridgeClient::Latest();
  if (client == nullptr) return ncclInvalidUsage;
  return client->VirtualTimeNs(ns);
}

int TestFlags(void* request, int* done, int* sizes, uint32_t* flags) {
  return BridgeClient::TestFlags(request, done, sizes, flags);
}

void ProgramWaiting(int waiting) {
  const std::shared_ptr<BridgeClient> client = BridgeClient::Latest();
  if (client != nullptr) client->ProgramWaiting(waiting != 0);
}

}  // namespace
}  // namespace nbox::bridge::nboxnet

// Exported (see nbox_plugin.map): v1, the wait alone, stays for older runtimes.
extern "C" {
nboxNetExt_v1_t nboxNetExt_v1 = {1, nbox::bridge::nboxnet::EventCount,
                                 nbox::bridge::nboxnet::WaitEvents};
nboxNetExt_v2_t nboxNetExt_v2 = {2,
                                 nbox::bridge::nboxnet::EventCount,
                                 nbox::bridge::nboxnet::WaitEvents,
                                 nbox::bridge::nboxnet::ReportOp,
                                 nbox::bridge::nboxnet::VirtualTimeNs,
                                 nbox::bridge::nboxnet::TestFlags,
                                 nbox::bridge::nboxnet::ProgramWaiting};
}
