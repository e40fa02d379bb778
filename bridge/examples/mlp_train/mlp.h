// A small multi-layer perceptron in float32 with real forward and backward passes, the model of
// nbox_mlp_train (the "real job" real ranks are checked against).
//
// Layer l maps widths[l] inputs to widths[l + 1] outputs: z = a * W + b, then ReLU on every
// layer except the last (linear output). All parameters live in one flat vector, layer after
// layer, each layer as W (row-major [in][out]) followed by b, so that a gradient bucket is a
// contiguous slice and layers near the output sit at the end (their gradients are ready first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace nbox::train {

// Where one layer's parameters sit in the flat vector.
struct LayerSlice {
  size_t weights = 0;  // offset of W ([in][out], row-major)
  size_t bias = 0;     // offset of b ([out])
  size_t end = 0;      // one past b
  int in = 0;
  int out = 0;
};

class Mlp {
 public:
  // widths: input width, hidden widths..., output width (at least two entries, all >= 1).
  // Throws std::invalid_argument otherwise.
  explicit Mlp(std::vector<int> widths);

  const std::vector<int>& widths() const { return widths_; }
  int layer_count() const { return static_cast<int>(layers_.size()); }
  const LayerSlice& layer(int l) const { return layers_[l]; }
  size_t parameter_count() const { return layers_.back().end; }

  // He-style uniform initialisation from a seed: the same seed gives the same bits everywhere.
  void Initialise(std::vector<float>* parameters, uint64_t seed) const;

  // Forward pass of `batch` samples (inputs row-major [batch][widths[0]]). Keeps every layer's
  // activations for Backward. Returns the outputs, [batch][widths.back()].
  const std::vector<float>& Forward(const std::vector<float>& parameters,
                                    const std::vector<float>& inputs, int batch);

  // Starts the backward pass of the last Forward for the loss sum_n 0.5 * |y_n - t_n|^2 * scale
  // (targets [batch][widths.back()]): keeps the output error and returns the loss.
  double SetOutputError(const std::vector<float>& targets, float scale);

  // Backward pass from the error set by SetOutputError: writes d(loss)/d(parameters) into
  // gradient[0 .. parameter_count()) (overwriting it) layer by layer from the output back, and
  // calls on_layer_done(l) as soon as layer l's slice of the gradient is final.
  void Backward(const std::vector<float>& parameters, float* gradient,
                const std::function<void(int)>& on_layer_done);

 private:
  std::vector<int> widths_;
  std::vector<LayerSlice> layers_;
  int batch_ = 0;
  std::vector<std::vector<float>> activations_;  // [l]: input of layer l; back(): the output
  std::vector<float> delta_, delta_previous_;
};

// Plain stochastic gradient descent: parameters -= learning_rate * gradient.
void SgdStep(float learning_rate, const float* gradient, std::vector<float>* parameters);

}  // namespace nbox::train
