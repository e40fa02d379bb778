#include "bridge/examples/mlp_train/teacher_task.h"

#include <cmath>
#include <stdexcept>

#include "bridge/examples/mlp_train/splitmix.h"

namespace nbox::train {

TeacherTask::TeacherTask(int inputs, int outputs, uint64_t seed)
    : inputs_(inputs), outputs_(outputs), input_stream_(SplitMix64(seed ^ 0x5A5A5A5Aull)) {
  if (inputs < 1 || outputs < 1) throw std::invalid_argument("teacher widths must be at least 1");
  const uint64_t weight_stream = SplitMix64(seed ^ 0xC3C3C3C3ull);
  // Scaled so the hidden pre-activations are of order 1 (tanh neither saturated nor linear).
  const float scale1 = 2.0f / std::sqrt(static_cast<float>(inputs));
  const float scale2 = 1.0f / std::sqrt(static_cast<float>(kTeacherHidden));
  uint64_t index = 0;
  w1_.resize(static_cast<size_t>(kTeacherHidden) * inputs);
  for (float& w : w1_) w = scale1 * UniformSigned(weight_stream, index++);
  b1_.resize(kTeacherHidden);
  for (float& b : b1_) b = 0.5f * UniformSigned(weight_stream, index++);
  w2_.resize(static_cast<size_t>(outputs) * kTeacherHidden);
  for (float& w : w2_) w = 2.0f * scale2 * UniformSigned(weight_stream, index++);
}

void TeacherTask::Draw(uint64_t first, int count, std::vector<float>* inputs,
                       std::vector<float>* targets) const {
  inputs->resize(static_cast<size_t>(count) * inputs_);
  targets->resize(static_cast<size_t>(count) * outputs_);
  float hidden[kTeacherHidden];
  for (int n = 0; n < count; ++n) {
    float* x = inputs->data() + static_cast<size_t>(n) * inputs_;
    const uint64_t sample = first + static_cast<uint64_t>(n);
    for (int i = 0; i < inputs_; ++i) {
      x[i] = UniformSigned(input_stream_, sample * static_cast<uint64_t>(inputs_) + i);
    }
    for (int h = 0; h < kTeacherHidden; ++h) {
      double z = b1_[h];
      for (int i = 0; i < inputs_; ++i) z += static_cast<double>(w1_[h * inputs_ + i]) * x[i];
      hidden[h] = static_cast<float>(std::tanh(z));
    }
    float* t = targets->data() + static_cast<size_t>(n) * outputs_;
    for (int o = 0; o < outputs_; ++o) {
      double z = 0;
      for (int h = 0; h < kTeacherHidden; ++h) {
        z += static_cast<double>(w2_[o * kTeacherHidden + h]) * hidden[h];
      }
      t[o] = static_cast<float>(z);
    }
  }
}

}  // namespace nbox::train
