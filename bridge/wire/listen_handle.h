// The nbox plugin's listen handle: the 128 bytes (NCCL_NET_HANDLE_MAXSIZE) that listen()
// writes and that travel between ranks through a bootstrap (NCCL's, the host runtime's, or
// nbox-cosim's CosimBootstrapRoot), never through the bridge itself. The plugin writes and
// reads it; the server side decodes real ranks' handles and makes up the handles of emulated
// ranks, so the layout lives here, shared.
//
// Little-endian layout:
//   0 magic "NBXH"   4 version u32 (1)   8 listener's rank u32   12 zero u32
//   16 listen id u64   24 nonce u64
//   32 connect progress u64: 0 from listen(); connect() keeps its comm id here, because NCCL
//      passes the same handle memory on every call of a connect in progress
//   40..127 zero
//
// Synthetic handles: an emulated rank has no plugin, so nbox-cosim invents its handles. Their
// listen id has the top bit set (a plugin draws its ids from a counter starting at 1, so its
// own never do) and encodes which (sender, lane) the listen is for; their nonce is 0. A real
// rank connecting to one is answered by the server itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "bridge/wire/byte_io.h"

namespace nbox::bridge::wire {

inline constexpr size_t kListenHandleBytes = 128;  // NCCL_NET_HANDLE_MAXSIZE
inline constexpr uint8_t kListenHandleMagic[4] = {'N', 'B', 'X', 'H'};
inline constexpr uint32_t kListenHandleVersion = 1;
inline constexpr size_t kListenHandleProgressOffset = 32;
inline constexpr uint64_t kSyntheticListenBit = uint64_t{1} << 63;

struct ListenHandle {
  uint32_t rank = 0;
  uint64_t listen = 0;
  uint64_t nonce = 0;
  uint64_t progress = 0;
};

// Writes all kListenHandleBytes bytes of `out`.
inline void EncodeListenHandle(const ListenHandle& handle, void* out) {
  auto* bytes = static_cast<uint8_t*>(out);
  std::memset(bytes, 0, kListenHandleBytes);
  std::memcpy(bytes, kListenHandleMagic, 4);
  PutU32(bytes + 4, kListenHandleVersion);
  PutU32(bytes + 8, handle.rank);
  PutU64(bytes + 16, handle.listen);
  PutU64(bytes + 24, handle.nonce);
  PutU64(bytes + kListenHandleProgressOffset, handle.progress);
}

// False when `in` (kListenHandleBytes bytes) was not written by EncodeListenHandle.
inline bool DecodeListenHandle(const void* in, ListenHandle* handle) {
  const auto* bytes = static_cast<const uint8_t*>(in);
  if (std::memcmp(bytes, kListenHandleMagic, 4) != 0 || GetU32(bytes + 4) != kListenHandleVersion ||
      GetU32(bytes + 12) != 0) {
    return false;
  }
  handle->rank = GetU32(bytes + 8);
  handle->listen = GetU64(bytes + 16);
  handle->nonce = GetU64(bytes + 24);
  handle->progress = GetU64(bytes + kListenHandleProgressOffset);
  return true;
}

inline void SetListenHandleProgress(void* handle, uint64_t progress) {
  PutU64(static_cast<uint8_t*>(handle) + kListenHandleProgressOffset, progress);
}

// The listen id of emulated rank's synthetic listen for messages from `sender` on `lane`
// (sender < 2^31, lane < 2^32).
inline uint64_t SyntheticListenId(uint32_t sender, uint32_t lane) {
  return kSyntheticListenBit | (uint64_t{sender & 0x7fffffffu} << 32) | lane;
}

inline bool IsSyntheticListenId(uint64_t listen) {
  return (listen & kSyntheticListenBit) != 0;
}

// False when `listen` is not synthetic.
inline bool DecodeSyntheticListenId(uint64_t listen, uint32_t* sender, uint32_t* lane) {
  if (!IsSyntheticListenId(listen)) return false;
  *sender = static_cast<uint32_t>((listen >> 32) & 0x7fffffffu);
  *lane = static_cast<uint32_t>(listen & 0xffffffffu);
  return true;
}

}  // namespace nbox::bridge::wire
