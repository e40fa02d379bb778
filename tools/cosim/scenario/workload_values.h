// Value kinds of [workload] keys beyond the common ones (value_kinds.h): lists of layer widths
// and byte rates.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cosim/scenario/value_kinds.h"

namespace nbox::scenario {

// "1024,1024,64": whole numbers in 1..max, in order; empty = none.
std::optional<std::vector<int>> ReadWidthList(std::string_view text, int max);
std::string WidthListText(const std::vector<int>& widths);
ValueKind WidthList(Field<WorkloadSection, std::vector<int>> field, int max);

// "900GB/s", "3.35TB/s" -> bytes per second (decimal prefixes powers of ten, as for sizes).
std::optional<double> ReadByteRate(std::string_view text);
ValueKind ByteRate(Field<WorkloadSection, double> field, double min, double max);

}  // namespace nbox::scenario
