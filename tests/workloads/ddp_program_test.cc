// MakeDdpProgram against hand-checked small models and closed forms. Expected bucket contents
// are rebuilt from the op sequence itself (the backward ops between two all-reduces) and
// checked against the documented rules, never against AssignGradientBuckets' output.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/ddp.h"

namespace nbox::work {
namespace {

DdpConfig TinyConfig(uint64_t parameters, double forward_flops) {
  DdpConfig config;
  config.model.name = "tiny";
  config.model.parameters = parameters;
  config.model.layers = 4;
  config.model.forward_flops_per_sample = forward_flops;
  config.model.gradient_bytes_per_param = 4;
  config.batch_per_rank = 2;
  config.compute.peak_flops = 1000;
  config.compute.utilization = 0.5;  // 500 FLOP/s achieved
  config.backward_to_forward = 2;
  config.bucket_bytes = 800;
  config.first_bucket_bytes = 800;
  config.optimizer_s = 1.5;
  config.iterations = 2;
  return config;
}

struct ExpectedOp {
  OpKind kind;
  std::string label;
  double duration_s;
  uint64_t bytes;
};

void ExpectOps(const RankProgram& program, int iterations,
               const std::vector<ExpectedOp>& one_iteration) {
  ASSERT_EQ(program.iterations, iterations);
  ASSERT_EQ(program.ops.size(), one_iteration.size() * static_cast<size_t>(iterations));
  for (int it = 0; it < iterations; ++it) {
    for (size_t i = 0; i < one_iteration.size(); ++i) {
      const Op& op = program.ops[static_cast<size_t>(it) * one_iteration.size() + i];
      const ExpectedOp& want = one_iteration[i];
      SCOPED_TRACE("iteration " + std::to_string(it) + " op " + std::to_string(i) + " (" +
                   want.label + ")");
      EXPECT_EQ(op.kind, want.kind);
      EXPECT_EQ(op.iteration, it);
      EXPECT_EQ(op.label, want.label);
      EXPECT_DOUBLE_EQ(op.duration_s, want.duration_s);
      EXPECT_EQ(op.bytes, want.bytes);
      if (op.kind == OpKind::kCollective) {
        EXPECT_EQ(op.collective, coll::CollectiveOp::kAllReduce);
      }
    }
  }
}

// 4 layers of 100 parameters (400 gradient bytes) and 1000 FLOPs each. Forward per layer:
// 1000 FLOP x batch 2 / 500 FLOP/s = 4 s; backward 2 x 4 = 8 s. Caps 800: the last two
// layers fill bucket 0 exactly (400 + 400), the first two bucket 1.
TEST(DdpProgram, HandCheckedFourLayerModel) {
  const std::vector<ExpectedOp> iteration = {
      {OpKind::kIterationBegin, "", 0, 0},
      {OpKind::kCompute, "fwd L0", 4, 0},
      {OpKind::kCompute, "fwd L1", 4, 0},
      {OpKind::kCompute, "fwd L2", 4, 0},
      {OpKind::kCompute, "fwd L3", 4, 0},
      {OpKind::kCompute, "bwd L3", 8, 0},
      {OpKind::kCompute, "bwd L2", 8, 0},
      {OpKind::kCollective, "allreduce bucket 0", 0, 800},
      {OpKind::kCompute, "bwd L1", 8, 0},
      {OpKind::kCompute, "bwd L0", 8, 0},
      {OpKind::kCollective, "allreduce bucket 1", 0, 800},
      {OpKind::kWaitAll, "", 0, 0},
      {OpKind::kCompute, "optimizer", 1.5, 0},
      {OpKind::kIterationEnd, "", 0, 0},
  };
  for (BucketClosing closing : {BucketClosing::kAtCap, BucketClosing::kBelowCap}) {
    SCOPED_TRACE(closing == BucketClosing::kAtCap ? "kAtCap" : "kBelowCap");
    DdpConfig config = TinyConfig(400, 4000);
    config.bucket_closing = closing;
    ExpectOps(MakeDdpProgram(config), 2, iteration);
  }
}

// 402 parameters and 4002 FLOPs over 4 layers: layers 0 and 1 take the remainders, so the
// gradients are 404, 404, 400, 400 bytes and the FLOPs 1001, 1001, 1000, 1000. Caps 800:
// PyTorch's rule closes {L1, L0} at 808 (it reached the cap only with L0), the below-cap rule
// splits it because 404 + 404 > 800. No optimizer step when optimizer_s = 0.
TEST(DdpProgram, HandCheckedRemaindersAndClosingRules) {
  const double fwd_big = 1001.0 * 2 / 500;  // 4.004 s
  const double fwd = 4;
  DdpConfig config = TinyConfig(402, 4002);
  config.optimizer_s = 0;
  config.iterations = 1;

  config.bucket_closing = BucketClosing::kAtCap;
  ExpectOps(MakeDdpProgram(config), 1,
            {
                {OpKind::kIterationBegin, "", 0, 0},
                {OpKind::kCompute, "fwd L0", fwd_big, 0},
                {OpKind::kCompute, "fwd L1", fwd_big, 0},
                {OpKind::kCompute, "fwd L2", fwd, 0},
                {OpKind::kCompute, "fwd L3", fwd, 0},
                {OpKind::kCompute, "bwd L3", 2 * fwd, 0},
                {OpKind::kCompute, "bwd L2", 2 * fwd, 0},
                {OpKind::kCollective, "allreduce bucket 0", 0, 800},
                {OpKind::kCompute, "bwd L1", 2 * fwd_big, 0},
                {OpKind::kCompute, "bwd L0", 2 * fwd_big, 0},
                {OpKind::kCollective, "allreduce bucket 1", 0, 808},
                {OpKind::kWaitAll, "", 0, 0},
                {OpKind::kIterationEnd, "", 0, 0},
            });

  config.bucket_closing = BucketClosing::kBelowCap;
  ExpectOps(MakeDdpProgram(config), 1,
            {
                {OpKind::kIterationBegin, "", 0, 0},
                {OpKind::kCompute, "fwd L0", fwd_big, 0},
                {OpKind::kCompute, "fwd L1", fwd_big, 0},
                {OpKind::kCompute, "fwd L2", fwd, 0},
                {OpKind::kCompute, "fwd L3", fwd, 0},
                {OpKind::kCompute, "bwd L3", 2 * fwd, 0},
                {OpKind::kCompute, "bwd L2", 2 * fwd, 0},
                {OpKind::kCollective, "allreduce bucket 0", 0, 800},
                {OpKind::kCompute, "bwd L1", 2 * fwd_big, 0},
                {OpKind::kCollective, "allreduce bucket 1", 0, 404},
                {OpKind::kCompute, "bwd L0", 2 * fwd_big, 0},
                {OpKind::kCollective, "allreduce bucket 2", 0, 404},
                {OpKind::kWaitAll, "", 0, 0},
                {OpKind::kIterationEnd, "", 0, 0},
            });
}

// A first-bucket cap of one layer (400 bytes) with a 600-byte cap afterwards separates the
// rules: PyTorch gives {L3}, {L2, L1} (800 >= 600), {L0}; below-cap gives four single-layer
// buckets because 400 + 400 > 600.
TEST(DdpProgram, FirstBucketCapAppliesToTheLastLayers) {
  DdpConfig config = TinyConfig(400, 4000);
  config.first_bucket_bytes = 400;
  config.bucket_bytes = 600;
  config.iterations = 1;

  auto all_reduce_bytes = [](const RankProgram& program) {
    std::vector<std::string> seen;  // "<label before>|<bytes>"
    for (size_t i = 1; i < program.ops.size(); ++i) {
      if (program.ops[i].kind == OpKind::kCollective) {
        seen.push_back(program.ops[i - 1].label + "|" + std::to_string(program.ops[i].bytes));
      }
    }
    return seen;
  };
  config.bucket_closing = BucketClosing::kAtCap;
  EXPECT_EQ(all_reduce_bytes(MakeDdpProgram(config)),
            (std::vector<std::string>{"bwd L3|400", "bwd L1|800", "bwd L0|400"}));
  config.bucket_closing = BucketClosing::kBelowCap;
  EXPECT_EQ(all_reduce_bytes(MakeDdpProgram(config)),
            (std::vector<std::string>{"bwd L3|400", "bwd L2|400", "bwd L1|400", "bwd L0|400"}));
}

// ---- Properties over the published presets -------------------------------------------------

struct Bucket {
  std::vector<int> layers;  // in the order their backward ran
  uint64_t bytes = 0;
  std::string label;
};

struct IterationView {
  std::vector<int> forward_layers;
  std::vector<int> backward_layers;
  std::vector<Bucket> buckets;
  double compute_s = 0;  // forward + backward
  bool buckets_before_wait = true;
  bool bucket_follows_backward = true;  // each all-reduce directly after a "bwd L<k>"
  bool layers_since_last_bucket_empty_at_wait = true;
};

int LayerOf(const std::string& label, const std::string& prefix) {
  return std::stoi(label.substr(prefix.size()));
}

// Parses iteration `it` (ops between its IterationBegin and IterationEnd).
IterationView ViewIteration(const RankProgram& program, int it) {
  IterationView view;
  std::vector<int> pending;  // backward layers not yet in a bucket
  bool waited = false;
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const Op& op = program.ops[i];
    if (op.iteration != it) continue;
    if (op.kind == OpKind::kCompute && op.label.rfind("fwd L", 0) == 0) {
      view.forward_layers.push_back(LayerOf(op.label, "fwd L"));
      view.compute_s += op.duration_s;
    } else if (op.kind == OpKind::kCompute && op.label.rfind("bwd L", 0) == 0) {
      const int layer = LayerOf(op.label, "bwd L");
      view.backward_layers.push_back(layer);
      pending.push_back(layer);
      view.compute_s += op.duration_s;
    } else if (op.kind == OpKind::kCollective) {
      if (waited) view.buckets_before_wait = false;
      if (i == 0 || program.ops[i - 1].label.rfind("bwd L", 0) != 0) {
        view.bucket_follows_backward = false;
      }
      view.buckets.push_back(Bucket{pending, op.bytes, op.label});
      pending.clear();
    } else if (op.kind == OpKind::kWaitAll) {
      waited = true;
      if (!pending.empty()) view.layers_since_last_bucket_empty_at_wait = false;
    }
  }
  return view;
}

// Gradient bytes of layer l under the documented even split (remainder to the lowest layers).
uint64_t LayerBytes(const ModelSpec& model, int layer) {
  const uint64_t layers = static_cast<uint64_t>(model.layers);
  const uint64_t params =
      model.parameters / layers + (static_cast<uint64_t>(layer) < model.parameters % layers);
  return params * model.gradient_bytes_per_param;
}

DdpConfig PresetConfig(const std::string& name, BucketClosing closing) {
  const ModelSpec* model = FindModelPreset(name);
  EXPECT_NE(model, nullptr) << name;
  DdpConfig config;
  if (model != nullptr) config.model = *model;
  config.bucket_closing = closing;
  config.optimizer_s = 0.002;
  config.iterations = 2;
  return config;
}

class DdpPresetTest : public ::testing::TestWithParam<std::tuple<std::string, BucketClosing>> {
 protected:
  DdpConfig Config() const {
    return PresetConfig(std::get<0>(GetParam()), std::get<1>(GetParam()));
  }
};

TEST_P(DdpPresetTest, TotalComputeMatchesClosedForm) {
  const DdpConfig config = Config();
  const RankProgram program = MakeDdpProgram(config);
  const double expected = (1 + config.backward_to_forward) * config.model.forward_flops_per_sample *
                          config.batch_per_rank /
                          (config.compute.peak_flops * config.compute.utilization);
  for (int it = 0; it < config.iterations; ++it) {
    EXPECT_NEAR(ViewIteration(program, it).compute_s, expected, expected * 1e-12);
  }
  double all_compute = 0;
  for (const Op& op : program.ops) all_compute += op.duration_s;
  const double with_optimizer = config.iterations * (expected + config.optimizer_s);
  EXPECT_NEAR(all_compute, with_optimizer, with_optimizer * 1e-12);
}

TEST_P(DdpPresetTest, LayerOrderForwardThenReverse) {
  const DdpConfig config = Config();
  const IterationView view = ViewIteration(MakeDdpProgram(config), 1);
  ASSERT_EQ(view.forward_layers.size(), static_cast<size_t>(config.model.layers));
  ASSERT_EQ(view.backward_layers.size(), static_cast<size_t>(config.model.layers));
  for (int l = 0; l < config.model.layers; ++l) {
    EXPECT_EQ(view.forward_layers[static_cast<size_t>(l)], l);
    EXPECT_EQ(view.backward_layers[static_cast<size_t>(l)], config.model.layers - 1 - l);
  }
}

TEST_P(DdpPresetTest, BucketBytesSumToAllGradients) {
  const DdpConfig config = Config();
  const RankProgram program = MakeDdpProgram(config);
  const uint64_t expected = config.model.parameters * config.model.gradient_bytes_per_param;
  for (int it = 0; it < config.iterations; ++it) {
    uint64_t sum = 0;
    for (const Bucket& bucket : ViewIteration(program, it).buckets) {
      uint64_t from_layers = 0;
      for (int layer : bucket.layers) from_layers += LayerBytes(config.model, layer);
      EXPECT_EQ(bucket.bytes, from_layers) << bucket.label;
      sum += bucket.bytes;
    }
    EXPECT_EQ(sum, expected) << "iteration " << it;
  }
}

TEST_P(DdpPresetTest, BucketsIssuedAfterTheirLastBackwardAndBeforeTheWait) {
  const DdpConfig config = Config();
  const RankProgram program = MakeDdpProgram(config);
  for (int it = 0; it < config.iterations; ++it) {
    const IterationView view = ViewIteration(program, it);
    EXPECT_TRUE(view.buckets_before_wait);
    EXPECT_TRUE(view.bucket_follows_backward);
    EXPECT_TRUE(view.layers_since_last_bucket_empty_at_wait);
    for (size_t b = 0; b < view.buckets.size(); ++b) {
      EXPECT_EQ(view.buckets[b].label, "allreduce bucket " + std::to_string(b));
      EXPECT_FALSE(view.buckets[b].layers.empty()) << view.buckets[b].label;
    }
  }
}

// The cap rules, checked per bucket from its layers. Bucket 0 uses first_bucket_bytes.
TEST_P(DdpPresetTest, BucketsRespectTheirCaps) {
  const DdpConfig config = Config();
  const IterationView view = ViewIteration(MakeDdpProgram(config), 0);
  for (size_t b = 0; b < view.buckets.size(); ++b) {
    const Bucket& bucket = view.buckets[b];
    const uint64_t cap = b == 0 ? config.first_bucket_bytes : config.bucket_bytes;
    const bool last_bucket = b + 1 == view.buckets.size();
    const uint64_t last_layer_bytes = LayerBytes(config.model, bucket.layers.back());
    SCOPED_TRACE(bucket.label + " bytes " + std::to_string(bucket.bytes) + " cap " +
                 std::to_string(cap));
    if (config.bucket_closing == BucketClosing::kAtCap) {
      // Open (below the cap) until its last layer joined; full (at the cap) unless it is the
      // remainder at the end.
      EXPECT_LT(bucket.bytes - last_layer_bytes, cap);
      if (!last_bucket) {
        EXPECT_GE(bucket.bytes, cap);
      }
    } else {
      // At most the cap unless it is one layer; the next layer would not have fitted.
      if (bucket.layers.size() > 1) {
        EXPECT_LE(bucket.bytes, cap);
      }
      if (!last_bucket) {
        const uint64_t next = LayerBytes(config.model, view.buckets[b + 1].layers.front());
        EXPECT_GT(bucket.bytes + next, cap);
      }
    }
  }
}

TEST_P(DdpPresetTest, IterationMarkersPairUp) {
  const DdpConfig config = Config();
  const RankProgram program = MakeDdpProgram(config);
  int open = -1;  // iteration currently open, -1 if none
  int next = 0;   // next iteration expected to begin
  int waits_in_iteration = 0;
  for (const Op& op : program.ops) {
    if (op.kind == OpKind::kIterationBegin) {
      ASSERT_EQ(open, -1) << "iteration " << op.iteration << " begins inside " << open;
      ASSERT_EQ(op.iteration, next);
      open = op.iteration;
      waits_in_iteration = 0;
    } else if (op.kind == OpKind::kIterationEnd) {
      ASSERT_EQ(op.iteration, open);
      EXPECT_EQ(waits_in_iteration, 1);
      open = -1;
      ++next;
    } else {
      ASSERT_EQ(op.iteration, open) << op.label << " outside its iteration";
      if (op.kind == OpKind::kWaitAll) ++waits_in_iteration;
    }
  }
  EXPECT_EQ(open, -1);
  EXPECT_EQ(next, config.iterations);
  ASSERT_FALSE(program.ops.empty());
  EXPECT_EQ(program.ops.front().kind, OpKind::kIterationBegin);
  EXPECT_EQ(program.ops.back().kind, OpKind::kIterationEnd);
  // The optimizer is the last op before each IterationEnd, right after the wait.
  for (size_t i = 0; i < program.ops.size(); ++i) {
    if (program.ops[i].kind != OpKind::kIterationEnd) continue;
    ASSERT_GE(i, 2u);
    EXPECT_EQ(program.ops[i - 1].label, "optimizer");
    EXPECT_DOUBLE_EQ(program.ops[i - 1].duration_s, config.optimizer_s);
    EXPECT_EQ(program.ops[i - 2].kind, OpKind::kWaitAll);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Presets, DdpPresetTest,
    ::testing::Combine(::testing::Values("resnet50", "resnet152", "bert-base", "bert-large", "gpt2",
                                         "gpt2-xl"),
                       ::testing::Values(BucketClosing::kAtCap, BucketClosing::kBelowCap)),
    [](const ::testing::TestParamInfo<DdpPresetTest::ParamType>& info) {
      std::string name = std::get<0>(info.param);
      for (char& c : name) {
        if (c == '-') c = '_';
      }
      return name + (std::get<1>(info.param) == BucketClosing::kAtCap ? "_AtCap" : "_BelowCap");
    });

// GPT-2 XL: 1,557,611,200 parameters / 48 layers = 32,450,233 + 16/48, so layers 0..15 hold
// 32,450,234 (129,800,936 B) and 16..47 hold 32,450,233 (129,800,932 B), far above 25 MiB:
// every layer is a bucket of its own under both rules.
TEST(DdpProgram, LayersLargerThanTheCapAreBucketsOfTheirOwn) {
  for (BucketClosing closing : {BucketClosing::kAtCap, BucketClosing::kBelowCap}) {
    const DdpConfig config = PresetConfig("gpt2-xl", closing);
    const IterationView view = ViewIteration(MakeDdpProgram(config), 0);
    ASSERT_EQ(view.buckets.size(), 48u);
    for (size_t b = 0; b < view.buckets.size(); ++b) {
      ASSERT_EQ(view.buckets[b].layers.size(), 1u);
      EXPECT_EQ(view.buckets[b].layers[0], 47 - static_cast<int>(b));
      EXPECT_EQ(view.buckets[b].bytes, b < 32 ? 129800932u : 129800936u);
    }
  }
}

// ResNet-152: 60,192,808 parameters over 152 layers = 396,005 + 48/152, so layers 0..47 hold
// 396,006 parameters (1,584,024 B) and 48..151 hold 396,005 (1,584,020 B). Each layer passes
// the 1 MiB first cap alone. 25 MiB = 26,214,400 B: PyTorch packs 17 layers (16 x 1,584,020 =
// 25,344,320 < cap, 17 x = 26,928,340 >= cap); the below-cap rule packs 16.
TEST(DdpProgram, ResNet152BucketsByHand) {
  const DdpConfig at_cap = PresetConfig("resnet152", BucketClosing::kAtCap);
  const IterationView pytorch = ViewIteration(MakeDdpProgram(at_cap), 0);
  ASSERT_GE(pytorch.buckets.size(), 2u);
  EXPECT_EQ(pytorch.buckets[0].layers, (std::vector<int>{151}));
  EXPECT_EQ(pytorch.buckets[0].bytes, 1584020u);
  EXPECT_EQ(pytorch.buckets[1].layers.size(), 17u);
  EXPECT_EQ(pytorch.buckets[1].bytes, 17u * 1584020u);

  const DdpConfig below_cap = PresetConfig("resnet152", BucketClosing::kBelowCap);
  const IterationView below = ViewIteration(MakeDdpProgram(below_cap), 0);
  ASSERT_GE(below.buckets.size(), 2u);
  EXPECT_EQ(below.buckets[0].layers, (std::vector<int>{151}));
  EXPECT_EQ(below.buckets[1].layers.size(), 16u);
  EXPECT_EQ(below.buckets[1].bytes, 16u * 1584020u);
}

TEST(DdpProgram, SameConfigSameProgram) {
  const DdpConfig config = PresetConfig("bert-large", BucketClosing::kAtCap);
  const RankProgram a = MakeDdpProgram(config);
  const RankProgram b = MakeDdpProgram(config);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    EXPECT_EQ(a.ops[i].label, b.ops[i].label);
    EXPECT_EQ(a.ops[i].duration_s, b.ops[i].duration_s);  // bit-identical
    EXPECT_EQ(a.ops[i].bytes, b.ops[i].bytes);
  }
}

}  // namespace
}  // namespace nbox::work
