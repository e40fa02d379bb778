// The bridge's frame codec against hand-written byte layouts (bridge/README.md's tables), and
// every refusal of the strict decoder.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bridge/wire/frame_codec.h"

namespace nbox::bridge::wire {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Header(uint8_t type, uint32_t body) {
  return {'N',
          'B',
          'X',
          'W',
          kProtocolVersion,
          type,
          0,
          0,
          static_cast<uint8_t>(body),
          static_cast<uint8_t>(body >> 8),
          static_cast<uint8_t>(body >> 16),
          static_cast<uint8_t>(body >> 24)};
}

void Append(Bytes* out, std::initializer_list<uint8_t> bytes) {
  out->insert(out->end(), bytes.begin(), bytes.end());
}

Decoded ToServer(const Bytes& bytes, uint32_t limit = kMaxBodyBytes) {
  return DecodeFrame(bytes.data(), bytes.size(), Direction::kToServer, limit);
}
Decoded ToClient(const Bytes& bytes) {
  return DecodeFrame(bytes.data(), bytes.size(), Direction::kToClient);
}

Hello SampleHello() {
  Hello hello;
  hello.rank = 3;
  hello.world = 8;
  hello.clock = ClockMode::kRealtime;
  hello.pid = 0x01020304;
  for (size_t i = 0; i < hello.nonce.size(); ++i) hello.nonce[i] = static_cast<uint8_t>(0xA0 + i);
  hello.job_id = "job-7";
  return hello;
}

const uint8_t kPayload[] = {9, 8, 7, 6, 5};

// One of every message, with the direction it may travel in.
std::vector<std::pair<Message, Direction>> Samples() {
  Challenge challenge;
  challenge.nonce.fill(1);
  challenge.proof.fill(2);
  Auth auth;
  auth.proof.fill(3);
  return {
      {SampleHello(), Direction::kToServer},
      {challenge, Direction::kToClient},
      {auth, Direction::kToServer},
      {Welcome{5, 6, 7, 8}, Direction::kToClient},
      {Listen{11, 12}, Direction::kToServer},
      {Connect{13, 1, -1, 11, 12}, Direction::kToServer},
      {Connected{13, 99, false, 7000}, Direction::kToClient},
      {Incoming{11, 99, 2, 7000}, Direction::kToClient},
      {Accept{99, 14}, Direction::kToServer},
      {Close{CloseKind::kListen, 11}, Direction::kToServer},
      {PostSend{15, 13, 1000, 5, 2}, Direction::kToServer},
      {PostRecv{16, 14, 1001, {{5, 2}, {64, -3}}}, Direction::kToServer},
      {Data{15, 0, 0, ByteView{kPayload, sizeof(kPayload)}}, Direction::kToServer},
      {Promise{2000, true, 7}, Direction::kToServer},
      {Complete{16, 3000, {5, 0}}, Direction::kToClient},
      {Error{ErrorCode::kPeerGone, 16, "rank 1 left"}, Direction::kToClient},
      {Goodbye{4000}, Direction::kToServer},
      {Heartbeat{4001}, Direction::kToClient},
      {OpReport{4002, OpReportKind::kCollective, ReportedOp::kReduceScatter, 9, 3, -1, 10, 20, 1},
       Direction::kToServer},
      {Complete{17, 3001, {64}, true}, Direction::kToClient},
      {ArrivalLag{2772, 1500, 2500}, Direction::kToServer},
  };
}

TEST(WireCodec, HeartbeatLayoutByHand) {
  Bytes expected = Header(18, 8);
  Append(&expected, {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01});
  EXPECT_EQ(EncodeFrame(Heartbeat{0x0102030405060708ull}), expected);
}

TEST(WireCodec, CloseLayoutByHand) {
  Bytes expected = Header(10, 16);
  Append(&expected, {3, 0, 0, 0, 0, 0, 0, 0, 0x0B, 0x0A, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(EncodeFrame(Close{CloseKind::kRecv, 0x0A0B}), expected);
}

TEST(WireCodec, PostSendLayoutByHand) {
  Bytes expected = Header(11, 40);
  Append(&expected, {1, 0, 0, 0, 0, 0, 0, 0});  // request
  Append(&expected, {2, 0, 0, 0, 0, 0, 0, 0});  // comm
  Append(&expected, {0, 1, 0, 0, 0, 0, 0, 0});  // vtime 256
  Append(&expected, {0, 0, 1, 0, 0, 0, 0, 0});  // size 65536
  Append(&expected, {0xFF, 0xFF, 0xFF, 0xFF});  // tag -1
  Append(&expected, {0, 0, 0, 0});              // reserved
  EXPECT_EQ(EncodeFrame(PostSend{1, 2, 256, 65536, -1}), expected);
}

TEST(WireCodec, PromiseLayoutByHand) {
  Bytes expected = Header(14, 16);
  Append(&expected, {0x88, 0x13, 0, 0, 0, 0, 0, 0});  // vtime 5000
  Append(&expected, {1, 0, 0, 0});                    // flags: blocked
  Append(&expected, {0x03, 0x02, 0x01, 0x00});        // wake-ups seen 0x010203
  EXPECT_EQ(EncodeFrame(Promise{5000, true, 0x010203}), expected);
}

TEST(WireCodec, ConnectedAndIncomingCarryTheSimulatorsClockLast) {
  Bytes expected = Header(7, 32);
  Append(&expected, {2, 0, 0, 0, 0, 0, 0, 0});        // send comm 2
  Append(&expected, {17, 0, 0, 0, 0, 0, 0, 0});       // connection 17
  Append(&expected, {1, 0, 0, 0, 0, 0, 0, 0});        // flags: payload wanted; reserved
  Append(&expected, {0x88, 0x13, 0, 0, 0, 0, 0, 0});  // vtime 5000
  EXPECT_EQ(EncodeFrame(Connected{2, 17, true, 5000}), expected);
  expected = Header(8, 32);
  Append(&expected, {1, 0, 0, 0, 0, 0, 0, 0});        // listen 1
  Append(&expected, {17, 0, 0, 0, 0, 0, 0, 0});       // connection 17
  Append(&expected, {3, 0, 0, 0, 0, 0, 0, 0});        // peer 3; reserved
  Append(&expected, {0x88, 0x13, 0, 0, 0, 0, 0, 0});  // vtime 5000
  EXPECT_EQ(EncodeFrame(Incoming{1, 17, 3, 5000}), expected);
  EXPECT_EQ(std::get<Incoming>(ToClient(expected).message).vtime, 5000u);
}

TEST(WireCodec, PromiseCountsWakeupsSeenInItsLastFourBytes) {
  // Bytes written by hand: any count is valid (it wraps modulo 2^32), zero included.
  Bytes frame = Header(14, 16);
  Append(&frame, {0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF});
  const Decoded wrapped = ToServer(frame);
  ASSERT_EQ(wrapped.refusal, Refusal::kNone) << wrapped.reason;
  const Promise last = std::get<Promise>(wrapped.message);
  EXPECT_EQ(last.vtime, 16u);
  EXPECT_FALSE(last.blocked);
  EXPECT_EQ(last.wakeups_seen, 0xFFFFFFFFu);

  frame = Header(14, 16);
  Append(&frame, {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0});
  const Decoded zero = ToServer(frame);
  ASSERT_EQ(zero.refusal, Refusal::kNone) << zero.reason;
  EXPECT_TRUE(std::get<Promise>(zero.message).blocked);
  EXPECT_EQ(std::get<Promise>(zero.message).wakeups_seen, 0u);
}

TEST(WireCodec, HelloLayoutByHand) {
  const Bytes frame = EncodeFrame(SampleHello());
  ASSERT_EQ(frame.size(), 12u + 50 + 5);
  EXPECT_EQ(Bytes(frame.begin(), frame.begin() + 12), Header(1, 55));
  EXPECT_EQ(Bytes(frame.begin() + 12, frame.begin() + 24),
            Bytes({3, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0}));  // rank, world, clock + 3 reserved
  EXPECT_EQ(Bytes(frame.begin() + 24, frame.begin() + 28), Bytes({4, 3, 2, 1}));  // pid
  EXPECT_EQ(frame[28], 0xA0);                                                     // nonce[0]
  EXPECT_EQ(frame[59], 0xA0 + 31);                                                // nonce[31]
  EXPECT_EQ(Bytes(frame.begin() + 60, frame.end()), Bytes({5, 0, 'j', 'o', 'b', '-', '7'}));
}

TEST(WireCodec, EveryMessageDecodesToWhatWasEncoded) {
  for (const auto& [message, direction] : Samples()) {
    const Bytes frame = EncodeFrame(message);
    const Decoded decoded = DecodeFrame(frame.data(), frame.size(), direction);
    ASSERT_EQ(decoded.refusal, Refusal::kNone)
        << TypeName(TypeOf(message)) << ": " << decoded.reason;
    EXPECT_EQ(decoded.consumed, frame.size());
    EXPECT_EQ(TypeOf(decoded.message), TypeOf(message));
    EXPECT_EQ(EncodeFrame(decoded.message), frame) << TypeName(TypeOf(message));
  }
}

TEST(WireCodec, DecodedFieldsAreTheOnesSent) {
  {
    const Bytes frame = EncodeFrame(SampleHello());
    const Hello hello = std::get<Hello>(ToServer(frame).message);
    EXPECT_EQ(hello.rank, 3u);
    EXPECT_EQ(hello.world, 8u);
    EXPECT_EQ(hello.clock, ClockMode::kRealtime);
    EXPECT_EQ(hello.pid, 0x01020304u);
    EXPECT_EQ(hello.nonce, SampleHello().nonce);
    EXPECT_EQ(hello.job_id, "job-7");
  }
  {
    const Bytes frame = EncodeFrame(PostRecv{16, 14, 1001, {{5, 2}, {64, -3}}});
    const PostRecv post = std::get<PostRecv>(ToServer(frame).message);
    EXPECT_EQ(post.request, 16u);
    EXPECT_EQ(post.comm, 14u);
    EXPECT_EQ(post.vtime, 1001u);
    ASSERT_EQ(post.slots.size(), 2u);
    EXPECT_EQ(post.slots[1].size, 64u);
    EXPECT_EQ(post.slots[1].tag, -3);
  }
  {
    const Bytes frame = EncodeFrame(Complete{16, 3000, {5, 0}});
    const Complete complete = std::get<Complete>(ToClient(frame).message);
    EXPECT_EQ(complete.delivery_vtime, 3000u);
    EXPECT_EQ(complete.sizes, std::vector<uint64_t>({5, 0}));
  }
  {
    const Bytes frame = EncodeFrame(Data{15, 70, 3, ByteView{kPayload, sizeof(kPayload)}});
    const Decoded decoded = ToClient(frame);
    const Data data = std::get<Data>(decoded.message);
    EXPECT_EQ(data.offset, 70u);
    EXPECT_EQ(data.slot, 3u);
    ASSERT_EQ(data.bytes.size, 5u);
    EXPECT_EQ(data.bytes.data, frame.data() + 36);  // a view into the input, not a copy
    EXPECT_EQ(data.bytes.data[4], 5);
  }
  {
    const Bytes frame = EncodeFrame(Error{ErrorCode::kPeerGone, 16, "rank 1 left"});
    const Error error = std::get<Error>(ToClient(frame).message);
    EXPECT_EQ(error.code, ErrorCode::kPeerGone);
    EXPECT_EQ(error.id, 16u);
    EXPECT_EQ(error.text, "rank 1 left");
  }
  {
    const Connected connected =
        std::get<Connected>(ToClient(EncodeFrame(Connected{1, 2, true})).message);
    EXPECT_TRUE(connected.payload_wanted);
  }
}

TEST(WireCodec, EveryPrefixOfEveryFrameIsTruncated) {
  for (const auto& [message, direction] : Samples()) {
    const Bytes frame = EncodeFrame(message);
    for (size_t n = 0; n < frame.size(); ++n) {
      const Decoded decoded = DecodeFrame(frame.data(), n, direction, kMaxBodyBytes);
      ASSERT_EQ(decoded.refusal, Refusal::kTruncated)
          << TypeName(TypeOf(message)) << " cut at byte " << n << ": " << decoded.reason;
    }
  }
}

TEST(WireCodec, BadMagicIsRefusedAtTheFirstWrongByte) {
  for (size_t i = 0; i < 4; ++i) {
    Bytes frame = EncodeFrame(Heartbeat{1});
    frame[i] ^= 0x20;
    const Decoded decoded = DecodeFrame(frame.data(), i + 1, Direction::kToServer, kMaxBodyBytes);
    EXPECT_EQ(decoded.refusal, Refusal::kBadMagic) << "byte " << i;
    EXPECT_NE(decoded.reason.find("NBXW"), std::string::npos);
  }
}

TEST(WireCodec, OtherVersionsAreRefused) {
  for (uint8_t version : {0, 1, 2, 3, 4, 6, 255}) {
    Bytes frame = EncodeFrame(Heartbeat{1});
    frame[4] = version;
    const Decoded decoded = ToServer(frame);
    EXPECT_EQ(decoded.refusal, Refusal::kBadVersion);
    EXPECT_EQ(decoded.reason,
              "protocol version " + std::to_string(version) + " (this side speaks version 5)");
  }
}

TEST(WireCodec, UnknownTypesAreRefused) {
  for (uint8_t type : {0, 21, 255}) {
    Bytes frame = EncodeFrame(Heartbeat{1});
    frame[5] = type;
    EXPECT_EQ(ToServer(frame).refusal, Refusal::kUnknownType) << int{type};
  }
}

TEST(WireCodec, NonZeroFlagsAreRefused) {
  Bytes frame = EncodeFrame(Heartbeat{1});
  frame[7] = 0x80;
  EXPECT_EQ(ToServer(frame).refusal, Refusal::kBadFlags);
}

TEST(WireCodec, MessagesGoingTheWrongWayAreRefused) {
  EXPECT_EQ(ToClient(EncodeFrame(PostSend{1, 2, 3, 4, 5})).refusal, Refusal::kWrongDirection);
  EXPECT_EQ(ToClient(EncodeFrame(SampleHello())).refusal, Refusal::kWrongDirection);
  EXPECT_EQ(ToServer(EncodeFrame(Welcome{1, 2, 3, 4})).refusal, Refusal::kWrongDirection);
  EXPECT_EQ(ToServer(EncodeFrame(Complete{1, 2, {}})).refusal, Refusal::kWrongDirection);
}

TEST(WireCodec, OversizedBodiesAreRefusedFromTheHeaderAlone) {
  const Bytes huge = Header(13, kMaxBodyBytes + 1);  // no body bytes at all
  EXPECT_EQ(ToServer(huge).refusal, Refusal::kTooLarge);
  // Before authentication the server takes no body over 128 bytes.
  const Bytes big_hello = Header(1, 129);
  const Decoded decoded = ToServer(big_hello, kMaxHandshakeBodyBytes);
  EXPECT_EQ(decoded.refusal, Refusal::kTooLarge);
  EXPECT_EQ(decoded.reason, "Hello: body of 129 bytes is over the limit of 128");
}

TEST(WireCodec, LengthsImpossibleForTheTypeAreRefused) {
  for (uint32_t body : {39u, 41u}) {
    Bytes frame = Header(11, body);  // PostSend is 40 bytes
    frame.resize(12 + body, 0);
    const Decoded decoded = ToServer(frame);
    EXPECT_EQ(decoded.refusal, Refusal::kBadLength);
    EXPECT_EQ(decoded.reason, "PostSend: body of " + std::to_string(body) + " bytes (expected 40)");
  }
  EXPECT_EQ(ToServer(Header(1, 50)).refusal, Refusal::kBadLength);   // Hello without a job id
  EXPECT_EQ(ToServer(Header(13, 24)).refusal, Refusal::kBadLength);  // Data without a byte
  EXPECT_EQ(ToClient(Header(15, 23)).refusal, Refusal::kBadLength);  // Complete too short
}

// Changes byte `at` (counted from the start of the frame) and expects kBadField with a reason
// containing `why`.
void ExpectBadField(const Message& message, Direction direction, size_t at, uint8_t value,
                    const std::string& why) {
  Bytes frame = EncodeFrame(message);
  ASSERT_LT(at, frame.size());
  frame[at] = value;
  const Decoded decoded = DecodeFrame(frame.data(), frame.size(), direction, kMaxBodyBytes);
  EXPECT_EQ(decoded.refusal, Refusal::kBadField) << why;
  EXPECT_NE(decoded.reason.find(why), std::string::npos) << decoded.reason;
}

TEST(WireCodec, FieldsOutOfRangeAreRefused) {
  const Direction up = Direction::kToServer;
  const Direction down = Direction::kToClient;
  ExpectBadField(SampleHello(), up, 12, 8, "rank 8 is not below the world size 8");
  ExpectBadField(SampleHello(), up, 16, 0, "world size 0");
  ExpectBadField(SampleHello(), up, 20, 2, "unknown clock mode 2");
  ExpectBadField(SampleHello(), up, 21, 1, "reserved");
  ExpectBadField(SampleHello(), up, 60, 4, "job id length 4");
  ExpectBadField(SampleHello(), up, 63, ' ', "job id byte 1");
  ExpectBadField(Welcome{1, 2, 250, 4}, down, 28, 0, "heartbeat interval is 0");
  ExpectBadField(Connected{1, 2, true}, down, 28, 2, "unknown flags 2");
  ExpectBadField(Close{CloseKind::kSend, 1}, up, 12, 4, "unknown comm kind 4");
  ExpectBadField(Close{CloseKind::kSend, 1}, up, 13, 1, "reserved");
  ExpectBadField(PostSend{1, 2, 3, 4, 5}, up, 12, 0, "request id 0 is reserved");
  ExpectBadField(PostSend{1, 2, 3, 4, 5}, up, 48, 1, "reserved");
  ExpectBadField(PostSend{1, 2, 3, 4, 5}, up, 41, 2, "over 1 TiB");  // size 2^41 + 4
  ExpectBadField(PostRecv{1, 2, 3, {{4, 5}}}, up, 36, 2, "for 2 buffers");
  ExpectBadField(Data{1, 0, 0, ByteView{kPayload, 5}}, up, 28, 8, "buffer index 8");
  ExpectBadField(Promise{1, false}, up, 20, 3, "unknown flags 3");
  ExpectBadField(Complete{1, 2, {3}}, down, 28, 2, "for 2 sizes");
  ExpectBadField(Error{ErrorCode::kInternal, 0, "x"}, down, 12, 8, "unknown error code 8");
  ExpectBadField(Error{ErrorCode::kInternal, 0, "x"}, down, 12, 0, "unknown error code 0");
  ExpectBadField(Error{ErrorCode::kInternal, 0, "ab"}, down, 31, 0, "text byte 1 is NUL");
}

TEST(WireCodec, ReceiveBufferCountsOutsideOneToEightAreRefused) {
  for (uint8_t count : {0, 9}) {
    Bytes frame = Header(12, 48);
    frame.resize(12 + 48, 0);
    frame[12] = 1;  // request 1
    frame[36] = count;
    const Decoded decoded = ToServer(frame);
    EXPECT_EQ(decoded.refusal, Refusal::kBadField);
    EXPECT_EQ(decoded.reason, "PostRecv: " + std::to_string(count) + " buffers (1..8 allowed)");
  }
}

TEST(WireCodec, StreamingDecoderTakesBytesOneByOne) {
  Bytes stream;
  for (const auto& [message, direction] : Samples()) {
    if (direction == Direction::kToServer) AppendFrame(message, &stream);
  }
  FrameDecoder decoder(Direction::kToServer, kMaxBodyBytes);
  std::vector<MessageType> types;
  for (uint8_t byte : stream) {
    decoder.Append(&byte, 1);
    for (Decoded d = decoder.Next(); d.refusal == Refusal::kNone; d = decoder.Next()) {
      types.push_back(TypeOf(d.message));
    }
  }
  EXPECT_EQ(types, (std::vector<MessageType>{
                       MessageType::kHello, MessageType::kAuth, MessageType::kListen,
                       MessageType::kConnect, MessageType::kAccept, MessageType::kClose,
                       MessageType::kPostSend, MessageType::kPostRecv, MessageType::kData,
                       MessageType::kPromise, MessageType::kGoodbye, MessageType::kOpReport,
                       MessageType::kArrivalLag}));
  EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(WireCodec, StreamingDecoderStaysRefusedAfterGarbage) {
  FrameDecoder decoder(Direction::kToServer, kMaxBodyBytes);
  const Bytes garbage = {'G', 'E', 'T', ' ', '/'};
  decoder.Append(garbage.data(), garbage.size());
  EXPECT_EQ(decoder.Next().refusal, Refusal::kBadMagic);
  const Bytes valid = EncodeFrame(Heartbeat{1});
  decoder.Append(valid.data(), valid.size());
  EXPECT_EQ(decoder.Next().refusal, Refusal::kBadMagic);
}

TEST(WireCodec, DataPrefixMatchesAnEncodedDataFrame) {
  uint8_t prefix[kDataPrefixBytes];
  EncodeDataPrefix(15, 70, 3, sizeof(kPayload), prefix);
  const Bytes frame = EncodeFrame(Data{15, 70, 3, ByteView{kPayload, sizeof(kPayload)}});
  EXPECT_EQ(Bytes(prefix, prefix + kDataPrefixBytes), Bytes(frame.begin(), frame.begin() + 36));
}

}  // namespace
}  // namespace nbox::bridge::wire
