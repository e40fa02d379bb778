// Authentication of a bridge connection: challenge-response with HMAC-SHA256 over a shared
// secret (OpenSSL's libcrypto), mutual, and bound to the Hello.
//
//   client -> Hello{rank, world, clock, pid, client nonce, job id}
//   server -> Challenge{server nonce, ServerProof}   ServerProof = HMAC(secret, "nbox-bridge-1
//             server" | Hello body | server nonce)
//   client checks ServerProof, then
//   client -> Auth{ClientProof}                      ClientProof = HMAC(secret, "nbox-bridge-1
//             client" | Hello body | server nonce)
//   server checks ClientProof -> Welcome, or Error(kAuthFailed) and close.
//
// Both nonces are fresh random bytes, so a recorded proof is worthless later; the labels
// differ, so neither side's proof can be reflected back as the other's; the Hello body (rank,
// world, job id) is inside the MAC, so it cannot be altered on the way. MACs are compared in
// constant time. The secret authenticates the connection only: nothing is encrypted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bridge/wire/messages.h"

namespace nbox::bridge::wire {

// Fewer secret bytes than this are refused (the environment variable must hold at least 16
// characters; nbox-cosim generates 32 random bytes in hex).
inline constexpr size_t kMinSecretBytes = 16;

Mac HmacSha256(const std::string& key, const uint8_t* data, size_t size);

// Equal without an early exit (CRYPTO_memcmp).
bool MacsEqual(const Mac& a, const Mac& b);

// Cryptographically random bytes (RAND_bytes); throws std::runtime_error if OpenSSL cannot.
Nonce RandomNonce();
uint64_t RandomU64();

// The proofs of the exchange above; `hello_body` is the Hello exactly as encoded on the wire
// (without the frame header).
Mac ServerProof(const std::string& secret, const std::vector<uint8_t>& hello_body,
                const Nonce& server_nonce);
Mac ClientProof(const std::string& secret, const std::vector<uint8_t>& hello_body,
                const Nonce& server_nonce);

// The body of `hello` as it travels (what the proofs cover).
std::vector<uint8_t> HelloBody(const Hello& hello);

// "" when `secret` is usable, else why not (for the setting named `origin`).
std::string CheckSecret(const std::string& secret, const std::string& origin);

}  // namespace nbox::bridge::wire
