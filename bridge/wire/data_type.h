// The size of each data type in NCCL's numbering (ncclDataType_t; nbox_host.h and OpReport use
// it too): the one table by which a real rank and the ranks nbox-cosim plays for it cut a
// collective's buffer on the same element boundaries.
#pragma once

#include <cstdint>

namespace nbox::bridge::wire {

inline constexpr uint8_t kDataTypes = 10;

// Bytes per element of NCCL data type `dtype` (int8 ... bfloat16), 0 for a number that is none.
constexpr uint32_t DataTypeBytes(uint8_t dtype) {
  constexpr uint32_t kBytes[kDataTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return dtype < kDataTypes ? kBytes[dtype] : 0;
}

// "int8", ..., "bfloat16"; "" for a number that is none.
constexpr const char* DataTypeName(uint8_t dtype) {
  constexpr const char* kNames[kDataTypes] = {"int8",    "uint8",   "int32",   "uint32",
                                              "int64",   "uint64",  "float16", "float32",
                                              "float64", "bfloat16"};
  return dtype < kDataTypes ? kNames[dtype] : "";
}

}  // namespace nbox::bridge::wire
