// Loading valid scenarios: defaults for an empty file, every kind of value in a full one.
#include <gtest/gtest.h>

#include "scenario_test_support.h"
#include "tools/cosim/scenario/key_schema.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::scenario {
namespace {

using testing::Fixture;

TEST(LoadScenario, EmptyFileGivesTheDefaultsOfScenarioH) {
  const Scenario loaded = LoadScenario(Fixture("empty.ini"));
  const Scenario defaults;  // the defaults written in scenario.h
  EXPECT_EQ(loaded.path, Fixture("empty.ini"));
  EXPECT_EQ(loaded.job.world_size, defaults.job.world_size);
  EXPECT_EQ(loaded.job.seed, defaults.job.seed);
  EXPECT_EQ(loaded.topology.kind, defaults.topology.kind);
  EXPECT_EQ(loaded.topology.hosts, defaults.topology.hosts);
  EXPECT_EQ(loaded.topology.leaves, defaults.topology.leaves);
  EXPECT_EQ(loaded.topology.spines, defaults.topology.spines);
  EXPECT_EQ(loaded.topology.hosts_per_leaf, defaults.topology.hosts_per_leaf);
  EXPECT_EQ(loaded.topology.k, defaults.topology.k);
  EXPECT_EQ(loaded.topology.file, defaults.topology.file);
  EXPECT_EQ(loaded.topology.host_link_bps, defaults.topology.host_link_bps);
  EXPECT_EQ(loaded.topology.fabric_link_bps, defaults.topology.fabric_link_bps);
  EXPECT_EQ(loaded.topology.oversubscription, defaults.topology.oversubscription);
  EXPECT_EQ(loaded.topology.link_latency_s, defaults.topology.link_latency_s);
  EXPECT_EQ(loaded.network.transport, defaults.network.transport);
  EXPECT_EQ(loaded.network.tcp_cc, defaults.network.tcp_cc);
  EXPECT_EQ(loaded.network.mtu, defaults.network.mtu);
  EXPECT_EQ(loaded.network.switch_queue_bytes, defaults.network.switch_queue_bytes);
  EXPECT_EQ(loaded.network.ecn, defaults.network.ecn);
  EXPECT_EQ(loaded.network.ecn_threshold_bytes, defaults.network.ecn_threshold_bytes);
  EXPECT_EQ(loaded.network.tcp_buffer_bytes, defaults.network.tcp_buffer_bytes);
  EXPECT_EQ(loaded.network.tcp_min_rto_s, defaults.network.tcp_min_rto_s);
  EXPECT_EQ(loaded.collectives.allreduce, defaults.collectives.allreduce);
  EXPECT_EQ(loaded.collectives.channels, defaults.collectives.channels);
  EXPECT_EQ(loaded.collectives.chunk_bytes, defaults.collectives.chunk_bytes);
  EXPECT_EQ(loaded.workload.kind, defaults.workload.kind);
  EXPECT_EQ(loaded.workload.model, defaults.workload.model);
  EXPECT_EQ(loaded.workload.parameters, defaults.workload.parameters);
  EXPECT_EQ(loaded.workload.layers, defaults.workload.layers);
  EXPECT_EQ(loaded.workload.flops_per_sample, defaults.workload.flops_per_sample);
  EXPECT_EQ(loaded.workload.batch_per_rank, defaults.workload.batch_per_rank);
  EXPECT_EQ(loaded.workload.gpu_peak_flops, defaults.workload.gpu_peak_flops);
  EXPECT_EQ(loaded.workload.gpu_util, defaults.workload.gpu_util);
  EXPECT_EQ(loaded.workload.backward_ratio, defaults.workload.backward_ratio);
  EXPECT_EQ(loaded.workload.bucket_bytes, defaults.workload.bucket_bytes);
  EXPECT_EQ(loaded.workload.optimizer_s, defaults.workload.optimizer_s);
  EXPECT_EQ(loaded.workload.iterations, defaults.workload.iterations);
  EXPECT_EQ(loaded.output.dir, defaults.output.dir);
  EXPECT_EQ(loaded.output.trace, defaults.output.trace);
  EXPECT_EQ(loaded.output.progress, defaults.output.progress);
  EXPECT_EQ(loaded.output.link_sample_s, 0.0);
}

TEST(LoadScenario, SettingsListEveryKeyWithItsDefault) {
  const Scenario loaded = LoadScenario(Fixture("empty.ini"));
  EXPECT_EQ(loaded.settings.size(), ScenarioKeys().size());
  const std::map<std::string, std::string> expected = {
      {"job.world_size", "8"},
      {"job.seed", "1"},
      {"topology.kind", "star"},
      {"topology.hosts", "0"},
      {"topology.file", ""},
      {"topology.host_link", "100Gbps"},
      {"topology.fabric_link", "100Gbps"},
      {"topology.oversubscription", "0"},
      {"topology.link_latency", "1us"},
      {"network.transport", "tcp"},
      {"network.tcp_cc", "cubic"},
      {"network.mtu", "1500"},
      {"network.switch_queue", "4MB"},
      {"network.ecn", "off"},
      {"network.ecn_threshold", "100kB"},
      {"network.tcp_buffer", "4MB"},
      {"network.tcp_min_rto", "200ms"},
      {"network.tcp_limit_output", "1MiB"},
      {"collectives.allreduce", "ring"},
      {"collectives.alltoall", "direct"},
      {"collectives.channels", "auto"},
      {"collectives.chunk", "1MiB"},
      {"workload.kind", "ddp"},
      {"workload.model", "resnet152"},
      {"workload.parameters", "0"},
      {"workload.flops_per_sample", "0"},
      {"workload.gpu_peak", "125TFLOPS"},
      {"workload.gpu_util", "0.4"},
      {"workload.backward_ratio", "2"},
      {"workload.bucket", "25MiB"},
      {"workload.optimizer_time", "0s"},
      {"workload.iterations", "3"},
      {"output.dir", ""},
      {"output.trace", "none"},
      {"output.progress", "auto"},
      {"output.link_sample", "0s"},
  };
  for (const auto& [key, value] : expected) {
    ASSERT_EQ(loaded.settings.count(key), 1u) << key;
    EXPECT_EQ(loaded.settings.at(key), value) << key;
  }
}

TEST(LoadScenario, FullFileSetsEveryKindOfValue) {
  const Scenario s = LoadScenario(Fixture("full.ini"));
  EXPECT_EQ(s.job.world_size, 16);
  EXPECT_EQ(s.job.seed, 42u);
  EXPECT_EQ(s.topology.kind, scenario::TopologyKind::kLeafSpine);
  EXPECT_EQ(s.topology.leaves, 4);
  EXPECT_EQ(s.topology.spines, 2);
  EXPECT_EQ(s.topology.hosts_per_leaf, 4);
  EXPECT_EQ(s.topology.host_link_bps, 25e9);
  EXPECT_EQ(s.topology.fabric_link_bps, 100e9);
  EXPECT_EQ(s.topology.link_latency_s, 500e-9);
  EXPECT_EQ(s.network.tcp_cc, "dctcp");
  EXPECT_EQ(s.network.mtu, 9000u);
  EXPECT_EQ(s.network.switch_queue_bytes, 2u * 1024 * 1024);
  EXPECT_TRUE(s.network.ecn);
  EXPECT_EQ(s.network.ecn_threshold_bytes, 200000u);
  EXPECT_EQ(s.network.tcp_buffer_bytes, 8000000u);
  EXPECT_EQ(s.network.tcp_min_rto_s, 200e-6);
  EXPECT_EQ(s.collectives.channels, 4);
  EXPECT_EQ(s.collectives.chunk_bytes, 512u * 1024);
  EXPECT_EQ(s.workload.model, "custom");
  EXPECT_EQ(s.workload.parameters, 1500000000u);
  EXPECT_EQ(s.workload.layers, 48);
  EXPECT_EQ(s.workload.flops_per_sample, 3.1e12);
  EXPECT_EQ(s.workload.batch_per_rank, 8);
  EXPECT_EQ(s.workload.gpu_peak_flops, 312e12);
  EXPECT_EQ(s.workload.gpu_util, 0.5);
  EXPECT_EQ(s.workload.backward_ratio, 2.5);
  EXPECT_EQ(s.workload.bucket_bytes, 50u * 1024 * 1024);
  EXPECT_EQ(s.workload.optimizer_s, 2.5e-3);
  EXPECT_EQ(s.workload.iterations, 5);
  EXPECT_EQ(s.output.dir, "results/full");
  EXPECT_EQ(s.output.trace, scenario::Timeline::kChrome);
  EXPECT_EQ(s.output.progress, "off");
}

TEST(LoadScenario, SettingsShowValuesInTheirExactShortForm) {
  const Scenario s = LoadScenario(Fixture("full.ini"));
  EXPECT_EQ(s.settings.at("topology.host_link"), "25Gbps");  // written "25 Gb/s"
  EXPECT_EQ(s.settings.at("network.ecn"), "on");             // written "yes"
  EXPECT_EQ(s.settings.at("network.switch_queue"), "2MiB");
  EXPECT_EQ(s.settings.at("network.ecn_threshold"), "200kB");  // written "200KB"
  EXPECT_EQ(s.settings.at("workload.parameters"), "1.5B");
  EXPECT_EQ(s.settings.at("workload.flops_per_sample"), "3.1TFLOP");
  EXPECT_EQ(s.settings.at("workload.optimizer_time"), "2.5ms");
  EXPECT_EQ(s.settings.at("topology.oversubscription"), "0");  // not in the file
}

TEST(LoadScenario, SettingsReadBackToTheSameScenario) {
  const Scenario first = LoadScenario(Fixture("full.ini"));
  std::vector<std::string> overrides;
  for (const auto& [key, value] : first.settings) overrides.push_back(key + "=" + value);
  const Scenario second = LoadScenario(Fixture("empty.ini"), overrides);
  EXPECT_EQ(second.settings, first.settings);
  EXPECT_EQ(second.topology.link_latency_s, first.topology.link_latency_s);
  EXPECT_EQ(second.workload.flops_per_sample, first.workload.flops_per_sample);
}

TEST(LoadScenario, MissingFileIsAnErrorNamingIt) {
  EXPECT_EQ(testing::LoadError(Fixture("no_such.ini")),
            "scenario file 'tests/scenario/fixtures/no_such.ini' does not exist");
  EXPECT_EQ(testing::LoadError("tests/scenario/fixtures"),
            "scenario file 'tests/scenario/fixtures' is not a regular file");
}

}  // namespace
}  // namespace nbox::scenario
