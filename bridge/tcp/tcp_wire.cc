#include "bridge/tcp/tcp_wire.h"

#include <endian.h>

#include <cstring>

namespace nbox::bridge::tcp {
namespace {

void Put32(uint8_t* out, uint32_t value) {
  value = htole32(value);
  std::memcpy(out, &value, 4);
}
void Put64(uint8_t* out, uint64_t value) {
  value = htole64(value);
  std::memcpy(out, &value, 8);
}
uint32_t Get32(const uint8_t* in) {
  uint32_t value;
  std::memcpy(&value, in, 4);
  return le32toh(value);
}
uint64_t Get64(const uint8_t* in) {
  uint64_t value;
  std::memcpy(&value, in, 8);
  return le64toh(value);
}

}  // namespace

void EncodeHello(const Hello& hello, uint8_t out[kHelloBytes]) {
  Put32(out, hello.magic);
  Put32(out + 4, hello.version);
  Put64(out + 8, hello.nonce);
}

Hello DecodeHello(const uint8_t in[kHelloBytes]) {
  return Hello{Get32(in), Get32(in + 4), Get64(in + 8)};
}

void EncodeHeader(const MessageHeader& header, uint8_t out[kHeaderBytes]) {
  Put32(out, header.magic);
  Put32(out + 4, static_cast<uint32_t>(header.tag));
  Put64(out + 8, header.size);
}

MessageHeader DecodeHeader(const uint8_t in[kHeaderBytes]) {
  return MessageHeader{Get32(in), static_cast<int32_t>(Get32(in + 4)), Get64(in + 8)};
}

}  // namespace nbox::bridge::tcp
