// What nboxtcp puts on a TCP connection.
//
// A connection carries one direction. The connecting side first sends a Hello naming the
// listen comm it wants (the nonce from the handle), then messages, each a MessageHeader
// followed by `size` payload bytes. Integers are little-endian.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nbox::bridge::tcp {

inline constexpr uint32_t kHelloMagic = 0x4e425848;    // "NBXH"
inline constexpr uint32_t kMessageMagic = 0x4e42584d;  // "NBXM"
inline constexpr uint32_t kWireVersion = 1;

inline constexpr size_t kHelloBytes = 16;   // magic u32, version u32, nonce u64
inline constexpr size_t kHeaderBytes = 16;  // magic u32, tag i32, size u64

struct Hello {
  uint32_t magic = kHelloMagic;
  uint32_t version = kWireVersion;
  uint64_t nonce = 0;
};

struct MessageHeader {
  uint32_t magic = kMessageMagic;
  int32_t tag = 0;
  uint64_t size = 0;
};

void EncodeHello(const Hello& hello, uint8_t out[kHelloBytes]);
Hello DecodeHello(const uint8_t in[kHelloBytes]);
void EncodeHeader(const MessageHeader& header, uint8_t out[kHeaderBytes]);
MessageHeader DecodeHeader(const uint8_t in[kHeaderBytes]);

}  // namespace nbox::bridge::tcp
