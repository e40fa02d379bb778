// The presets carry the published numbers (typed here from the papers and model cards named
// in workloads/README.md) and the FLOP conventions the README states.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "workloads/ddp.h"

namespace nbox::work {
namespace {

struct Published {
  const char* name;
  uint64_t parameters;
  int layers;
  double forward_flops;
};

// CNNs: 2 x multiply-adds. Transformers: 2 x parameters x tokens (BERT 128, GPT-2 1024).
const Published kPublished[] = {
    {"resnet50", 25557032, 50, 2 * 4.089e9},
    {"resnet152", 60192808, 152, 2 * 11.3e9},
    {"bert-base", 110000000, 12, 2 * 110e6 * 128},
    {"bert-large", 340000000, 24, 2 * 340e6 * 128},
    {"gpt2", 124439808, 12, 2 * 124439808.0 * 1024},
    {"gpt2-xl", 1557611200, 48, 2 * 1557611200.0 * 1024},
};

TEST(ModelPresets, CarryThePublishedNumbers) {
  for (const Published& want : kPublished) {
    SCOPED_TRACE(want.name);
    const ModelSpec* spec = FindModelPreset(want.name);
    ASSERT_NE(spec, nullptr);
    EXPECT_EQ(spec->name, want.name);
    EXPECT_EQ(spec->parameters, want.parameters);
    EXPECT_EQ(spec->layers, want.layers);
    EXPECT_DOUBLE_EQ(spec->forward_flops_per_sample, want.forward_flops);
    EXPECT_EQ(spec->gradient_bytes_per_param, 4u);
  }
}

TEST(ModelPresets, EveryPresetCitesItsSource) {
  for (const std::string& name : ModelPresetNames()) {
    const ModelSpec* spec = FindModelPreset(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_GE(spec->source.size(), 40u) << name;
    // Each cites a paper by author and year.
    EXPECT_TRUE(spec->source.find("et al. 20") != std::string::npos)
        << name << ": " << spec->source;
  }
  EXPECT_NE(FindModelPreset("resnet152")->source.find("Table 1"), std::string::npos);
  EXPECT_NE(FindModelPreset("bert-large")->source.find("Devlin"), std::string::npos);
  EXPECT_NE(FindModelPreset("gpt2")->source.find("Kaplan"), std::string::npos);
}

TEST(ModelPresets, NamesAreUniqueAndComplete) {
  const std::vector<std::string> names = ModelPresetNames();
  const std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
  for (const Published& want : kPublished) EXPECT_EQ(unique.count(want.name), 1u) << want.name;
}

TEST(ModelPresets, UnknownNameIsNull) {
  EXPECT_EQ(FindModelPreset("resnet-152"), nullptr);
  EXPECT_EQ(FindModelPreset("ResNet152"), nullptr);
  EXPECT_EQ(FindModelPreset(""), nullptr);
}

TEST(ModelPresets, EveryPresetMakesAValidDefaultProgram) {
  for (const std::string& name : ModelPresetNames()) {
    DdpConfig config;
    config.model = *FindModelPreset(name);
    EXPECT_NO_THROW(ValidateDdpConfig(config)) << name;
  }
}

}  // namespace
}  // namespace nbox::work
