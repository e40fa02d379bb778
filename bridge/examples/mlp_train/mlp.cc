#include "bridge/examples/mlp_train/mlp.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "bridge/examples/mlp_train/splitmix.h"

namespace nbox::train {
namespace {

// out[0..n) += a * w[0..n): the inner loop of both matrix products (vectorisable as written).
void Axpy(float a, const float* w, float* out, int n) {
  for (int k = 0; k < n; ++k) out[k] += a * w[k];
}

// sum_k x[k] * y[k] with eight partial sums in a fixed order: deterministic, and shaped so the
// compiler can vectorise it without reassociating floating-point sums on its own.
float Dot(const float* x, const float* y, int n) {
  float partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int k = 0;
  for (; k + 8 <= n; k += 8) {
    for (int j = 0; j < 8; ++j) partial[j] += x[k + j] * y[k + j];
  }
  for (int j = 0; k < n; ++k, ++j) partial[j] += x[k] * y[k];
  return ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
         ((partial[4] + partial[5]) + (partial[6] + partial[7]));
}

}  // namespace

Mlp::Mlp(std::vector<int> widths) : widths_(std::move(widths)) {
  if (widths_.size() < 2) throw std::invalid_argument("an MLP needs an input and an output width");
  size_t offset = 0;
  for (size_t l = 0; l + 1 < widths_.size(); ++l) {
    if (widths_[l] < 1 || widths_[l + 1] < 1) {
      throw std::invalid_argument("MLP width " + std::to_string(l) + " must be at least 1");
    }
    LayerSlice slice;
    slice.in = widths_[l];
    slice.out = widths_[l + 1];
    slice.weights = offset;
    slice.bias = offset + static_cast<size_t>(slice.in) * slice.out;
    slice.end = slice.bias + slice.out;
    offset = slice.end;
    layers_.push_back(slice);
  }
  activations_.resize(widths_.size());
}

void Mlp::Initialise(std::vector<float>* parameters, uint64_t seed) const {
  parameters->assign(parameter_count(), 0.0f);
  for (int l = 0; l < layer_count(); ++l) {
    const LayerSlice& slice = layers_[l];
    const float limit = std::sqrt(6.0f / static_cast<float>(slice.in));
    const uint64_t stream = SplitMix64(seed) + static_cast<uint64_t>(l);
    for (size_t k = slice.weights; k < slice.bias; ++k) {
      (*parameters)[k] = limit * UniformSigned(stream, k - slice.weights);
    }
  }
}

const std::vector<float>& Mlp::Forward(const std::vector<float>& parameters,
                                       const std::vector<float>& inputs, int batch) {
  batch_ = batch;
  activations_[0] = inputs;
  for (int l = 0; l < layer_count(); ++l) {
    const LayerSlice& slice = layers_[l];
    const float* w = parameters.data() + slice.weights;
    const float* b = parameters.data() + slice.bias;
    const std::vector<float>& in = activations_[l];
    std::vector<float>& out = activations_[l + 1];
    out.resize(static_cast<size_t>(batch) * slice.out);
    const bool relu = l + 1 < layer_count();
    for (int n = 0; n < batch; ++n) {
      float* z = out.data() + static_cast<size_t>(n) * slice.out;
      for (int o = 0; o < slice.out; ++o) z[o] = b[o];
      const float* a = in.data() + static_cast<size_t>(n) * slice.in;
      for (int i = 0; i < slice.in; ++i) {
        if (a[i] != 0.0f) Axpy(a[i], w + static_cast<size_t>(i) * slice.out, z, slice.out);
      }
      if (relu) {
        for (int o = 0; o < slice.out; ++o) z[o] = z[o] > 0.0f ? z[o] : 0.0f;
      }
    }
  }
  return activations_.back();
}

double Mlp::SetOutputError(const std::vector<float>& targets, float scale) {
  const std::vector<float>& y = activations_.back();
  if (targets.size() != y.size()) throw std::invalid_argument("targets do not match the batch");
  double loss = 0;
  delta_.resize(y.size());
  for (size_t k = 0; k < y.size(); ++k) {
    const float error = y[k] - targets[k];
    loss += 0.5 * static_cast<double>(error) * error * scale;
    delta_[k] = error * scale;
  }
  return loss;
}

void Mlp::Backward(const std::vector<float>& parameters, float* gradient,
                   const std::function<void(int)>& on_layer_done) {
  for (int l = layer_count() - 1; l >= 0; --l) {
    const LayerSlice& slice = layers_[l];
    const std::vector<float>& in = activations_[l];
    float* dw = gradient + slice.weights;
    float* db = gradient + slice.bias;
    for (size_t k = slice.weights; k < slice.end; ++k) gradient[k] = 0.0f;
    for (int n = 0; n < batch_; ++n) {
      const float* d = delta_.data() + static_cast<size_t>(n) * slice.out;
      const float* a = in.data() + static_cast<size_t>(n) * slice.in;
      for (int i = 0; i < slice.in; ++i) {
        if (a[i] != 0.0f) Axpy(a[i], d, dw + static_cast<size_t>(i) * slice.out, slice.out);
      }
      for (int o = 0; o < slice.out; ++o) db[o] += d[o];
    }
    // The slice is final: its all-reduce may start while the earlier layers are computed.
    on_layer_done(l);
    if (l == 0) break;
    // delta of layer l-1's output: (delta * W^T), masked by ReLU's derivative (a > 0).
    const float* w = parameters.data() + slice.weights;
    delta_previous_.assign(static_cast<size_t>(batch_) * slice.in, 0.0f);
    for (int n = 0; n < batch_; ++n) {
      const float* d = delta_.data() + static_cast<size_t>(n) * slice.out;
      const float* a = in.data() + static_cast<size_t>(n) * slice.in;
      float* dp = delta_previous_.data() + static_cast<size_t>(n) * slice.in;
      for (int i = 0; i < slice.in; ++i) {
        dp[i] = a[i] > 0.0f ? Dot(d, w + static_cast<size_t>(i) * slice.out, slice.out) : 0.0f;
      }
    }
    delta_.swap(delta_previous_);
  }
}

void SgdStep(float learning_rate, const float* gradient, std::vector<float>* parameters) {
  float* p = parameters->data();
  const size_t n = parameters->size();
  for (size_t k = 0; k < n; ++k) p[k] -= learning_rate * gradient[k];
}

}  // namespace nbox::train
