// Explicit little-endian encoding for the bridge's wire protocol: every integer is written
// and read byte by byte, so the format never depends on the host's byte order, struct layout
// or alignment. ByteReader never reads past its input: a read beyond the end sets a sticky
// failure flag and yields zero, and the caller checks ok() once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nbox::bridge::wire {

inline void PutU16(uint8_t* out, uint16_t value) {
  out[0] = static_cast<uint8_t>(value);
  out[1] = static_cast<uint8_t>(value >> 8);
}

inline void PutU32(uint8_t* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

inline void PutU64(uint8_t* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

inline uint16_t GetU16(const uint8_t* in) {
  return static_cast<uint16_t>(in[0] | (in[1] << 8));
}

inline uint32_t GetU32(const uint8_t* in) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | in[i];
  return value;
}

inline uint64_t GetU64(const uint8_t* in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | in[i];
  return value;
}

// Appends little-endian fields to a byte vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>* out) : out_(out) {}

  void U8(uint8_t value) { out_->push_back(value); }
  void U16(uint16_t value) { Append(value, 2); }
  void U32(uint32_t value) { Append(value, 4); }
  void U64(uint64_t value) { Append(value, 8); }
  void I32(int32_t value) { U32(static_cast<uint32_t>(value)); }
  void Zeros(size_t count) { out_->insert(out_->end(), count, 0); }
  void Bytes(const uint8_t* data, size_t size) { out_->insert(out_->end(), data, data + size); }

 private:
  void Append(uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out_->push_back(static_cast<uint8_t>(value >> (8 * i)));
  }

  std::vector<uint8_t>* out_;
};

// Reads little-endian fields from a bounded span.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t U8() { return Take(1) ? data_[position_ - 1] : 0; }
  uint16_t U16() { return Take(2) ? GetU16(data_ + position_ - 2) : 0; }
  uint32_t U32() { return Take(4) ? GetU32(data_ + position_ - 4) : 0; }
  uint64_t U64() { return Take(8) ? GetU64(data_ + position_ - 8) : 0; }
  int32_t I32() { return static_cast<int32_t>(U32()); }
  // Copies `size` bytes to `out` (zeros when they are not there).
  void Bytes(uint8_t* out, size_t size) {
    const uint8_t* in = View(size);
    for (size_t i = 0; i < size; ++i) out[i] = in != nullptr ? in[i] : 0;
  }
  // True when the next `count` bytes exist and are all zero (reserved fields); consumes them.
  bool ZeroBytes(size_t count) {
    const uint8_t* in = View(count);
    if (in == nullptr) return false;
    for (size_t i = 0; i < count; ++i) {
      if (in[i] != 0) return false;
    }
    return true;
  }
  // A pointer to the next `size` bytes (consumed), or nullptr when they are not there.
  const uint8_t* View(size_t size) { return Take(size) ? data_ + position_ - size : nullptr; }

  size_t remaining() const { return size_ - position_; }
  bool ok() const { return ok_; }

 private:
  bool Take(size_t count) {
    if (!ok_ || count > size_ - position_) {
      ok_ = false;
      return false;
    }
    position_ += count;
    return true;
  }

  const uint8_t* data_;
  size_t size_;
  size_t position_ = 0;
  bool ok_ = true;
};

}  // namespace nbox::bridge::wire
