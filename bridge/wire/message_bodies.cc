#include "bridge/wire/message_bodies.h"

#include <cassert>

namespace nbox::bridge::wire {
namespace {

// Fixed sizes of the parts of each body (bridge/README.md has the tables).
constexpr uint32_t kHelloFixed = 4 + 4 + 1 + 3 + 4 + kNonceBytes + 2;
constexpr uint32_t kPostRecvFixed = 8 + 8 + 8 + 4 + 4;
constexpr uint32_t kRecvSlotBytes = 16;
constexpr uint32_t kDataFixed = 8 + 8 + 4 + 4;
constexpr uint32_t kCompleteFixed = 8 + 8 + 4 + 4;
constexpr uint32_t kErrorFixed = 4 + 4 + 8 + 2;
constexpr uint32_t kOpReportBytes = 8 + 4 + 4 + 8 + 8 + 8;
// Complete's flags (offset 20).
constexpr uint32_t kCompleteSynthetic = 1;

bool JobIdCharacter(uint8_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

// --- encoding --------------------------------------------------------------------------------

struct BodyEncoder {
  ByteWriter* w;

  void operator()(const Hello& m) const {
    assert(!m.job_id.empty() && m.job_id.size() <= kMaxJobIdBytes);
    w->U32(m.rank);
    w->U32(m.world);
    w->U8(static_cast<uint8_t>(m.clock));
    w->Zeros(3);
    w->U32(m.pid);
    w->Bytes(m.nonce.data(), m.nonce.size());
    w->U16(static_cast<uint16_t>(m.job_id.size()));
    w->Bytes(reinterpret_cast<const uint8_t*>(m.job_id.data()), m.job_id.size());
  }
  void operator()(const Challenge& m) const {
    w->Bytes(m.nonce.data(), m.nonce.size());
    w->Bytes(m.proof.data(), m.proof.size());
  }
  void operator()(const Auth& m) const { w->Bytes(m.proof.data(), m.proof.size()); }
  void operator()(const Welcome& m) const {
    w->U64(m.session);
    w->U64(m.start_vtime);
    w->U32(m.heartbeat_us);
    w->U32(m.nic_speed_mbps);
  }
  void operator()(const Listen& m) const {
    w->U64(m.listen);
    w->U64(m.nonce);
  }
  void operator()(const Connect& m) const {
    w->U64(m.comm);
    w->U32(m.peer);
    w->I32(m.traffic_class);
    w->U64(m.listen);
    w->U64(m.nonce);
  }
  void operator()(const Connected& m) const {
    w->U64(m.comm);
    w->U64(m.connection);
    w->U32(m.payload_wanted ? 1 : 0);
    w->Zeros(4);
    w->U64(m.vtime);
  }
  void operator()(const Incoming& m) const {
    w->U64(m.listen);
    w->U64(m.connection);
    w->U32(m.peer);
    w->Zeros(4);
    w->U64(m.vtime);
  }
  void operator()(const Accept& m) const {
    w->U64(m.connection);
    w->U64(m.comm);
  }
  void operator()(const Close& m) const {
    w->U8(static_cast<uint8_t>(m.kind));
    w->Zeros(7);
    w->U64(m.id);
  }
  void operator()(const PostSend& m) const {
    w->U64(m.request);
    w->U64(m.comm);
    w->U64(m.vtime);
    w->U64(m.size);
    w->I32(m.tag);
    w->Zeros(4);
  }
  void operator()(const PostRecv& m) const {
    assert(!m.slots.empty() && m.slots.size() <= kMaxRecvSlots);
    w->U64(m.request);
    w->U64(m.comm);
    w->U64(m.vtime);
    w->U32(static_cast<uint32_t>(m.slots.size()));
    w->Zeros(4);
    for (const RecvSlot& slot : m.slots) {
      w->U64(slot.size);
      w->I32(slot.tag);
      w->Zeros(4);
    }
  }
  void operator()(const Data& m) const {
    assert(m.bytes.size >= 1 && m.bytes.size <= kMaxDataBytes);
    w->U64(m.request);
    w->U64(m.offset);
    w->U32(m.slot);
    w->Zeros(4);
    w->Bytes(m.bytes.data, m.bytes.size);
  }
  void operator()(const Promise& m) const {
    w->U64(m.vtime);
    w->U32(m.blocked ? 1 : 0);
    w->U32(m.wakeups_seen);
  }
  void operator()(const Complete& m) const {
    assert(m.sizes.size() <= kMaxRecvSlots);
    w->U64(m.request);
    w->U64(m.delivery_vtime);
    w->U32(static_cast<uint32_t>(m.sizes.size()));
    w->U32(m.synthetic ? kCompleteSynthetic : 0);
    for (uint64_t size : m.sizes) w->U64(size);
  }
  void operator()(const Error& m) const {
    assert(m.text.size() <= kMaxErrorTextBytes);
    w->U32(static_cast<uint32_t>(m.code));
    w->Zeros(4);
    w->U64(m.id);
    w->U16(static_cast<uint16_t>(m.text.size()));
    w->Bytes(reinterpret_cast<const uint8_t*>(m.text.data()), m.text.size());
  }
  void operator()(const Goodbye& m) const { w->U64(m.vtime); }
  void operator()(const Heartbeat& m) const { w->U64(m.vtime); }
  void operator()(const ArrivalLag& m) const {
    w->U64(m.completions);
    w->U64(m.p99_ns);
    w->U64(m.max_ns);
  }
  void operator()(const OpReport& m) const {
    w->U64(m.vtime);
    w->U8(static_cast<uint8_t>(m.kind));
    w->U8(static_cast<uint8_t>(m.op));
    w->U8(m.dtype);
    w->U8(m.redop);
    w->I32(m.root);
    w->U64(m.count);
    w->U64(m.bytes);
    w->U64(m.seq);
  }
};

// --- decoding --------------------------------------------------------------------------------

std::string DecodeHello(ByteReader& r, Message* out) {
  Hello m;
  m.rank = r.U32();
  m.world = r.U32();
  const uint8_t clock = r.U8();
  if (!r.ZeroBytes(3)) return "Hello: reserved bytes after the clock mode are not zero";
  m.pid = r.U32();
  r.Bytes(m.nonce.data(), m.nonce.size());
  const uint16_t job_bytes = r.U16();
  if (m.world == 0 || m.world > kMaxWorld) {
    return "Hello: world size " + std::to_string(m.world) + " is not in 1.." +
           std::to_string(kMaxWorld);
  }
  if (m.rank >= m.world) {
    return "Hello: rank " + std::to_string(m.rank) + " is not below the world size " +
           std::to_string(m.world);
  }
  if (clock > static_cast<uint8_t>(ClockMode::kRealtime)) {
    return "Hello: unknown clock mode " + std::to_string(clock);
  }
  m.clock = static_cast<ClockMode>(clock);
  if (job_bytes == 0 || job_bytes > kMaxJobIdBytes || job_bytes != r.remaining()) {
    return "Hello: job id length " + std::to_string(job_bytes) + " does not fit (1.." +
           std::to_string(kMaxJobIdBytes) + " bytes filling the rest of the body)";
  }
  const uint8_t* job = r.View(job_bytes);
  for (uint16_t i = 0; i < job_bytes; ++i) {
    if (!JobIdCharacter(job[i])) {
      return "Hello: job id byte " + std::to_string(i) + " is not one of [A-Za-z0-9._:-]";
    }
  }
  m.job_id.assign(reinterpret_cast<const char*>(job), job_bytes);
  *out = std::move(m);
  return "";
}

std::string DecodeChallenge(ByteReader& r, Message* out) {
  Challenge m;
  r.Bytes(m.nonce.data(), m.nonce.size());
  r.Bytes(m.proof.data(), m.proof.size());
  *out = m;
  return "";
}

std::string DecodeAuth(ByteReader& r, Message* out) {
  Auth m;
  r.Bytes(m.proof.data(), m.proof.size());
  *out = m;
  return "";
}

std::string DecodeWelcome(ByteReader& r, Message* out) {
  Welcome m;
  m.session = r.U64();
  m.start_vtime = r.U64();
  m.heartbeat_us = r.U32();
  m.nic_speed_mbps = r.U32();
  if (m.heartbeat_us == 0) return "Welcome: heartbeat interval is 0 us";
  *out = m;
  return "";
}

std::string DecodeListen(ByteReader& r, Message* out) {
  Listen m;
  m.listen = r.U64();
  m.nonce = r.U64();
  *out = m;
  return "";
}

std::string DecodeConnect(ByteReader& r, Message* out) {
  Connect m;
  m.comm = r.U64();
  m.peer = r.U32();
  m.traffic_class = r.I32();
  m.listen = r.U64();
  m.nonce = r.U64();
  if (m.peer >= kMaxWorld) return "Connect: peer rank " + std::to_string(m.peer) + " is too large";
  *out = m;
  return "";
}

std::string DecodeConnected(ByteReader& r, Message* out) {
  Connected m;
  m.comm = r.U64();
  m.connection = r.U64();
  const uint32_t flags = r.U32();
  if (flags > 1) return "Connected: unknown flags " + std::to_string(flags);
  if (!r.ZeroBytes(4)) return "Connected: reserved bytes are not zero";
  m.payload_wanted = flags == 1;
  m.vtime = r.U64();
  *out = m;
  return "";
}

std::string DecodeIncoming(ByteReader& r, Message* out) {
  Incoming m;
  m.listen = r.U64();
  m.connection = r.U64();
  m.peer = r.U32();
  if (!r.ZeroBytes(4)) return "Incoming: reserved bytes are not zero";
  if (m.peer >= kMaxWorld) return "Incoming: peer rank " + std::to_string(m.peer) + " is too large";
  m.vtime = r.U64();
  *out = m;
  return "";
}

std::string DecodeAccept(ByteReader& r, Message* out) {
  Accept m;
  m.connection = r.U64();
  m.comm = r.U64();
  *out = m;
  return "";
}

std::string DecodeClose(ByteReader& r, Message* out) {
  Close m;
  const uint8_t kind = r.U8();
  if (!r.ZeroBytes(7)) return "Close: reserved bytes are not zero";
  m.id = r.U64();
  if (kind < static_cast<uint8_t>(CloseKind::kListen) ||
      kind > static_cast<uint8_t>(CloseKind::kRecv)) {
    return "Close: unknown comm kind " + std::to_string(kind);
  }
  m.kind = static_cast<CloseKind>(kind);
  *out = m;
  return "";
}

std::string DecodePostSend(ByteReader& r, Message* out) {
  PostSend m;
  m.request = r.U64();
  m.comm = r.U64();
  m.vtime = r.U64();
  m.size = r.U64();
  m.tag = r.I32();
  if (!r.ZeroBytes(4)) return "PostSend: reserved bytes are not zero";
  if (m.request == 0) return "PostSend: request id 0 is reserved";
  if (m.size > kMaxMessageBytes)
    return "PostSend: size " + std::to_string(m.size) + " is over 1 TiB";
  *out = m;
  return "";
}

std::string DecodePostRecv(ByteReader& r, uint32_t size, Message* out) {
  PostRecv m;
  m.request = r.U64();
  m.comm = r.U64();
  m.vtime = r.U64();
  const uint32_t count = r.U32();
  if (!r.ZeroBytes(4)) return "PostRecv: reserved bytes are not zero";
  if (m.request == 0) return "PostRecv: request id 0 is reserved";
  if (count == 0 || count > kMaxRecvSlots) {
    return "PostRecv: " + std::to_string(count) + " buffers (1.." + std::to_string(kMaxRecvSlots) +
           " allowed)";
  }
  if (size != kPostRecvFixed + count * kRecvSlotBytes) {
    return "PostRecv: body of " + std::to_string(size) + " bytes for " + std::to_string(count) +
           " buffers (expected " + std::to_string(kPostRecvFixed + count * kRecvSlotBytes) + ")";
  }
  m.slots.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    m.slots[i].size = r.U64();
    m.slots[i].tag = r.I32();
    if (!r.ZeroBytes(4))
      return "PostRecv: reserved bytes of buffer " + std::to_string(i) + " are not zero";
    if (m.slots[i].size > kMaxMessageBytes) {
      return "PostRecv: buffer " + std::to_string(i) + " of " + std::to_string(m.slots[i].size) +
             " bytes is over 1 TiB";
    }
  }
  *out = std::move(m);
  return "";
}

std::string DecodeData(ByteReader& r, Message* out) {
  Data m;
  m.request = r.U64();
  m.offset = r.U64();
  m.slot = r.U32();
  if (!r.ZeroBytes(4)) return "Data: reserved bytes are not zero";
  if (m.request == 0) return "Data: request id 0 is reserved";
  if (m.slot >= kMaxRecvSlots) return "Data: buffer index " + std::to_string(m.slot) + " is over 7";
  m.bytes.size = r.remaining();
  m.bytes.data = r.View(m.bytes.size);
  if (m.offset > kMaxMessageBytes || m.bytes.size > kMaxMessageBytes - m.offset) {
    return "Data: bytes at offset " + std::to_string(m.offset) + " run past 1 TiB";
  }
  *out = m;
  return "";
}

std::string DecodePromise(ByteReader& r, Message* out) {
  Promise m;
  m.vtime = r.U64();
  const uint32_t flags = r.U32();
  if (flags > 1) return "Promise: unknown flags " + std::to_string(flags);
  m.wakeups_seen = r.U32();  // any value: the count wraps
  m.blocked = flags == 1;
  *out = m;
  return "";
}

std::string DecodeComplete(ByteReader& r, uint32_t size, Message* out) {
  Complete m;
  m.request = r.U64();
  m.delivery_vtime = r.U64();
  const uint32_t count = r.U32();
  const uint32_t flags = r.U32();
  if (m.request == 0) return "Complete: request id 0 is reserved";
  if (flags > kCompleteSynthetic) return "Complete: unknown flags " + std::to_string(flags);
  m.synthetic = flags == kCompleteSynthetic;
  if (count > kMaxRecvSlots) {
    return "Complete: " + std::to_string(count) + " sizes (0.." + std::to_string(kMaxRecvSlots) +
           " allowed)";
  }
  if (m.synthetic && count == 0) return "Complete: synthetic flag on a send's completion";
  if (size != kCompleteFixed + 8 * count) {
    return "Complete: body of " + std::to_string(size) + " bytes for " + std::to_string(count) +
           " sizes (expected " + std::to_string(kCompleteFixed + 8 * count) + ")";
  }
  m.sizes.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    m.sizes[i] = r.U64();
    if (m.sizes[i] > kMaxMessageBytes)
      return "Complete: size " + std::to_string(i) + " is over 1 TiB";
  }
  *out = std::move(m);
  return "";
}

std::string DecodeError(ByteReader& r, Message* out) {
  Error m;
  const uint32_t code = r.U32();
  if (!r.ZeroBytes(4)) return "Error: reserved bytes are not zero";
  m.id = r.U64();
  const uint16_t text_bytes = r.U16();
  if (code == 0 || code > kLastErrorCode)
    return "Error: unknown error code " + std::to_string(code);
  m.code = static_cast<ErrorCode>(code);
  if (text_bytes > kMaxErrorTextBytes || text_bytes != r.remaining()) {
    return "Error: text length " + std::to_string(text_bytes) + " does not fit (0.." +
           std::to_string(kMaxErrorTextBytes) + " bytes filling the rest of the body)";
  }
  const uint8_t* text = r.View(text_bytes);
  for (uint16_t i = 0; i < text_bytes; ++i) {
    if (text[i] == 0) return "Error: text byte " + std::to_string(i) + " is NUL";
  }
  m.text.assign(reinterpret_cast<const char*>(text), text_bytes);
  *out = std::move(m);
  return "";
}

std::string DecodeGoodbye(ByteReader& r, Message* out) {
  *out = Goodbye{r.U64()};
  return "";
}

std::string DecodeHeartbeat(ByteReader& r, Message* out) {
  *out = Heartbeat{r.U64()};
  return "";
}

std::string DecodeArrivalLag(ByteReader& r, Message* out) {
  ArrivalLag m;
  m.completions = r.U64();
  m.p99_ns = r.U64();
  m.max_ns = r.U64();
  if (m.p99_ns > m.max_ns) return "ArrivalLag: p99 above the maximum";
  if (m.completions == 0 && m.max_ns != 0) return "ArrivalLag: a lag with no Complete";
  *out = m;
  return "";
}

// Strict: every field must be what its kind allows (OpReport in messages.h).
std::string DecodeOpReport(ByteReader& r, Message* out) {
  OpReport m;
  m.vtime = r.U64();
  const uint8_t kind = r.U8();
  const uint8_t op = r.U8();
  m.dtype = r.U8();
  m.redop = r.U8();
  m.root = r.I32();
  m.count = r.U64();
  m.bytes = r.U64();
  m.seq = r.U64();
  if (kind == 0 || kind > kLastOpReportKind) {
    return "OpReport: unknown kind " + std::to_string(kind);
  }
  if (op > kLastReportedOp) return "OpReport: unknown op " + std::to_string(op);
  m.kind = static_cast<OpReportKind>(kind);
  m.op = static_cast<ReportedOp>(op);
  if (m.kind != OpReportKind::kCollective) {
    if (m.op != ReportedOp::kNone || m.dtype != 0 || m.redop != 0 || m.root != -1 || m.count != 0 ||
        m.bytes != 0) {
      return "OpReport: an iteration mark with op, dtype, redop, root, count or bytes set";
    }
    *out = m;
    return "";
  }
  if (m.op == ReportedOp::kNone) return "OpReport: a collective with op 0 (none)";
  if (m.dtype > kLastDataType) return "OpReport: unknown data type " + std::to_string(m.dtype);
  if (m.redop > kLastReduceOp) return "OpReport: unknown reduction " + std::to_string(m.redop);
  const bool reduces = m.op == ReportedOp::kAllReduce || m.op == ReportedOp::kReduceScatter ||
                       m.op == ReportedOp::kReduce;
  if (!reduces && m.redop != 0) return "OpReport: a reduction op on a call that does not reduce";
  const bool rooted = m.op == ReportedOp::kBroadcast || m.op == ReportedOp::kReduce ||
                      m.op == ReportedOp::kSend || m.op == ReportedOp::kRecv;
  if (rooted ? (m.root < 0 || static_cast<uint32_t>(m.root) >= kMaxWorld) : m.root != -1) {
    return "OpReport: root " + std::to_string(m.root) +
           (rooted ? " is not a rank" : " on a call without a root (must be -1)");
  }
  if (m.bytes > kMaxMessageBytes) return "OpReport: bytes over 1 TiB";
  *out = m;
  return "";
}

}  // namespace

