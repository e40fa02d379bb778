// Inputs for the host runtime's tests and the serial reference they are checked against,
// written independently of the runtime (its own wrapping arithmetic and 16-bit float encoders).
//
// Values are chosen so that every reduction is exact in every type whatever the order:
// floating sums and min/max use integers in [-16, 16], products of signed types use factors in
// {-1, 1, 2} (at most 8 ranks: |product| <= 256, exact even in bfloat16), integer sums and
// products wrap and so are order-free anyway.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bridge/include/nbox_host.h"

namespace nbox::host::testing {

inline size_t SizeOf(nboxDataType_t type) {
  switch (type) {
    case nboxInt8:
    case nboxUint8:
      return 1;
    case nboxFloat16:
    case nboxBfloat16:
      return 2;
    case nboxInt32:
    case nboxUint32:
    case nboxFloat32:
      return 4;
    default:
      return 8;
  }
}

inline uint64_t Mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0xd6e8feb86659fd93ull;
  x ^= x >> 32;
  return x;
}

// Integer value of element i of rank `rank` in call `salt`, in the range the op allows.
inline int64_t InputInteger(int rank, uint64_t i, uint64_t salt, nboxRedOp_t op, bool floating,
                            bool is_signed) {
  const uint64_t x = Mix(salt * 0x9e3779b97f4a7c15ull + rank * 0xbf58476d1ce4e5b9ull + i);
  if (op == nboxProd) {
    const int64_t factors_signed[3] = {-1, 1, 2};
    const int64_t factors_unsigned[3] = {1, 2, 3};
    return is_signed ? factors_signed[x % 3] : factors_unsigned[x % 3];
  }
  if (floating) return static_cast<int64_t>(x % 33) - 16;  // [-16, 16]
  return static_cast<int64_t>(x);  // any bits: the type truncates, arithmetic wraps
}

// binary16 bits of an integer with |n| <= 2048 (exact there).
inline uint16_t HalfOfInteger(int64_t n) {
  if (n == 0) return 0;
  const uint16_t sign = n < 0 ? 0x8000 : 0;
  uint64_t magnitude = static_cast<uint64_t>(n < 0 ? -n : n);
  int exponent = 0;
  while ((magnitude >> (exponent + 1)) != 0) ++exponent;
  const uint64_t mantissa = ((magnitude << 10) >> exponent) & 0x3ff;
  return static_cast<uint16_t>(sign | ((exponent + 15) << 10) | mantissa);
}

// bfloat16 bits of an integer with |n| <= 256 (the low half of the float's bits is zero).
inline uint16_t Bfloat16OfInteger(int64_t n) {
  const float value = static_cast<float>(n);
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return static_cast<uint16_t>(bits >> 16);
}

// Writes integer n as one element of `type` at `out` (wrapping for integer types).
inline void Store(nboxDataType_t type, int64_t n, void* out) {
  switch (type) {
    case nboxInt8:
    case nboxUint8: {
      const uint8_t v = static_cast<uint8_t>(n);
      std::memcpy(out, &v, 1);
      return;
    }
    case nboxInt32:
    case nboxUint32: {
      const uint32_t v = static_cast<uint32_t>(n);
      std::memcpy(out, &v, 4);
      return;
    }
    case nboxInt64:
    case nboxUint64: {
      const uint64_t v = static_cast<uint64_t>(n);
      std::memcpy(out, &v, 8);
      return;
    }
    case nboxFloat16: {
      const uint16_t v = HalfOfInteger(n);
      std::memcpy(out, &v, 2);
      return;
    }
    case nboxBfloat16: {
      const uint16_t v = Bfloat16OfInteger(n);
      std::memcpy(out, &v, 2);
      return;
    }
    case nboxFloat32: {
      const float v = static_cast<float>(n);
      std::memcpy(out, &v, 4);
      return;
    }
    case nboxFloat64: {
      const double v = static_cast<double>(n);
      std::memcpy(out, &v, 8);
      return;
    }
  }
}

inline bool IsFloating(nboxDataType_t type) {
  return type == nboxFloat16 || type == nboxBfloat16 || type == nboxFloat32 || type == nboxFloat64;
}

inline bool IsSigned(nboxDataType_t type) {
  return type == nboxInt8 || type == nboxInt32 || type == nboxInt64 || IsFloating(type);
}

// The value an integer type holds after storing n, as a signed/unsigned 64-bit number, so that
// max and min compare as the type does.
inline int64_t AsStored(nboxDataType_t type, int64_t n) {
  switch (type) {
    case nboxInt8:
      return static_cast<int8_t>(n);
    case nboxUint8:
      return static_cast<uint8_t>(n);
    case nboxInt32:
      return static_cast<int32_t>(n);
    case nboxUint32:
      return static_cast<uint32_t>(n);
    default:
      return n;
  }
}

// The reduction of the integers `values` (one per rank, in rank order) under `op` as `type`
// computes it, returned as the integer to Store. uint64 max/min compare unsigned.
inline int64_t ReduceReference(nboxDataType_t type, nboxRedOp_t op,
                               const std::vector<int64_t>& values) {
  if (op == nboxSum || op == nboxProd) {
    uint64_t acc = op == nboxSum ? 0 : 1;  // wraps mod 2^64; Store truncates further
    for (int64_t v : values) {
      const uint64_t u = static_cast<uint64_t>(AsStored(type, v));
      acc = op == nboxSum ? acc + u : acc * u;
    }
    return static_cast<int64_t>(acc);
  }
  int64_t best = AsStored(type, values[0]);
  for (int64_t v : values) {
    const int64_t s = AsStored(type, v);
    bool better;
    if (type == nboxUint64) {
      better = op == nboxMax ? static_cast<uint64_t>(s) > static_cast<uint64_t>(best)
                             : static_cast<uint64_t>(s) < static_cast<uint64_t>(best);
    } else {
      better = op == nboxMax ? s > best : s < best;
    }
    if (better) best = s;
  }
  return best;
}

inline std::string TypeName(nboxDataType_t type) {
  static const char* const kNames[] = {"int8",   "uint8",   "int32",   "uint32",  "int64",
                                       "uint64", "float16", "float32", "float64", "bfloat16"};
  return kNames[type];
}

inline std::string OpName(nboxRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min"};
  return kNames[op];
}

}  // namespace nbox::host::testing
