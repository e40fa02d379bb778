#include "bridge/host/unique_id.h"

#include <cstring>

#include "bridge/host/host_error.h"

namespace nbox::host {
namespace {

constexpr uint32_t kMagic = 0x4e425855;  // "NBXU"
constexpr uint32_t kVersion = 1;

struct Layout {
  uint32_t magic;
  uint32_t version;
  uint64_t nonce;
  bridge::InetAddress root;
};
static_assert(sizeof(Layout) <= NBOX_UNIQUE_ID_BYTES, "unique id too small");

}  // namespace

nboxUniqueId EncodeUniqueId(const UniqueIdContents& contents) {
  nboxUniqueId id;
  std::memset(&id, 0, sizeof(id));
  const Layout layout{kMagic, kVersion, contents.nonce, contents.root};
  std::memcpy(id.internal, &layout, sizeof(layout));
  return id;
}

UniqueIdContents DecodeUniqueId(const nboxUniqueId& id) {
  Layout layout;
  std::memcpy(&layout, id.internal, sizeof(layout));
  if (layout.magic != kMagic || layout.version != kVersion) {
    throw HostError(nboxInvalidArgument,
                    "the unique id was not made by nboxGetUniqueId (of this nbox version)");
  }
  const int family = layout.root.family();
  if (family != AF_INET && family != AF_INET6) {
    throw HostError(nboxInvalidArgument, "the unique id holds no root address");
  }
  return UniqueIdContents{layout.nonce, layout.root};
}

std::string UniqueIdToHex(const nboxUniqueId& id) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * NBOX_UNIQUE_ID_BYTES);
  for (unsigned char byte : id.internal) {
    text.push_back(kDigits[byte >> 4]);
    text.push_back(kDigits[byte & 15]);
  }
  return text;
}

nboxUniqueId UniqueIdFromHex(const std::string& text) {
  if (text.size() != 2 * NBOX_UNIQUE_ID_BYTES) {
    throw HostError(nboxInvalidArgument,
                    "a unique id in text form has " + std::to_string(2 * NBOX_UNIQUE_ID_BYTES) +
                        " hex digits, got " + std::to_string(text.size()) + " characters");
  }
  auto digit = [&](size_t i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw HostError(nboxInvalidArgument, "a unique id in text form is hex digits; character " +
                                             std::to_string(i) + " is '" + std::string(1, c) + "'");
  };
  nboxUniqueId id;
  for (size_t i = 0; i < NBOX_UNIQUE_ID_BYTES; ++i) {
    id.internal[i] = static_cast<char>(digit(2 * i) * 16 + digit(2 * i + 1));
  }
  DecodeUniqueId(id);  // reject well-formed hex that is not an id
  return id;
}

}  // namespace nbox::host
