#include "bridge/host/connections.h"

#include <cstring>

#include "bridge/wire/listen_handle.h"

namespace nbox::host {
namespace {

constexpr size_t kHandleBytes = NCCL_NET_HANDLE_MAXSIZE;

}  // namespace

Connections::Connections(const NetPlugin& plugin, void* ctx, int device, int rank, int nranks,
                         int lanes)
    : plugin_(plugin),
      ctx_(ctx),
      device_(device),
      rank_(rank),
      nranks_(nranks),
      lanes_(lanes),
      listen_comms_(static_cast<size_t>(nranks) * lanes, nullptr),
      send_comms_(static_cast<size_t>(nranks) * lanes, nullptr),
      recv_comms_(static_cast<size_t>(nranks) * lanes, nullptr),
      connect_handles_(static_cast<size_t>(nranks) * lanes),
      emulated_(static_cast<size_t>(nranks), false) {}

Connections::~Connections() {
  CloseAll();
}

std::vector<uint8_t> Connections::Listen() {
  std::vector<uint8_t> blob(static_cast<size_t>(nranks_) * lanes_ * kHandleBytes, 0);
  for (int sender = 0; sender < nranks_; ++sender) {
    if (sender == rank_) continue;
    for (int lane = 0; lane < lanes_; ++lane) {
      const size_t i = Index(sender, lane);
      const ncclResult_t result =
          plugin_.net().listen(ctx_, device_, blob.data() + i * kHandleBytes, &listen_comms_[i]);
      if (result != ncclSuccess) {
        throw PluginError("listen", result);
      }
    }
  }
  return blob;
}

void Connections::SetPeerHandles(const std::vector<std::vector<uint8_t>>& blobs) {
  for (int receiver = 0; receiver < nranks_; ++receiver) {
    if (receiver == rank_) continue;
    for (int lane = 0; lane < lanes_; ++lane) {
      // Receiver's listen for (sender = this rank, lane).
      const uint8_t* handle = blobs[receiver].data() + Index(rank_, lane) * kHandleBytes;
      connect_handles_[Index(receiver, lane)].assign(handle, handle + kHandleBytes);
    }
    bridge::wire::ListenHandle decoded;
    emulated_[receiver] = bridge::wire::DecodeListenHandle(
                              blobs[receiver].data() + Index(rank_, 0) * kHandleBytes, &decoded) &&
                          bridge::wire::IsSyntheticListenId(decoded.listen);
  }
}

bool Connections::any_emulated() const {
  for (bool e : emulated_) {
    if (e) return true;
  }
  return false;
}

void* Connections::SendComm(int peer, int lane) {
  const size_t i = Index(peer, lane);
  if (send_comms_[i] != nullptr) return send_comms_[i];
  ncclNetDeviceHandle_v11_t* device_handle = nullptr;
  const ncclResult_t result = plugin_.net().connect(ctx_, device_, connect_handles_[i].data(),
                                                    &send_comms_[i], &device_handle);
  if (result != ncclSuccess) {
    throw PluginError(
        "connect to rank " + std::to_string(peer) + " (lane " + std::to_string(lane) + ")", result);
  }
  return send_comms_[i];
}

void* Connections::RecvComm(int peer, int lane) {
  const size_t i = Index(peer, lane);
  if (recv_comms_[i] != nullptr) return recv_comms_[i];
  ncclNetDeviceHandle_v11_t* device_handle = nullptr;
  const ncclResult_t result =
      plugin_.net().accept(listen_comms_[i], &recv_comms_[i], &device_handle);
  if (result != ncclSuccess) {
    throw PluginError(
        "accept from rank " + std::to_string(peer) + " (lane " + std::to_string(lane) + ")",
        result);
  }
  return recv_comms_[i];
}

void Connections::CloseAll() {
  for (void*& comm : send_comms_) {
    if (comm != nullptr) plugin_.net().closeSend(comm);
    comm = nullptr;
  }
  for (void*& comm : recv_comms_) {
    if (comm != nullptr) plugin_.net().closeRecv(comm);
    comm = nullptr;
  }
  for (void*& comm : listen_comms_) {
    if (comm != nullptr) plugin_.net().closeListen(comm);
    comm = nullptr;
  }
}

}  // namespace nbox::host
