// The messages of the bridge protocol between a real rank (the nbox plugin, "client") and
// nbox-cosim (the server library, "server"). bridge/README.md has the byte layout of every
// message; frame_codec.h encodes and decodes them.
//
// Virtual times are nanoseconds of the simulation's clock (ns-3's) as unsigned 64-bit
// integers. Ids (request, comm, listen, connection) are chosen by whoever creates the object
// and are unique within one session; a connection id is unique within the server.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace nbox::bridge::wire {

// Every frame starts with a 12-byte header: magic "NBXW", version, type, reserved (zero)
// flags, body length.
inline constexpr uint8_t kMagicBytes[4] = {'N', 'B', 'X', 'W'};
// Version 2: Welcome's heartbeat interval in microseconds (was milliseconds), so realtime ranks
// can promise their clock more often than every millisecond.
// Version 3: ArrivalLag, a realtime rank's own measure of how late its Completes reached it.
// Version 4: Promise counts every frame that wakes a waiting thread (WakesWaiter), Connected and
// Incoming too, not only Completes.
// Version 5: Connected and Incoming carry the simulator's clock when the connection was made.
inline constexpr uint8_t kProtocolVersion = 5;
inline constexpr size_t kFrameHeaderBytes = 12;
// Payload bytes one Data frame carries at most; larger messages travel as several frames.
inline constexpr uint32_t kMaxDataBytes = 1u << 20;
// The largest body any frame may have (a full Data frame).
inline constexpr uint32_t kMaxBodyBytes = kMaxDataBytes + 24;
// Until a connection is authenticated, bodies are limited to this (Hello is the largest).
inline constexpr uint32_t kMaxHandshakeBodyBytes = 128;

inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kMacBytes = 32;  // HMAC-SHA256
inline constexpr size_t kMaxJobIdBytes = 64;
inline constexpr size_t kMaxErrorTextBytes = 1024;
// Ranks and world sizes are below this (NCCL's own limit is far lower in practice).
inline constexpr uint32_t kMaxWorld = 1u << 20;
// Buffers one receive may carry (ncclNet's grouped irecv).
inline constexpr uint32_t kMaxRecvSlots = 8;
// Largest message (NCCL_MAX_NET_SIZE_BYTES, 1 TiB).
inline constexpr uint64_t kMaxMessageBytes = uint64_t{1} << 40;

// The numbering is part of the protocol: never reuse or renumber a value.
enum class MessageType : uint8_t {
  kHello = 1,
  kChallenge = 2,
  kAuth = 3,
  kWelcome = 4,
  kListen = 5,
  kConnect = 6,
  kConnected = 7,
  kIncoming = 8,
  kAccept = 9,
  kClose = 10,
  kPostSend = 11,
  kPostRecv = 12,
  kData = 13,
  kPromise = 14,
  kComplete = 15,
  kError = 16,
  kGoodbye = 17,
  kHeartbeat = 18,
  kOpReport = 19,
  kArrivalLag = 20,
};
inline constexpr uint8_t kLastMessageType = 20;

// Who may send a message: the decoder of each side refuses what only it itself may send.
enum class Direction { kToServer, kToClient };

enum class ClockMode : uint8_t {
  kVirtual = 0,   // the rank's clock stands still while it waits on the simulator
  kRealtime = 1,  // the rank's clock is the wall clock
};

enum class CloseKind : uint8_t { kListen = 1, kSend = 2, kRecv = 3 };

// Error codes of Error frames (the plugin maps them onto ncclResult_t).
enum class ErrorCode : uint32_t {
  kProtocol = 1,      // a malformed or unexpected frame; the connection is closed
  kAuthFailed = 2,    // wrong secret, or a Hello that does not fit the job
  kInvalidUsage = 3,  // a request the rules forbid (size or tag mismatch, unknown comm)
  kRefused = 4,       // a connect to a listen that does not exist or was closed
  kPeerGone = 5,      // the other rank of a connection left or died
  kShutdown = 6,      // the simulator is stopping
  kInternal = 7,
};
inline constexpr uint32_t kLastErrorCode = 7;

using Nonce = std::array<uint8_t, kNonceBytes>;
using Mac = std::array<uint8_t, kMacBytes>;

