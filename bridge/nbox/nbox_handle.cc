#include <cstring>

#include "bridge/nbox/nbox_comms.h"
#include "bridge/wire/byte_io.h"

namespace nbox::bridge::nboxnet {
namespace {

constexpr uint8_t kHandleMagic[4] = {'N', 'B', 'X', 'H'};
constexpr uint32_t kHandleVersion = 1;
constexpr size_t kProgressOffset = 32;

}  // namespace

void EncodeHandle(const ListenHandle& handle, void* out) {
  auto* bytes = static_cast<uint8_t*>(out);
  std::memset(bytes, 0, NCCL_NET_HANDLE_MAXSIZE);
  std::memcpy(bytes, kHandleMagic, 4);
  wire::PutU32(bytes + 4, kHandleVersion);
  wire::PutU32(bytes + 8, handle.rank);
  wire::PutU64(bytes + 16, handle.listen);
  wire::PutU64(bytes + 24, handle.nonce);
  wire::PutU64(bytes + kProgressOffset, handle.progress);
}

bool DecodeHandle(const void* in, ListenHandle* handle) {
  const auto* bytes = static_cast<const uint8_t*>(in);
  if (std::memcmp(bytes, kHandleMagic, 4) != 0 || wire::GetU32(bytes + 4) != kHandleVersion ||
      wire::GetU32(bytes + 12) != 0) {
    return false;
  }
  handle->rank = wire::GetU32(bytes + 8);
  handle->listen = wire::GetU64(bytes + 16);
  handle->nonce = wire::GetU64(bytes + 24);
  handle->progress = wire::GetU64(bytes + kProgressOffset);
  return true;
}

void SetHandleProgress(void* handle, uint64_t progress) {
  wire::PutU64(static_cast<uint8_t*>(handle) + kProgressOffset, progress);
}

}  // namespace nbox::bridge::nboxnet
