#include "workloads/even_split.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace nbox::work {
namespace {

TEST(SplitEvenly, RemainderGoesToTheFirstShares) {
  EXPECT_EQ(SplitEvenly(10, 3), (std::vector<uint64_t>{4, 3, 3}));
  EXPECT_EQ(SplitEvenly(402, 4), (std::vector<uint64_t>{101, 101, 100, 100}));
  EXPECT_EQ(SplitEvenly(2, 4), (std::vector<uint64_t>{1, 1, 0, 0}));
}

TEST(SplitEvenly, ExactDivisionAndSinglePart) {
  EXPECT_EQ(SplitEvenly(12, 4), (std::vector<uint64_t>{3, 3, 3, 3}));
  EXPECT_EQ(SplitEvenly(7, 1), (std::vector<uint64_t>{7}));
  EXPECT_EQ(SplitEvenly(0, 2), (std::vector<uint64_t>{0, 0}));
}

TEST(SplitEvenly, LargestTotalSumsExactly) {
  const uint64_t total = std::numeric_limits<uint64_t>::max();  // 2^64 - 1, odd
  const std::vector<uint64_t> shares = SplitEvenly(total, 2);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0], (uint64_t{1} << 63));
  EXPECT_EQ(shares[1], (uint64_t{1} << 63) - 1);
}

TEST(SplitEvenly, RejectsNoParts) {
  EXPECT_THROW(SplitEvenly(5, 0), std::invalid_argument);
  EXPECT_THROW(SplitEvenly(5, -1), std::invalid_argument);
}

}  // namespace
}  // namespace nbox::work
