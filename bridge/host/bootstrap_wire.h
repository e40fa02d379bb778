// Frames between the ranks of a communicator and its bootstrap root: a 16-byte header
// (type u32, reserved u32, payload length u64; little-endian) and the payload.
//
//   rank -> root  kJoin   nonce u64, nranks i32, rank i32, channels i32, settings length
//                         u32, chunk_bytes u64, the rank's collective settings
//                         (coll::EncodeSettings), the member count u32 and as many i32s
//                         (the communicator's members as world ranks, in its rank order; none
//                         for a communicator of its own), then its blob of listen handles
//   root -> rank  kTable  every rank's blob, in rank order (sent once all ranks joined)
//   rank -> root  kBye    the rank destroyed its communicator normally
//   root -> rank  kAbort  text: why the communicator cannot go on (a rank died, bad join)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nbox::host {

enum class FrameType : uint32_t { kJoin = 1, kTable = 2, kBye = 3, kAbort = 4 };

inline constexpr size_t kFrameHeaderBytes = 16;
inline constexpr size_t kJoinFixedBytes = 32;
// Larger payloads are refused as garbage.
inline constexpr uint64_t kMaxFramePayload = uint64_t{1} << 31;

struct JoinRequest {
  uint64_t nonce = 0;
  int32_t nranks = 0;
  int32_t rank = 0;
  int32_t channels = 0;
  uint64_t chunk_bytes = 0;
  std::string settings;  // coll::EncodeSettings of the rank's collective settings
  // A group of a job that nbox-cosim serves: its members' world ranks, index = rank in it.
  // Empty: the communicator is its own (the host runtime's root) or the job's world.
  std::vector<int32_t> members;
  std::vector<uint8_t> blob;
};

// How two joins' encoded collective settings differ, field by field ("allreduce: tree here,
// ring there"), for a bootstrap root's refusal; the raw texts when one does not decode.
std::string SettingsDifference(const std::string& here, const std::string& there);

std::vector<uint8_t> EncodeFrame(FrameType type, const std::vector<uint8_t>& payload);
// Parses a header; false when the type is unknown or the length too large.
bool DecodeFrameHeader(const uint8_t* header, FrameType* type, uint64_t* length);

std::vector<uint8_t> EncodeJoin(const JoinRequest& join);
// false when the payload is too short.
bool DecodeJoin(const std::vector<uint8_t>& payload, JoinRequest* join);

}  // namespace nbox::host
