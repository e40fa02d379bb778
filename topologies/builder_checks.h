// (internal) Argument checks and names shared by the topology builders.
#pragma once

#include <cstdint>
#include <string>

namespace nbox::topo::internal {

// Each throws std::invalid_argument "<function>: <argument> must be ..., got <value>".
void CheckAtLeast(const char* function, const char* argument, int value, int minimum);
void CheckRate(const char* function, const char* argument, double rate_bps);
void CheckLatency(const char* function, const char* argument, double latency_s);
// Host indices are ints and link ids uint32: refuses sizes that would overflow them.
void CheckSize(const char* function, int64_t hosts, int64_t links);

// "<prefix><i>", e.g. "leaf3".
std::string Indexed(const char* prefix, int64_t i);

}  // namespace nbox::topo::internal
