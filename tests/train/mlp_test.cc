// The MLP of nbox_mlp_train against hand-computed outputs and against finite differences of
// its own loss (the gradient must be the derivative, whatever the code computes it with).
#include "bridge/examples/mlp_train/mlp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace nbox::train {
namespace {

TEST(Mlp, LaysOutLayersInOrderWeightsThenBias) {
  Mlp mlp({3, 4, 2});
  ASSERT_EQ(mlp.layer_count(), 2);
  EXPECT_EQ(mlp.layer(0).weights, 0u);
  EXPECT_EQ(mlp.layer(0).bias, 12u);
  EXPECT_EQ(mlp.layer(0).end, 16u);
  EXPECT_EQ(mlp.layer(1).weights, 16u);
  EXPECT_EQ(mlp.layer(1).bias, 24u);
  EXPECT_EQ(mlp.parameter_count(), 26u);
  EXPECT_THROW(Mlp({5}), std::invalid_argument);
  EXPECT_THROW(Mlp({5, 0, 2}), std::invalid_argument);
}

TEST(Mlp, ForwardMatchesAHandComputedNetwork) {
  // 2 -> 2 (ReLU) -> 1. W0 = [[1, -1], [2, 1]] ([in][out]), b0 = [0.5, -4]; W1 = [3, -2], b1 = 1.
  Mlp mlp({2, 2, 1});
  const std::vector<float> p = {1, -1, 2, 1, 0.5f, -4, 3, -2, 1};
  // x = (1, 2): z0 = (1 + 4 + 0.5, -1 + 2 - 4) = (5.5, -3) -> relu (5.5, 0); y = 16.5 + 1.
  // x = (-1, 0.5): z0 = (-1 + 1 + 0.5, 1 + 0.5 - 4) = (0.5, -2.5) -> (0.5, 0); y = 1.5 + 1.
  const std::vector<float>& y = mlp.Forward(p, {1, 2, -1, 0.5f}, 2);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_FLOAT_EQ(y[0], 17.5f);
  EXPECT_FLOAT_EQ(y[1], 2.5f);
  // Loss 0.5 * ((17.5 - 17)^2 + (2.5 - 0.5)^2) * 0.5 = 0.5 * (0.25 + 4) * 0.5.
  EXPECT_DOUBLE_EQ(mlp.SetOutputError({17, 0.5f}, 0.5f), 1.0625);
}

double Loss(Mlp& mlp, const std::vector<float>& p, const std::vector<float>& x,
            const std::vector<float>& t, int batch) {
  mlp.Forward(p, x, batch);
  return mlp.SetOutputError(t, 1.0f / batch);
}

TEST(Mlp, BackwardIsTheDerivativeOfTheLoss) {
  Mlp mlp({5, 7, 6, 3});
  std::vector<float> p;
  mlp.Initialise(&p, 42);
  // Non-zero biases, so the bias gradients of every layer are exercised off the origin.
  for (int l = 0; l < mlp.layer_count(); ++l) {
    for (size_t k = mlp.layer(l).bias; k < mlp.layer(l).end; ++k) p[k] = 0.05f * (k % 5);
  }
  const int batch = 4;
  std::vector<float> x(batch * 5), t(batch * 3);
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.7 * k + 0.3);
  for (size_t k = 0; k < t.size(); ++k) t[k] = std::cos(1.3 * k);

  Loss(mlp, p, x, t, batch);
  std::vector<float> gradient(mlp.parameter_count(), -99.0f);
  mlp.Backward(p, gradient.data(), [](int) {});

  const float h = 1e-3f;
  for (size_t k = 0; k < p.size(); ++k) {
    std::vector<float> plus = p, minus = p;
    plus[k] += h;
    minus[k] -= h;
    const double numeric = (Loss(mlp, plus, x, t, batch) - Loss(mlp, minus, x, t, batch)) /
                           (static_cast<double>(plus[k]) - minus[k]);
    EXPECT_NEAR(gradient[k], numeric, 2e-3 + 2e-3 * std::fabs(numeric)) << "parameter " << k;
  }
}

TEST(Mlp, ReportsEachLayerFromTheOutputBackWhenItsSliceIsFinal) {
  Mlp mlp({4, 8, 8, 2});
  std::vector<float> p;
  mlp.Initialise(&p, 7);
  std::vector<float> x(3 * 4), t(3 * 2, 0.25f);
  for (size_t k = 0; k < x.size(); ++k) x[k] = 0.1f * static_cast<float>(k) - 0.5f;
  mlp.Forward(p, x, 3);
  mlp.SetOutputError(t, 1.0f / 3);
  std::vector<float> gradient(mlp.parameter_count());
  std::vector<int> order;
  std::vector<std::vector<float>> slices;
  mlp.Backward(p, gradient.data(), [&](int l) {
    order.push_back(l);
    slices.emplace_back(gradient.begin() + mlp.layer(l).weights,
                        gradient.begin() + mlp.layer(l).end);
  });
  EXPECT_EQ(order, (std::vector<int>{2, 1, 0}));
  for (size_t i = 0; i < order.size(); ++i) {
    const LayerSlice& s = mlp.layer(order[i]);
    EXPECT_EQ(slices[i], std::vector<float>(gradient.begin() + s.weights, gradient.begin() + s.end))
        << "layer " << order[i] << " changed after it was reported";
  }
}

TEST(Mlp, InitialisationIsDeterministicAndBounded) {
  Mlp mlp({16, 32, 4});
  std::vector<float> a, b, c;
  mlp.Initialise(&a, 3);
  mlp.Initialise(&b, 3);
  mlp.Initialise(&c, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const float limit0 = std::sqrt(6.0f / 16);
  for (size_t k = mlp.layer(0).weights; k < mlp.layer(0).bias; ++k) {
    EXPECT_LE(std::fabs(a[k]), limit0);
  }
  for (size_t k = mlp.layer(0).bias; k < mlp.layer(0).end; ++k) EXPECT_EQ(a[k], 0.0f);
}

TEST(Sgd, SubtractsTheScaledGradient) {
  std::vector<float> p = {1.0f, -2.0f, 0.5f};
  const float g[] = {0.5f, -1.0f, 0.0f};
  SgdStep(0.25f, g, &p);
  EXPECT_EQ(p, (std::vector<float>{0.875f, -1.75f, 0.5f}));
}

}  // namespace
}  // namespace nbox::train
