// HMAC-SHA256 against RFC 4231's published vectors, the proofs of the challenge-response, the
// secret check, and the parsing of NBOX_BRIDGE endpoints.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bridge/wire/auth.h"
#include "bridge/wire/endpoint.h"

namespace nbox::bridge::wire {
namespace {

std::string Hex(const Mac& mac) {
  std::string text;
  char digits[3];
  for (uint8_t byte : mac) {
    std::snprintf(digits, sizeof(digits), "%02x", byte);
    text += digits;
  }
  return text;
}

TEST(WireAuth, HmacSha256MatchesRfc4231TestCase1) {
  const std::string key(20, '\x0b');
  const char* data = "Hi There";
  EXPECT_EQ(Hex(HmacSha256(key, reinterpret_cast<const uint8_t*>(data), std::strlen(data))),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(WireAuth, HmacSha256MatchesRfc4231TestCase2) {
  const char* data = "what do ya want for nothing?";
  EXPECT_EQ(Hex(HmacSha256("Jefe", reinterpret_cast<const uint8_t*>(data), std::strlen(data))),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

class WireProofs : public ::testing::Test {
 protected:
  void SetUp() override {
    hello_.rank = 1;
    hello_.world = 2;
    hello_.nonce.fill(7);
    hello_.job_id = "job";
    server_nonce_.fill(9);
  }
  Hello hello_;
  Nonce server_nonce_{};
  const std::string secret_ = "0123456789abcdef-secret";
};

TEST_F(WireProofs, ClientAndServerProofsDifferSoNeitherCanBeReflected) {
  const std::vector<uint8_t> body = HelloBody(hello_);
  EXPECT_FALSE(MacsEqual(ClientProof(secret_, body, server_nonce_),
                         ServerProof(secret_, body, server_nonce_)));
}

TEST_F(WireProofs, ProofsAreTheHmacOfLabelHelloAndNonce) {
  const std::vector<uint8_t> body = HelloBody(hello_);
  std::vector<uint8_t> transcript;
  const std::string label = "nbox-bridge-1 client";
  transcript.insert(transcript.end(), label.begin(), label.end());
  transcript.insert(transcript.end(), body.begin(), body.end());
  transcript.insert(transcript.end(), server_nonce_.begin(), server_nonce_.end());
  EXPECT_TRUE(MacsEqual(ClientProof(secret_, body, server_nonce_),
                        HmacSha256(secret_, transcript.data(), transcript.size())));
}

TEST_F(WireProofs, AnyChangeToSecretHelloOrNonceChangesTheProof) {
  const Mac proof = ClientProof(secret_, HelloBody(hello_), server_nonce_);
  EXPECT_FALSE(MacsEqual(proof, ClientProof(secret_ + "x", HelloBody(hello_), server_nonce_)));
  Hello other_rank = hello_;
  other_rank.rank = 0;
  EXPECT_FALSE(MacsEqual(proof, ClientProof(secret_, HelloBody(other_rank), server_nonce_)));
  Hello other_job = hello_;
  other_job.job_id = "jab";
  EXPECT_FALSE(MacsEqual(proof, ClientProof(secret_, HelloBody(other_job), server_nonce_)));
  Nonce other_nonce = server_nonce_;
  other_nonce[31] ^= 1;
  EXPECT_FALSE(MacsEqual(proof, ClientProof(secret_, HelloBody(hello_), other_nonce)));
  EXPECT_TRUE(MacsEqual(proof, ClientProof(secret_, HelloBody(hello_), server_nonce_)));
}

TEST(WireAuth, MacsEqualComparesEveryByte) {
  Mac a{};
  Mac b{};
  EXPECT_TRUE(MacsEqual(a, b));
  for (size_t i : {size_t{0}, size_t{31}}) {
    b = a;
    b[i] = 1;
    EXPECT_FALSE(MacsEqual(a, b)) << i;
  }
}

TEST(WireAuth, NoncesAreFresh) {
  EXPECT_NE(RandomNonce(), RandomNonce());
  EXPECT_NE(RandomU64(), RandomU64());
}

TEST(WireAuth, SecretsMustBeSetAndLongEnough) {
  EXPECT_EQ(CheckSecret("", "NBOX_SECRET"),
            "NBOX_SECRET is not set: the bridge needs a shared secret");
  EXPECT_EQ(CheckSecret("short", "NBOX_SECRET"),
            "NBOX_SECRET holds 5 characters; a secret needs at least 16");
  EXPECT_EQ(CheckSecret("sixteen-chars-ok", "NBOX_SECRET"), "");
}

TEST(WireEndpoint, UnixAndTcpFormsParse) {
  Endpoint unix_socket = ParseEndpoint("unix:/tmp/d/bridge.sock", "NBOX_BRIDGE");
  EXPECT_EQ(unix_socket.kind, Endpoint::Kind::kUnix);
  EXPECT_EQ(unix_socket.path, "/tmp/d/bridge.sock");
  Endpoint tcp = ParseEndpoint("tcp:10.0.0.2:7000", "NBOX_BRIDGE");
  EXPECT_EQ(tcp.kind, Endpoint::Kind::kTcp);
  EXPECT_EQ(tcp.host, "10.0.0.2");
  EXPECT_EQ(tcp.port, 7000);
  Endpoint v6 = ParseEndpoint("tcp:[fd00::2]:65535", "NBOX_BRIDGE");
  EXPECT_EQ(v6.host, "fd00::2");
  EXPECT_EQ(v6.port, 65535);
  EXPECT_EQ(v6.ToString(), "tcp:[fd00::2]:65535");
  EXPECT_EQ(unix_socket.ToString(), "unix:/tmp/d/bridge.sock");
}

TEST(WireEndpoint, BadFormsNameTheSettingAndTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"unix:relative.sock", "a Unix socket needs an absolute path"},
      {"http://x", "unknown transport"},
      {"tcp:host", "no port"},
      {"tcp::7000", "no host"},
      {"tcp:h:70000", "the port is not a number in 0..65535"},
      {"tcp:h:7x", "the port is not a number in 0..65535"},
      {"tcp:fd00::2:7000", "an IPv6 host must be in brackets"},
  };
  for (const auto& [text, why] : cases) {
    try {
      ParseEndpoint(text, "NBOX_BRIDGE");
      ADD_FAILURE() << text << " parsed";
    } catch (const EndpointError& error) {
      EXPECT_EQ(std::string(error.what()),
                std::string("NBOX_BRIDGE: ") + why + " in '" + text +
                    "' (expected unix:/path/to/socket or tcp:host:port)");
    }
  }
  EXPECT_THROW(ParseEndpoint("unix:/" + std::string(200, 'a'), "NBOX_BRIDGE"), EndpointError);
}

}  // namespace
}  // namespace nbox::bridge::wire
