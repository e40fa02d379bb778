#include "bridge/profiler/collective_record.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace nbox::bridge::profiler {

std::string TraceLine(const CollectiveRecord& r) {
  char comm[24];
  std::snprintf(comm, sizeof(comm), "0x%016llx", static_cast<unsigned long long>(r.comm_id));
  // A 64-bit hash does not survive JSON readers that hold numbers as doubles: it is text.
  nlohmann::ordered_json line = {
      {"v", kTraceFormatVersion},
      {"kind", "coll"},
      {"comm", comm},
      {"comm_name", r.comm_name},
      {"nranks", r.nranks},
      {"rank", r.rank},
      {"pid", r.pid},
      {"seq", r.seq},
      {"func", r.func},
      {"count", r.count},
      {"datatype", r.datatype},
      {"root", r.root},
      {"algo", r.algo},
      {"proto", r.proto},
      {"nchannels", r.nchannels},
      {"nwarps", r.nwarps},
      {"start_ns", r.start_ns},
      {"end_ns", r.end_ns},
  };
  if (r.gpu_start_ns.has_value()) line["gpu_start_ns"] = *r.gpu_start_ns;
  if (r.gpu_end_ns.has_value()) line["gpu_end_ns"] = *r.gpu_end_ns;
  line["complete"] = r.complete;
  // Replace bad UTF-8 from NCCL's strings rather than throw inside NCCL's thread.
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace nbox::bridge::profiler
