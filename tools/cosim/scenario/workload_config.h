// The workload generators' configurations, from a scenario's keys: one place that maps keys
// to generator fields, used to build the workload (tools/cosim/assembly/workload_registry.h) and to
// check it before anything runs (workload_rules.h), so errors can name the key.
#pragma once

#include <string>
#include <string_view>

#include "tools/cosim/scenario/scenario.h"
#include "workloads/ddp.h"
#include "workloads/dlrm.h"
#include "workloads/nccl_tests.h"
#include "workloads/transformer.h"

namespace nbox::scenario {

// workload.kind = ddp. Throws std::invalid_argument for a model that is not a DDP preset.
work::DdpConfig DdpConfigOf(const Scenario& scenario);

// workload.kind = transformer or moe: the preset (or custom) shape with the shape keys laid
// over it, the parallelism, batch and training keys. Throws std::invalid_argument for a model
// that is not a transformer preset.
work::TransformerConfig TransformerConfigOf(const Scenario& scenario);

// workload.kind = dlrm.
work::DlrmConfig DlrmConfigOf(const Scenario& scenario);

// workload.kind = nccl-tests.
work::NcclTestsConfig NcclTestsConfigOf(const Scenario& scenario);

// The scenario key a generator's field comes from, for messages: "TransformerConfig.
// global_batch" -> "workload.global_batch"; "" when no key sets it.
std::string KeyOfField(std::string_view field);

}  // namespace nbox::scenario
