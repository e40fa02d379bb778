#include "workloads/kernel_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "common/json_error.h"

namespace nbox::work {
namespace {

using nlohmann::json;

// One operator of the trace whose shape nbox keeps.
struct OperatorCall {
  enum class Kind { kGemm, kAttentionForward, kAttentionBackward } kind;
  std::vector<uint64_t> key;
  double cpu_s = 0;
  int64_t external_id = -1;
};

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

[[noreturn]] void Fail(const std::string& path, size_t event, const std::string& what) {
  throw std::invalid_argument(fmt::format("{}: traceEvents[{}]: {}", path, event, what));
}

// "Input Dims" as whole numbers, one list per input ([] for a scalar or None).
std::vector<std::vector<uint64_t>> InputDims(const json& args, const std::string& path,
                                             size_t event, const std::string& name) {
  const auto dims = args.find("Input Dims");
  if (dims == args.end() || !dims->is_array()) {
    Fail(path, event, name + " has no \"Input Dims\" (record the trace with record_shapes=True)");
  }
  std::vector<std::vector<uint64_t>> inputs;
  for (const json& input : *dims) {
    std::vector<uint64_t> sizes;
    if (input.is_array()) {
      for (const json& size : input) {
        if (!size.is_number_unsigned() && !(size.is_number_integer() && size.get<int64_t>() >= 0)) {
          Fail(path, event, name + "'s \"Input Dims\" holds " + size.dump() + ", not a size");
        }
        sizes.push_back(size.get<uint64_t>());
      }
    }
    inputs.push_back(std::move(sizes));
  }
  return inputs;
}

// The shape nbox keys the operator by, or nullopt for an operator it does not keep. GEMMs: an
// m x k input times a k x n one (addmm and baddbmm take the bias first), bmm's batch first.
std::optional<OperatorCall> ShapeOf(const std::string& name, const json& args,
                                    const std::string& path, size_t event) {
  const bool bias_first = name == "aten::addmm" || name == "aten::baddbmm";
  const bool batched = name == "aten::bmm" || name == "aten::baddbmm";
  if (name == "aten::mm" || name == "aten::addmm" || batched) {
    const auto inputs = InputDims(args, path, event, name);
    const size_t a = bias_first ? 1 : 0;
    const size_t rank = batched ? 3 : 2;
    if (inputs.size() < a + 2 || inputs[a].size() != rank || inputs[a + 1].size() != rank) {
      Fail(path, event,
           fmt::format("{} takes two {}-dimensional matrices{}", name, rank,
                       bias_first ? " after its bias" : ""));
    }
    const auto& x = inputs[a];
    const auto& w = inputs[a + 1];
    const size_t d = batched ? 1 : 0;
    OperatorCall call{OperatorCall::Kind::kGemm, {x[d], w[d + 1], x[d + 1], batched ? x[0] : 1}};
    return call;
  }
  const bool forward = name == "aten::_scaled_dot_product_flash_attention";
  const bool backward = name == "aten::_scaled_dot_product_flash_attention_backward";
  if (forward || backward) {
    // Forward: (query, key, value, ...); backward: (grad_out, query, key, value, ...), each
    // batch x heads x tokens x head dimension.
    const auto inputs = InputDims(args, path, event, name);
    const size_t q = backward ? 1 : 0;
    if (inputs.size() < q + 2 || inputs[q].size() != 4 || inputs[q + 1].size() != 4) {
      Fail(path, event, name + " takes 4-dimensional queries and keys");
    }
    const auto& query = inputs[q];
    OperatorCall call{
        forward ? OperatorCall::Kind::kAttentionForward : OperatorCall::Kind::kAttentionBackward,
        {query[0], query[1], query[2], inputs[q + 1][2], query[3]}};
    return call;
  }
  return std::nullopt;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

std::optional<double> KernelProfile::Gemm(uint64_t m, uint64_t n, uint64_t k,
                                          uint64_t batch) const {
  // C = A B and its transpose C^T = B^T A^T are one kernel shape to cuBLAS (it swaps the
  // operands): autograd computes a weight gradient as dY^T X where nbox counts X^T dY.
  for (const GemmShape& shape : {GemmShape{m, n, k, batch}, GemmShape{n, m, k, batch}}) {
    if (const auto it = gemm_s.find(shape); it != gemm_s.end()) return it->second;
  }
  for (const GemmShape& shape : {GemmShape{m, n, k, 1}, GemmShape{n, m, k, 1}}) {
    if (const auto it = gemm_s.find(shape); it != gemm_s.end()) {
      return it->second * static_cast<double>(batch);
    }
  }
  return std::nullopt;
}

std::optional<double> KernelProfile::Attention(const AttentionShape& shape, bool backward) const {
  const auto& table = backward ? attention_backward_s : attention_forward_s;
  if (const auto it = table.find(shape); it != table.end()) return it->second;
  return std::nullopt;
}

KernelProfile ReadKernelProfile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot open the profile");
  json trace;
  try {
    trace = json::parse(in);
  } catch (const json::exception& e) {
    throw std::invalid_argument(path +
                                ": not a PyTorch profiler trace: " + JsonErrorText(e.what()));
  }
  const json* events = nullptr;
  if (trace.is_object() && trace.contains("traceEvents") && trace["traceEvents"].is_array()) {
    events = &trace["traceEvents"];
  }
  if (events == nullptr) {
    throw std::invalid_argument(
        path +
        ": not a PyTorch profiler trace: expected an object with a \"traceEvents\" list "
        "(torch.profiler's export_chrome_trace, with Kineto)");
  }

  std::vector<OperatorCall> calls;
  std::map<int64_t, double> kernel_s;  // by the launching operator's External id
  for (size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    const std::string category = Lower(e.value("cat", ""));
    static const json kNoArgs = json::object();
    const auto found = e.find("args");
    const json& args = found != e.end() && found->is_object() ? *found : kNoArgs;
    const auto duration = e.find("dur");
    if (duration == e.end() || !duration->is_number() || duration->get<double>() < 0) {
      if (category == "cpu_op" || category == "kernel") Fail(path, i, "no duration (\"dur\")");
      continue;
    }
    const double seconds = duration->get<double>() * 1e-6;  // the trace's microseconds
    const auto external = args.find("External id");
    const int64_t id =
        external != args.end() && external->is_number_integer() ? external->get<int64_t>() : -1;
    if (category == "kernel") {
      if (id >= 0) kernel_s[id] += seconds;
      continue;
    }
    if (category != "cpu_op") continue;
    auto call = ShapeOf(e.value("name", ""), args, path, i);
    if (!call) continue;
    call->cpu_s = seconds;
    call->external_id = id;
    calls.push_back(std::move(*call));
  }

  KernelProfile profile;
  profile.path = path;
  profile.gpu_times = !kernel_s.empty();
  std::map<std::pair<OperatorCall::Kind, std::vector<uint64_t>>, std::vector<double>> times;
  for (const OperatorCall& call : calls) {
    double seconds = call.cpu_s;
    if (profile.gpu_times) {
      const auto it = kernel_s.find(call.external_id);
      if (it == kernel_s.end()) continue;  // it launched nothing on the GPU
      seconds = it->second;
    }
    times[{call.kind, call.key}].push_back(seconds);
  }
  for (const auto& [what, seconds] : times) {
    const auto& [kind, k] = what;
    const double median = Median(seconds);
    if (kind == OperatorCall::Kind::kGemm) {
      profile.gemm_s[{k[0], k[1], k[2], k[3]}] = median;
    } else {
      auto& table = kind == OperatorCall::Kind::kAttentionForward ? profile.attention_forward_s
                                                                  : profile.attention_backward_s;
      table[{k[0], k[1], k[2], k[3], k[4]}] = median;
    }
  }
  if (profile.gemm_s.empty() && profile.attention_forward_s.empty() &&
      profile.attention_backward_s.empty()) {
    throw std::invalid_argument(
        path +
        ": the trace has no GEMM (aten::mm, addmm, bmm, baddbmm) or flash attention "
        "operator" +
        (profile.gpu_times ? " that launched a GPU kernel" : "") + " with its shapes");
  }
  return profile;
}

}  // namespace nbox::work
