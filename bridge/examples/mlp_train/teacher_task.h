// Synthetic but learnable data for nbox_mlp_train: inputs drawn uniformly from [-1, 1) and
// targets produced by a fixed random "teacher" network (inputs -> 32 tanh units -> outputs).
// Sample k of the whole run is a pure function of (seed, k), so each rank draws its own shard
// of a global batch without any exchange, and W ranks together see exactly the samples that
// one rank sees with the whole batch.
#pragma once

#include <cstdint>
#include <vector>

namespace nbox::train {

class TeacherTask {
 public:
  static constexpr int kTeacherHidden = 32;

  TeacherTask(int inputs, int outputs, uint64_t seed);

  int inputs() const { return inputs_; }
  int outputs() const { return outputs_; }

  // Samples first .. first + count - 1 (global indices): inputs [count][inputs] and targets
  // [count][outputs], row-major.
  void Draw(uint64_t first, int count, std::vector<float>* inputs,
            std::vector<float>* targets) const;

 private:
  int inputs_;
  int outputs_;
  uint64_t input_stream_;
  std::vector<float> w1_, b1_, w2_;  // teacher: [hidden][inputs], [hidden], [outputs][hidden]
};

}  // namespace nbox::train
