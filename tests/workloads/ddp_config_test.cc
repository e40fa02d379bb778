// Every bad DdpConfig field is rejected with std::invalid_argument naming that field.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "workloads/ddp.h"

namespace nbox::work {
namespace {

DdpConfig GoodConfig() {
  DdpConfig config;
  config.model.name = "small";
  config.model.parameters = 1000;
  config.model.layers = 10;
  config.model.forward_flops_per_sample = 1e6;
  return config;
}

struct BadCase {
  std::string field;  // expected in the message as "DdpConfig.<field> "
  std::function<void(DdpConfig&)> spoil;
};

TEST(DdpConfig, GoodConfigPasses) {
  EXPECT_NO_THROW(MakeDdpProgram(GoodConfig()));
}

TEST(DdpConfig, EachBadFieldIsNamed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const BadCase cases[] = {
      {"model.layers", [](DdpConfig& c) { c.model.layers = 0; }},
      {"model.layers", [](DdpConfig& c) { c.model.layers = -3; }},
      {"model.parameters", [](DdpConfig& c) { c.model.parameters = 0; }},
      {"model.parameters", [](DdpConfig& c) { c.model.parameters = 9; }},  // < 10 layers
      {"model.parameters",
       [](DdpConfig& c) { c.model.parameters = std::numeric_limits<uint64_t>::max() / 2; }},
      {"model.gradient_bytes_per_param",
       [](DdpConfig& c) { c.model.gradient_bytes_per_param = 0; }},
      {"model.forward_flops_per_sample",
       [](DdpConfig& c) { c.model.forward_flops_per_sample = 0; }},
      {"model.forward_flops_per_sample",
       [](DdpConfig& c) { c.model.forward_flops_per_sample = 9; }},  // < 10 layers
      {"model.forward_flops_per_sample",
       [nan](DdpConfig& c) { c.model.forward_flops_per_sample = nan; }},
      {"model.forward_flops_per_sample",
       [](DdpConfig& c) { c.model.forward_flops_per_sample = 2e18; }},
      {"batch_per_rank", [](DdpConfig& c) { c.batch_per_rank = 0; }},
      {"compute.peak_flops", [](DdpConfig& c) { c.compute.peak_flops = 0; }},
      {"compute.peak_flops", [inf](DdpConfig& c) { c.compute.peak_flops = inf; }},
      {"compute.utilization", [](DdpConfig& c) { c.compute.utilization = 0; }},
      {"compute.utilization", [](DdpConfig& c) { c.compute.utilization = 1.01; }},
      {"compute.utilization", [nan](DdpConfig& c) { c.compute.utilization = nan; }},
      {"backward_to_forward", [](DdpConfig& c) { c.backward_to_forward = 0; }},
      {"backward_to_forward", [nan](DdpConfig& c) { c.backward_to_forward = nan; }},
      {"bucket_bytes", [](DdpConfig& c) { c.bucket_bytes = 0; }},
      {"first_bucket_bytes", [](DdpConfig& c) { c.first_bucket_bytes = 0; }},
      {"bucket_closing", [](DdpConfig& c) { c.bucket_closing = static_cast<BucketClosing>(7); }},
      {"optimizer_s", [](DdpConfig& c) { c.optimizer_s = -1e-3; }},
      {"optimizer_s", [inf](DdpConfig& c) { c.optimizer_s = inf; }},
      {"iterations", [](DdpConfig& c) { c.iterations = 0; }},
  };
  for (const BadCase& bad : cases) {
    DdpConfig config = GoodConfig();
    bad.spoil(config);
    try {
      MakeDdpProgram(config);
      ADD_FAILURE() << bad.field << ": no error";
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("DdpConfig." + bad.field + " "), std::string::npos)
          << "expected the field " << bad.field << " in: " << message;
      EXPECT_NE(message.find("(got "), std::string::npos) << message;
    }
  }
}

TEST(DdpConfig, BoundaryValuesAreAccepted) {
  DdpConfig config = GoodConfig();
  config.model.parameters = 10;                // one per layer
  config.model.forward_flops_per_sample = 10;  // one per layer
  config.compute.utilization = 1;
  config.optimizer_s = 0;
  config.iterations = 1;
  config.bucket_bytes = 1;
  config.first_bucket_bytes = 1;
  EXPECT_NO_THROW(MakeDdpProgram(config));
}

}  // namespace
}  // namespace nbox::work
