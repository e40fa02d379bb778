#include "bridge/host/bootstrap_wire.h"

#include <endian.h>

#include <cstring>
#include <stdexcept>

#include "collectives/settings.h"

namespace nbox::host {
namespace {

void Put32(std::vector<uint8_t>& out, uint32_t value) {
  value = htole32(value);
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + 4);
}

void Put64(std::vector<uint8_t>& out, uint64_t value) {
  value = htole64(value);
  const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + 8);
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

std::vector<uint8_t> EncodeFrame(FrameType type, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> frame;
  frame.reserve(kFrameHeaderBytes + payload.size());
  Put32(frame, static_cast<uint32_t>(type));
  Put32(frame, 0);
  Put64(frame, payload.size());
  frame.insert(frame.end(), payload.begin(), payload.end());
  return frame;
}

bool DecodeFrameHeader(const uint8_t* header, FrameType* type, uint64_t* length) {
  const uint32_t raw_type = Get32(header);
  *length = Get64(header + 8);
  if (raw_type < 1 || raw_type > 4 || *length > kMaxFramePayload) return false;
  *type = static_cast<FrameType>(raw_type);
  return true;
}

std::string SettingsDifference(const std::string& here, const std::string& there) {
  try {
    return coll::DescribeDifference(coll::DecodeSettings(here), coll::DecodeSettings(there));
  } catch (const std::invalid_argument&) {
    return "'" + here + "' here, '" + there + "' there";
  }
}

std::vector<uint8_t> EncodeJoin(const JoinRequest& join) {
  std::vector<uint8_t> payload;
  payload.reserve(kJoinFixedBytes + join.settings.size() + join.blob.size());
  Put64(payload, join.nonce);
  Put32(payload, static_cast<uint32_t>(join.nranks));
  Put32(payload, static_cast<uint32_t>(join.rank));
  Put32(payload, static_cast<uint32_t>(join.channels));
  Put32(payload, static_cast<uint32_t>(join.settings.size()));
  Put64(payload, join.chunk_bytes);
  payload.insert(payload.end(), join.settings.begin(), join.settings.end());
  Put32(payload, static_cast<uint32_t>(join.members.size()));
  for (int32_t member : join.members) Put32(payload, static_cast<uint32_t>(member));
  payload.insert(payload.end(), join.blob.begin(), join.blob.end());
  return payload;
}

bool DecodeJoin(const std::vector<uint8_t>& payload, JoinRequest* join) {
  if (payload.size() < kJoinFixedBytes) return false;
  const uint8_t* in = payload.data();
  join->nonce = Get64(in);
  join->nranks = static_cast<int32_t>(Get32(in + 8));
  join->rank = static_cast<int32_t>(Get32(in + 12));
  join->channels = static_cast<int32_t>(Get32(in + 16));
  const uint32_t settings_bytes = Get32(in + 20);
  join->chunk_bytes = Get64(in + 24);
  if (settings_bytes > payload.size() - kJoinFixedBytes) return false;
  const auto settings_begin = payload.begin() + kJoinFixedBytes;
  join->settings.assign(settings_begin, settings_begin + settings_bytes);
  size_t at = kJoinFixedBytes + settings_bytes;
  if (payload.size() - at < 4) return false;
  const uint64_t members = Get32(in + at);
  at += 4;
  if (members > (payload.size() - at) / 4) return false;
  join->members.resize(members);
  for (uint64_t i = 0; i < members; ++i, at += 4) {
    join->members[i] = static_cast<int32_t>(Get32(in + at));
  }
  join->blob.assign(payload.begin() + static_cast<std::ptrdiff_t>(at), payload.end());
  return true;
}

}  // namespace nbox::host
