// The decoder's promises, checked on arbitrary bytes; shared by the libFuzzer target
// (decoder_fuzzer.cc) and the corpus replay test (tests/bridge/wire_corpus_test.cc).
//
// For both directions, and for the server's pre-authentication size limit too:
//   - decoding never reads outside the input (AddressSanitizer watches that in the fuzzer);
//   - an accepted frame re-encodes to exactly the bytes it was decoded from;
//   - feeding the same bytes to the streaming decoder in odd-sized pieces gives the same
//     frames and the same final refusal as decoding them in one piece.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bridge/wire/frame_codec.h"

namespace nbox::bridge::fuzz {

struct DecoderCheck {
  std::string violation;                    // "" when every promise held
  std::vector<wire::MessageType> accepted;  // frames accepted in any direction
};

DecoderCheck CheckDecoder(const uint8_t* data, size_t size);

}  // namespace nbox::bridge::fuzz
