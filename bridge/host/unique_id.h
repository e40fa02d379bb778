// What an nboxUniqueId holds: the bootstrap root's address and the communicator's nonce.
#pragma once

#include <cstdint>
#include <string>

#include "bridge/include/nbox_host.h"
#include "bridge/net/inet_address.h"

namespace nbox::host {

struct UniqueIdContents {
  uint64_t nonce = 0;  // random; every bootstrap message of the communicator carries it
  bridge::InetAddress root;
};

nboxUniqueId EncodeUniqueId(const UniqueIdContents& contents);
// Throws HostError(nboxInvalidArgument) when `id` was not made by EncodeUniqueId.
UniqueIdContents DecodeUniqueId(const nboxUniqueId& id);

std::string UniqueIdToHex(const nboxUniqueId& id);
// Throws HostError(nboxInvalidArgument) naming what is wrong with `text`.
nboxUniqueId UniqueIdFromHex(const std::string& text);

}  // namespace nbox::host
