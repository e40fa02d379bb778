#include "tools/cosim/scenario/nearest_name.h"

#include <algorithm>

namespace nbox::scenario {
namespace {

char Lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace

int EditDistance(std::string_view a, std::string_view b) {
  const size_t rows = a.size() + 1;
  const size_t cols = b.size() + 1;
  // d[i][j]: distance between the first i characters of a and the first j of b.
  std::vector<int> d(rows * cols);
  auto at = [&](size_t i, size_t j) -> int& { return d[i * cols + j]; };
  for (size_t i = 0; i < rows; ++i) at(i, 0) = static_cast<int>(i);
  for (size_t j = 0; j < cols; ++j) at(0, j) = static_cast<int>(j);
  for (size_t i = 1; i < rows; ++i) {
    for (size_t j = 1; j < cols; ++j) {
      const int cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      int best = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) &&
          Lower(a[i - 2]) == Lower(b[j - 1])) {
        best = std::min(best, at(i - 2, j - 2) + 1);
      }
      at(i, j) = best;
    }
  }
  return at(rows - 1, cols - 1);
}

std::string NearestName(std::string_view name, const std::vector<std::string>& candidates) {
  const int allowed = std::max<int>(1, static_cast<int>(name.size()) / 3);
  const std::string* nearest = nullptr;
  int nearest_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    const int distance = EditDistance(name, candidate);
    if (distance < nearest_distance) {
      nearest = &candidate;
      nearest_distance = distance;
    }
  }
  return nearest != nullptr ? *nearest : std::string();
}

}  // namespace nbox::scenario