BodySize BodySizeOf(MessageType type) {
  switch (type) {
    case MessageType::kHello:
      return {kHelloFixed + 1, kHelloFixed + static_cast<uint32_t>(kMaxJobIdBytes)};
    case MessageType::kChallenge:
      return {kNonceBytes + kMacBytes, kNonceBytes + kMacBytes};
    case MessageType::kAuth:
      return {kMacBytes, kMacBytes};
    case MessageType::kWelcome:
      return {24, 24};
    case MessageType::kListen:
      return {16, 16};
    case MessageType::kConnect:
      return {32, 32};
    case MessageType::kConnected:
      return {32, 32};
    case MessageType::kIncoming:
      return {32, 32};
    case MessageType::kAccept:
      return {16, 16};
    case MessageType::kClose:
      return {16, 16};
    case MessageType::kPostSend:
      return {40, 40};
    case MessageType::kPostRecv:
      return {kPostRecvFixed + kRecvSlotBytes, kPostRecvFixed + kMaxRecvSlots * kRecvSlotBytes};
    case MessageType::kData:
      return {kDataFixed + 1, kDataFixed + kMaxDataBytes};
    case MessageType::kPromise:
      return {16, 16};
    case MessageType::kComplete:
      return {kCompleteFixed, kCompleteFixed + 8 * kMaxRecvSlots};
    case MessageType::kError:
      return {kErrorFixed, kErrorFixed + static_cast<uint32_t>(kMaxErrorTextBytes)};
    case MessageType::kGoodbye:
      return {8, 8};
    case MessageType::kHeartbeat:
      return {8, 8};
    case MessageType::kOpReport:
      return {kOpReportBytes, kOpReportBytes};
    case MessageType::kArrivalLag:
      return {24, 24};
  }
  return {0, 0};
}

