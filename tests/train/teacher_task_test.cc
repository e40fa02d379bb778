// The teacher task: shards of a batch drawn separately are exactly the rows of the whole batch
// (what makes W ranks see the samples one rank sees), and the targets carry signal.
#include "bridge/examples/mlp_train/teacher_task.h"

#include <gtest/gtest.h>

#include <cmath>

namespace nbox::train {
namespace {

TEST(TeacherTask, ShardsAreRowsOfTheWholeBatch) {
  TeacherTask task(6, 3, 11);
  std::vector<float> x_all, t_all, x_part, t_part;
  task.Draw(0, 8, &x_all, &t_all);
  task.Draw(5, 3, &x_part, &t_part);
  EXPECT_EQ(x_part, std::vector<float>(x_all.begin() + 5 * 6, x_all.end()));
  EXPECT_EQ(t_part, std::vector<float>(t_all.begin() + 5 * 3, t_all.end()));
  TeacherTask again(6, 3, 11);
  std::vector<float> x_again, t_again;
  again.Draw(0, 8, &x_again, &t_again);
  EXPECT_EQ(x_again, x_all);
  EXPECT_EQ(t_again, t_all);
}

TEST(TeacherTask, InputsAreInRangeAndTargetsVary) {
  TeacherTask task(16, 2, 5);
  std::vector<float> x, t;
  task.Draw(100, 256, &x, &t);
  for (float v : x) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  double mean = 0, square = 0;
  for (float v : t) mean += v / t.size();
  for (float v : t) square += (v - mean) * (v - mean) / t.size();
  EXPECT_GT(square, 0.01) << "targets with no variance cannot be learned";
}

}  // namespace
}  // namespace nbox::train
