#include "tools/cosim/scenario/workload_values.h"

#include <cmath>

namespace nbox::scenario {
namespace {

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string ByteRateText(double bytes_per_s) {
  // Whole bytes per second read back exactly; the value is stored as a double.
  return BytesText(static_cast<uint64_t>(std::llround(bytes_per_s))) + "/s";
}

}  // namespace

std::optional<std::vector<int>> ReadWidthList(std::string_view text, int max) {
  std::vector<int> widths;
  text = Trimmed(text);
  if (text.empty()) return widths;
  while (true) {
    const size_t comma = text.find(',');
    const std::optional<uint64_t> width = ReadWholeNumber(Trimmed(text.substr(0, comma)));
    if (!width || *width < 1 || *width > static_cast<uint64_t>(max)) return std::nullopt;
    widths.push_back(static_cast<int>(*width));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return widths;
}

std::string WidthListText(const std::vector<int>& widths) {
  std::string text;
  for (int width : widths) {
    if (!text.empty()) text += ',';
    text += std::to_string(width);
  }
  return text;
}

ValueKind WidthList(Field<WorkloadSection, std::vector<int>> field, int max) {
  ValueKind kind;
  kind.expected = "a comma-separated list of layer widths from 1 to " + std::to_string(max) +
                  ", such as 512,256,64; empty = the preset's";
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    std::optional<std::vector<int>> widths = ReadWidthList(text, max);
    if (widths) field.In(scenario) = std::move(*widths);
    return widths.has_value();
  };
  kind.format = [=](const Scenario& scenario) { return WidthListText(field.In(scenario)); };
  return kind;
}

std::optional<double> ReadByteRate(std::string_view text) {
  text = Trimmed(text);
  if (text.size() < 3 || text.substr(text.size() - 2) != "/s") return std::nullopt;
  const std::optional<uint64_t> bytes = ReadBytes(text.substr(0, text.size() - 2));
  if (!bytes) return std::nullopt;
  return static_cast<double>(*bytes);
}

ValueKind ByteRate(Field<WorkloadSection, double> field, double min, double max) {
  ValueKind kind;
  kind.expected = "a byte rate from " + ByteRateText(min) + " to " + ByteRateText(max) +
                  ", such as 900GB/s or 3.35TB/s";
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    const std::optional<double> value = ReadByteRate(text);
    if (!value || *value < min || *value > max) return false;
    field.In(scenario) = *value;
    return true;
  };
  kind.format = [=](const Scenario& scenario) { return ByteRateText(field.In(scenario)); };
  return kind;
}

}  // namespace nbox::scenario