void EncodeBody(const Message& message, ByteWriter* writer) {
  std::visit(BodyEncoder{writer}, message);
}

std::string DecodeBody(MessageType type, const uint8_t* body, uint32_t size, Message* message) {
  ByteReader r(body, size);
  std::string reason;
  switch (type) {
    case MessageType::kHello:
      reason = DecodeHello(r, message);
      break;
    case MessageType::kChallenge:
      reason = DecodeChallenge(r, message);
      break;
    case MessageType::kAuth:
      reason = DecodeAuth(r, message);
      break;
    case MessageType::kWelcome:
      reason = DecodeWelcome(r, message);
      break;
    case MessageType::kListen:
      reason = DecodeListen(r, message);
      break;
    case MessageType::kConnect:
      reason = DecodeConnect(r, message);
      break;
    case MessageType::kConnected:
      reason = DecodeConnected(r, message);
      break;
    case MessageType::kIncoming:
      reason = DecodeIncoming(r, message);
      break;
    case MessageType::kAccept:
      reason = DecodeAccept(r, message);
      break;
    case MessageType::kClose:
      reason = DecodeClose(r, message);
      break;
    case MessageType::kPostSend:
      reason = DecodePostSend(r, message);
      break;
    case MessageType::kPostRecv:
      reason = DecodePostRecv(r, size, message);
      break;
    case MessageType::kData:
      reason = DecodeData(r, message);
      break;
    case MessageType::kPromise:
      reason = DecodePromise(r, message);
      break;
    case MessageType::kComplete:
      reason = DecodeComplete(r, size, message);
      break;
    case MessageType::kError:
      reason = DecodeError(r, message);
      break;
    case MessageType::kGoodbye:
      reason = DecodeGoodbye(r, message);
      break;
    case MessageType::kHeartbeat:
      reason = DecodeHeartbeat(r, message);
      break;
    case MessageType::kOpReport:
      reason = DecodeOpReport(r, message);
      break;
    case MessageType::kArrivalLag:
      reason = DecodeArrivalLag(r, message);
      break;
  }
  if (!reason.empty()) return reason;
  // The size rules above make these unreachable; they keep a layout slip from reading garbage.
  if (!r.ok()) return std::string(TypeName(type)) + ": body ends inside a field";
  if (r.remaining() != 0) {
    return std::string(TypeName(type)) + ": " + std::to_string(r.remaining()) +
           " bytes after the last field";
  }
  return "";
}

}  // namespace nbox::bridge::wire
