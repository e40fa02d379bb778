// The cross-key rules of [workload]: the model fits the kind, keys of another kind are not
// given, the parallelism fits the world and the model (checked by building the generator's
// configuration and validating it, so the rule and the generator cannot disagree).
#pragma once

#include "tools/cosim/scenario/rule_context.h"

namespace nbox::scenario {

void CheckWorkloadKind(RuleContext& context);

}  // namespace nbox::scenario
