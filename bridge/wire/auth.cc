#include "bridge/wire/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstring>
#include <stdexcept>

#include "bridge/wire/byte_io.h"
#include "bridge/wire/frame_codec.h"

namespace nbox::bridge::wire {
namespace {

constexpr char kServerLabel[] = "nbox-bridge-1 server";
constexpr char kClientLabel[] = "nbox-bridge-1 client";

Mac Proof(const char* label, const std::string& secret, const std::vector<uint8_t>& hello_body,
          const Nonce& server_nonce) {
  std::vector<uint8_t> transcript(label, label + std::strlen(label));
  transcript.insert(transcript.end(), hello_body.begin(), hello_body.end());
  transcript.insert(transcript.end(), server_nonce.begin(), server_nonce.end());
  return HmacSha256(secret, transcript.data(), transcript.size());
}

}  // namespace

Mac HmacSha256(const std::string& key, const uint8_t* data, size_t size) {
  Mac mac{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data, size, mac.data(),
           &length) == nullptr ||
      length != mac.size()) {
    throw std::runtime_error("HMAC-SHA256 failed in OpenSSL");
  }
  return mac;
}

bool MacsEqual(const Mac& a, const Mac& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Nonce RandomNonce() {
  Nonce nonce{};
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1) {
    throw std::runtime_error("OpenSSL RAND_bytes failed: no random bytes for a nonce");
  }
  return nonce;
}

uint64_t RandomU64() {
  uint8_t bytes[8];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    throw std::runtime_error("OpenSSL RAND_bytes failed: no random bytes");
  }
  return GetU64(bytes);
}

Mac ServerProof(const std::string& secret, const std::vector<uint8_t>& hello_body,
                const Nonce& server_nonce) {
  return Proof(kServerLabel, secret, hello_body, server_nonce);
}

Mac ClientProof(const std::string& secret, const std::vector<uint8_t>& hello_body,
                const Nonce& server_nonce) {
  return Proof(kClientLabel, secret, hello_body, server_nonce);
}

std::vector<uint8_t> HelloBody(const Hello& hello) {
  std::vector<uint8_t> frame = EncodeFrame(hello);
  return std::vector<uint8_t>(frame.begin() + kFrameHeaderBytes, frame.end());
}

std::string CheckSecret(const std::string& secret, const std::string& origin) {
  if (secret.empty()) return origin + " is not set: the bridge needs a shared secret";
  if (secret.size() < kMinSecretBytes) {
    return origin + " holds " + std::to_string(secret.size()) +
           " characters; a secret needs at least " + std::to_string(kMinSecretBytes);
  }
  return "";
}

}  // namespace nbox::bridge::wire