// Bytes owned by someone else (the decoder's buffer, a user's send buffer).
struct ByteView {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// client -> server: first frame of a connection.
struct Hello {
  uint32_t rank = 0;
  uint32_t world = 0;
  ClockMode clock = ClockMode::kVirtual;
  uint32_t pid = 0;
  Nonce nonce{};       // the client's challenge to the server
  std::string job_id;  // 1..64 bytes of [A-Za-z0-9._:-]
};

// server -> client: the server's nonce and its proof that it knows the secret.
struct Challenge {
  Nonce nonce{};
  Mac proof{};
};

// client -> server: the client's proof.
struct Auth {
  Mac proof{};
};

// server -> client: the session is open.
struct Welcome {
  uint64_t session = 0;
  uint64_t start_vtime = 0;   // the rank's clock starts here (realtime: the server's now)
  uint32_t heartbeat_us = 0;  // send something at least this often (microseconds); >= 1
  uint32_t nic_speed_mbps = 0;
};

// client -> server: a listen comm with its handle's nonce.
struct Listen {
  uint64_t listen = 0;
  uint64_t nonce = 0;
};

// client -> server: a send comm towards rank `peer`'s listen.
struct Connect {
  uint64_t comm = 0;
  uint32_t peer = 0;
  int32_t traffic_class = -1;
  uint64_t listen = 0;
  uint64_t nonce = 0;
};

// Connected and Incoming carry `vtime`, the simulator's clock when it made the connection (0:
// a simulator that keeps none). A connection takes no virtual time, but a rank cannot use one
// before it exists: a virtual clock that stands still waiting moves on to vtime, and a clock
// behind it (a realtime rank while ns-3 runs ahead) holds the connection until it gets there.

// server -> client: the send comm is connected (the receiver may not have accepted yet).
struct Connected {
  uint64_t comm = 0;
  uint64_t connection = 0;
  bool payload_wanted = true;  // false: post sends without Data (the receiver is simulated)
  uint64_t vtime = 0;
};

// server -> client: rank `peer` connected to one of this client's listens.
struct Incoming {
  uint64_t listen = 0;
  uint64_t connection = 0;
  uint32_t peer = 0;
  uint64_t vtime = 0;
};

// client -> server: the incoming connection was accepted as recv comm `comm`.
struct Accept {
  uint64_t connection = 0;
  uint64_t comm = 0;
};

// client -> server: a listen, send or recv comm was closed.
struct Close {
  CloseKind kind = CloseKind::kSend;
  uint64_t id = 0;
};

// client -> server: isend. Unless the connection said payload_wanted = false, `size` bytes of
// payload follow in Data frames of this request.
struct PostSend {
  uint64_t request = 0;
  uint64_t comm = 0;
  uint64_t vtime = 0;
  uint64_t size = 0;
  int32_t tag = 0;
};

struct RecvSlot {
  uint64_t size = 0;  // capacity
  int32_t tag = 0;
};

// client -> server: irecv with 1..8 buffers.
struct PostRecv {
  uint64_t request = 0;
  uint64_t comm = 0;
  uint64_t vtime = 0;
  std::vector<RecvSlot> slots;
};

// Both ways: `bytes` of a message at `offset`. To the server: a send's payload (slot 0).
// To a client: a received message for buffer `slot` of a receive, after its Complete.
struct Data {
  uint64_t request = 0;
  uint64_t offset = 0;
  uint32_t slot = 0;
  ByteView bytes;  // 1..kMaxDataBytes
};

// client -> server: "I will post nothing with a virtual time before `vtime`". With `blocked`:
// "I am waiting on you: I will post nothing until you complete a request of mine, and then
// nothing before max(vtime, that completion's delivery time)".
//
// `wakeups_seen`: how many frames that wake a waiting thread (WakesWaiter: Complete, Connected,
// Incoming, Error) the client had received in this session when it made the promise (modulo
// 2^32). The server compares it with the ones it sent, so it knows whether a blocked promise was
// made before or after the rank saw the latest news that could end its wait.
struct Promise {
  uint64_t vtime = 0;
  bool blocked = false;
  uint32_t wakeups_seen = 0;
};

// server -> client: a request is done at virtual time `delivery_vtime`. For a send `sizes`
// is empty; for a receive it holds the size of the message in each buffer, and the bytes
// follow in Data frames. The client holds the completion until its own clock reaches
// delivery_vtime (and only then writes the receive buffers).
//
// `synthetic`: the message came from an emulated rank and carries no bytes (no Data follows);
// the receiving rank fills the buffers itself (payload = self: what the sender would have sent
// if it held the receiver's own data). The sizes are the messages' sizes all the same.
struct Complete {
  uint64_t request = 0;
  uint64_t delivery_vtime = 0;
  std::vector<uint64_t> sizes;
  bool synthetic = false;
};

// Both ways. `id` names what failed: a request, or (kRefused) the send comm of a Connect;
// 0 means the whole session, which then ends. A client draws request, comm and listen ids
// from one counter, so an id never names two things.
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  uint64_t id = 0;
  std::string text;  // up to 1024 bytes, no NUL
};

