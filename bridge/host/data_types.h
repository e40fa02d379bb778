// Element types and reduction operators of the host runtime, and the reduction kernel that
// applies a received message to a rank's buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "bridge/include/nbox_host.h"

namespace nbox::host {

bool IsValid(nboxDataType_t type);
bool IsValid(nboxRedOp_t op);
// Bytes per element; the type must be valid.
uint32_t ElementBytes(nboxDataType_t type);
std::string ToString(nboxDataType_t type);
std::string ToString(nboxRedOp_t op);

// dst[i] = dst[i] op src[i] for i < count. Integer sum and product wrap around (two's
// complement), float16 and bfloat16 are computed in float and rounded to nearest even, max and
// min keep dst when the comparison is false (so a NaN in src is ignored, one in dst stays).
void ReduceInto(void* dst, const void* src, size_t count, nboxDataType_t type, nboxRedOp_t op);

// IEEE binary16 and bfloat16 conversions (round to nearest even; NaN stays NaN).
float HalfToFloat(uint16_t half);
uint16_t FloatToHalf(float value);
float Bfloat16ToFloat(uint16_t bf16);
uint16_t FloatToBfloat16(float value);

}  // namespace nbox::host
