#include "bridge/host/data_types.h"

#include <cstring>
#include <type_traits>

#include "bridge/wire/data_type.h"

namespace nbox::host {
namespace {

// Wrapping arithmetic for integers (in the unsigned type of the same width, no UB).
template <typename T>
T Add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename T>
T Multiply(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Promote to at least unsigned int so that uint8/uint16 products cannot overflow int.
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned int>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// dst and src never overlap (a staged message and a region of the work buffer); saying so lets
// the compiler vectorise without run-time alias checks.
template <typename T>
void ReduceTyped(T* __restrict dst, const T* __restrict src, size_t count, nboxRedOp_t op) {
  switch (op) {
    case nboxSum:
      for (size_t i = 0; i < count; ++i) dst[i] = Add(dst[i], src[i]);
      return;
    case nboxProd:
      for (size_t i = 0; i < count; ++i) dst[i] = Multiply(dst[i], src[i]);
      return;
    case nboxMax:
      for (size_t i = 0; i < count; ++i) dst[i] = src[i] > dst[i] ? src[i] : dst[i];
      return;
    case nboxMin:
      for (size_t i = 0; i < count; ++i) dst[i] = src[i] < dst[i] ? src[i] : dst[i];
      return;
  }
}

// 16-bit floating types: convert, reduce one element in float, round back.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void Reduce16(uint16_t* dst, const uint16_t* src, size_t count, nboxRedOp_t op) {
  for (size_t i = 0; i < count; ++i) {
    float a = ToFloat(dst[i]);
    const float b = ToFloat(src[i]);
    ReduceTyped(&a, &b, 1, op);
    dst[i] = FromFloat(a);
  }
}

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

}  // namespace

bool IsValid(nboxDataType_t type) {
  return type >= nboxInt8 && type <= nboxBfloat16;
}
bool IsValid(nboxRedOp_t op) {
  return op >= nboxSum && op <= nboxMin;
}

uint32_t ElementBytes(nboxDataType_t type) {
  return bridge::wire::DataTypeBytes(static_cast<uint8_t>(type));
}

std::string ToString(nboxDataType_t type) {
  return IsValid(type) ? bridge::wire::DataTypeName(static_cast<uint8_t>(type))
                       : "datatype " + std::to_string(static_cast<int>(type));
}

std::string ToString(nboxRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min"};
  return IsValid(op) ? kNames[op] : "op " + std::to_string(static_cast<int>(op));
}

void ReduceInto(void* dst, const void* src, size_t count, nboxDataType_t type, nboxRedOp_t op) {
  switch (type) {
    case nboxInt8:
      return ReduceTyped(static_cast<int8_t*>(dst), static_cast<const int8_t*>(src), count, op);
    case nboxUint8:
      return ReduceTyped(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), count, op);
    case nboxInt32:
      return ReduceTyped(static_cast<int32_t*>(dst), static_cast<const int32_t*>(src), count, op);
    case nboxUint32:
      return ReduceTyped(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), count, op);
    case nboxInt64:
      return ReduceTyped(static_cast<int64_t*>(dst), static_cast<const int64_t*>(src), count, op);
    case nboxUint64:
      return ReduceTyped(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), count, op);
    case nboxFloat32:
      return ReduceTyped(static_cast<float*>(dst), static_cast<const float*>(src), count, op);
    case nboxFloat64:
      return ReduceTyped(static_cast<double*>(dst), static_cast<const double*>(src), count, op);
    case nboxFloat16:
      return Reduce16<HalfToFloat, FloatToHalf>(static_cast<uint16_t*>(dst),
                                                static_cast<const uint16_t*>(src), count, op);
    case nboxBfloat16:
      return Reduce16<Bfloat16ToFloat, FloatToBfloat16>(
          static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), count, op);
  }
}

float HalfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) return BitsToFloat(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return BitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return BitsToFloat(sign);  // signed zero
  // Subnormal: normalise. The value is mantissa * 2^-24.
  int shift = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  return BitsToFloat(sign | static_cast<uint32_t>(113 - shift) << 23 | ((mantissa & 0x3ffu) << 13));
}

uint16_t FloatToHalf(float value) {
  const uint32_t bits = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t exponent = (bits >> 23) & 0xffu;
  const uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) {  // inf stays inf; NaN stays a quiet NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0));
  }
  const int half_exponent = static_cast<int>(exponent) - 127 + 15;
  if (half_exponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow: inf
  if (half_exponent <= 0) {
    // Subnormal half (or zero): the value in units of 2^-24, rounded to nearest even.
    if (half_exponent < -10) return sign;
    const uint32_t full = mantissa | 0x800000u;
    const int shift = 14 - half_exponent;  // 24-bit significand -> units of 2^-24
    uint32_t result = full >> shift;
    const uint32_t rest = full & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
  }
  uint32_t result = (static_cast<uint32_t>(half_exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;  // may carry into inf
  return static_cast<uint16_t>(sign | result);
}

float Bfloat16ToFloat(uint16_t bf16) {
  return BitsToFloat(static_cast<uint32_t>(bf16) << 16);
}

uint16_t FloatToBfloat16(float value) {
  const uint32_t bits = FloatBits(value);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0) {
    return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  }
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace nbox::host
