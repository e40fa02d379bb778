// The forecast of a transformer run's records (tools/cosim/assembly/run_records_forecast.h) against
// the exact count of the same job built whole (CountRunRecords): dense and MoE shapes, 1F1B,
// GPipe and interleaved schedules, several iterations. The forecast extends counts of much
// smaller jobs, so it is held to the exact count within a tolerance, and must not run high:
// a run refused on its forecast would then be one that fits.
#include "tools/cosim/assembly/run_records_forecast.h"

#include <gtest/gtest.h>

#include <string>

#include "workloads/transformer.h"
#include "workloads/transformer_shape.h"

namespace nbox::testing {
namespace {

work::TransformerConfig Gpt(int layers, int microbatches, int iterations) {
  work::TransformerConfig c;
  c.shape = *work::FindTransformerPreset("gpt3-13b");
  c.shape.layers = layers;
  c.parallel.tensor = 2;
  c.parallel.pipeline = 4;
  c.parallel.data = 2;
  c.micro_batch = 1;
  c.global_batch = microbatches * c.micro_batch * c.parallel.data;
  c.iterations = iterations;
  return c;
}

uint64_t Bytes(const cosim::RunRecordCounts& c) {
  return c.program_bytes + c.record_bytes() + c.issued_bytes;
}

void ExpectForecastClose(const work::TransformerConfig& c, const std::string& what) {
  SCOPED_TRACE(what);
  work::ValidateTransformerConfig(c);
  const auto forecast = cosim::ForecastRunRecords(c, true);
  ASSERT_TRUE(forecast.has_value());
  const cosim::RunRecordCounts exact = cosim::CountRunRecords(work::MakeTransformerJob(c), true);
  // What follows the axes exactly is forecast exactly.
  EXPECT_EQ(forecast->collective_records, exact.collective_records);
  EXPECT_EQ(forecast->wait_records, exact.wait_records);
  EXPECT_EQ(forecast->compute_records, exact.compute_records);
  EXPECT_EQ(forecast->iteration_records, exact.iteration_records);
  EXPECT_EQ(forecast->ops, exact.ops);
  EXPECT_EQ(forecast->collective_instances, exact.collective_instances);
  // Sizes: what the elements take (the vectors' slack left out) within 2%, and never more
  // than the sizes as held.
  const auto f = static_cast<double>(Bytes(*forecast));
  const auto e = static_cast<double>(Bytes(exact));
  const auto tight = e - static_cast<double>(exact.program_slack_bytes + exact.issued_slack_bytes);
  EXPECT_LE(f, e) << "forecast " << f << " bytes, exact " << e;
  EXPECT_NEAR(f, tight, tight * 0.02) << "forecast " << f << " bytes, exact " << e;
}

TEST(RunRecordsForecast, MatchesTheWholeBuildOfDenseJobs) {
  ExpectForecastClose(Gpt(80, 16, 1), "1F1B, 80 layers, 16 micro-batches");
  ExpectForecastClose(Gpt(82, 16, 1), "layers that the stages do not divide");
  ExpectForecastClose(Gpt(80, 8, 3), "three iterations");
  work::TransformerConfig gpipe = Gpt(80, 16, 1);
  gpipe.schedule = work::PipelineSchedule::kGPipe;
  ExpectForecastClose(gpipe, "GPipe");
  work::TransformerConfig interleaved = Gpt(96, 24, 1);
  interleaved.virtual_stages = 2;
  ExpectForecastClose(interleaved, "interleaved, 2 chunks a stage");
}

TEST(RunRecordsForecast, MatchesTheWholeBuildOfMoeJobs) {
  work::TransformerConfig c;
  c.shape = *work::FindTransformerPreset("deepseek-moe-16b");
  c.parallel.pipeline = 2;
  c.parallel.data = 4;
  c.parallel.expert = 4;
  c.micro_batch = 1;
  c.global_batch = 12 * 4;
  c.iterations = 1;
  ExpectForecastClose(c, "a leading dense layer, experts in every other");
  c.shape.moe_layer_freq = 2;
  c.shape.layers = 56;
  ExpectForecastClose(c, "a leading dense layer, experts in every second one");
}

// A job less than 8 times its largest small build is built rather than forecast.
TEST(RunRecordsForecast, NothingToForecastForASmallJob) {
  EXPECT_FALSE(cosim::ForecastRunRecords(Gpt(8, 8, 1), false).has_value());
  EXPECT_FALSE(cosim::ForecastRunRecords(Gpt(40, 16, 1), false).has_value());  // 5 x 4/3
  EXPECT_TRUE(cosim::ForecastRunRecords(Gpt(48, 16, 1), false).has_value());   // 6 x 4/3
}

}  // namespace
}  // namespace nbox::testing