// Both ways: an orderly end of the session at the sender's virtual time.
struct Goodbye {
  uint64_t vtime = 0;
};

// Both ways: "still alive" when nothing else was sent for a heartbeat interval.
struct Heartbeat {
  uint64_t vtime = 0;
};

// What a rank's program did, for mirror mode (emulated ranks repeat the real rank's
// collectives) and for the report (iteration times). The numbering is part of the protocol.
enum class OpReportKind : uint8_t {
  kCollective = 1,      // the program called a collective (or Send/Recv)
  kIterationBegin = 2,  // the program marked the start of a training iteration
  kIterationEnd = 3,
};
inline constexpr uint8_t kLastOpReportKind = 3;

enum class ReportedOp : uint8_t {
  kNone = 0,  // iteration marks
  kAllReduce = 1,
  kAllGather = 2,
  kReduceScatter = 3,
  kBroadcast = 4,
  kSend = 5,
  kRecv = 6,
  kReduce = 7,
  kAllToAll = 8,
};
inline constexpr uint8_t kLastReportedOp = 8;
// Data types and reduction ops use the numbering of NCCL's enums (nbox_host.h's too).
inline constexpr uint8_t kLastDataType = 9;  // ncclBfloat16
inline constexpr uint8_t kLastReduceOp = 3;  // ncclMin

// client -> server: the rank's program made a call at its virtual time `vtime`.
//   kCollective: op (not kNone), dtype, redop (0 for ops that do not reduce), count elements
//     of the call's NCCL-convention count, bytes as CollectiveSpec counts them (the all-reduce
//     buffer, the all-gather output, the reduce-scatter input, the broadcast and reduce
//     buffer, the all-to-all send buffer, the message of a Send/Recv), root (the broadcast's or
//     reduce's root, or the peer of a Send/Recv; -1 for the others), seq = the communicator's call
//     number (0, 1, ...).
//   kIterationBegin/End: op kNone, dtype/redop/count/bytes 0, root -1, seq = the iteration
//     number the program gave.
struct OpReport {
  uint64_t vtime = 0;
  OpReportKind kind = OpReportKind::kCollective;
  ReportedOp op = ReportedOp::kNone;
  uint8_t dtype = 0;
  uint8_t redop = 0;
  int32_t root = -1;
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t seq = 0;
};

// client -> server, from a realtime rank right before its Goodbye: how late its Completes
// reached it by its own clock (the wall clock): for each, the rank's clock when the frame was
// read minus its delivery_vtime, 0 when it came early. This includes what the simulator's own
// lag figure does not: the frame's way through both sockets and the rank's reader thread.
// p99 is the nearest-rank quantile; all three are 0 when no Complete came.
struct ArrivalLag {
  uint64_t completions = 0;
  uint64_t p99_ns = 0;
  uint64_t max_ns = 0;
};

// Alternative i is MessageType i + 1.
using Message = std::variant<Hello, Challenge, Auth, Welcome, Listen, Connect, Connected, Incoming,
                             Accept, Close, PostSend, PostRecv, Data, Promise, Complete, Error,
                             Goodbye, Heartbeat, OpReport, ArrivalLag>;

inline MessageType TypeOf(const Message& message) {
  return static_cast<MessageType>(message.index() + 1);
}

// "PostSend", for messages.
const char* TypeName(MessageType type);
// A frame the server sends that may end a client thread's wait: a completion, a connection made
// for it (Connected, Incoming) or refused, a failure (Error). Both sides count these (Promise).
bool WakesWaiter(MessageType type);
// Whether `direction` is a way `type` may travel.
bool AllowedDirection(MessageType type, Direction direction);

}  // namespace nbox::bridge::wire
