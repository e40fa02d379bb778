#include "collectives/settings.h"

#include <array>
#include <charconv>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "collectives/nccl_tuning.h"

namespace nbox::coll {
namespace {

constexpr std::array<std::pair<AlgorithmChoice, std::string_view>, 6> kChoiceNames = {{
    {AlgorithmChoice::kRing, "ring"},
    {AlgorithmChoice::kHierarchical, "hierarchical"},
    {AlgorithmChoice::kDirect, "direct"},
    {AlgorithmChoice::kHalvingDoubling, "halving-doubling"},
    {AlgorithmChoice::kTree, "tree"},
    {AlgorithmChoice::kAuto, "auto"},
}};

constexpr std::array<std::pair<ProtocolChoice, std::string_view>, 5> kProtocolNames = {{
    {ProtocolChoice::kIdeal, "ideal"},
    {ProtocolChoice::kAuto, "auto"},
    {ProtocolChoice::kLl, "ll"},
    {ProtocolChoice::kLl128, "ll128"},
    {ProtocolChoice::kSimple, "simple"},
}};

[[noreturn]] void Invalid(const std::string& field, const std::string& problem) {
  throw std::invalid_argument("collective settings: " + field + ": " + problem);
}

// One field of the encoded form: its name, how to print it, how to read it.
struct Field {
  std::string_view name;
  std::function<std::string(const CollectiveSettings&)> format;
  std::function<void(CollectiveSettings&, std::string_view)> parse;
};

uint64_t ParseWhole(std::string_view name, std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    Invalid(std::string(name), "expected a whole number, got '" + std::string(text) + "'");
  }
  return value;
}

AlgorithmChoice ParseChoice(std::string_view name, std::string_view text) {
  if (const auto choice = ParseAlgorithmChoice(text)) return *choice;
  Invalid(std::string(name), "unknown algorithm '" + std::string(text) + "'");
}

Field WholeField(std::string_view name, uint64_t CollectiveSettings::*member) {
  return {name, [member](const CollectiveSettings& s) { return std::to_string(s.*member); },
          [name, member](CollectiveSettings& s, std::string_view v) {
            s.*member = ParseWhole(name, v);
          }};
}
Field IntField(std::string_view name, int CollectiveSettings::*member) {
  return {name, [member](const CollectiveSettings& s) { return std::to_string(s.*member); },
          [name, member](CollectiveSettings& s, std::string_view v) {
            const uint64_t value = ParseWhole(name, v);
            if (value > (1u << 30)) Invalid(std::string(name), "too large: " + std::string(v));
            s.*member = static_cast<int>(value);
          }};
}
Field ChoiceField(std::string_view name, AlgorithmChoice CollectiveSettings::*member) {
  return {name, [member](const CollectiveSettings& s) { return std::string(ToString(s.*member)); },
          [name, member](CollectiveSettings& s, std::string_view v) {
            s.*member = ParseChoice(name, v);
          }};
}

// The fields in their encoded order; the names are the scenario keys' (collectives.*).
const std::vector<Field>& Fields() {
  static const std::vector<Field> fields = [] {
    std::vector<Field> all = {
        IntField("channels", &CollectiveSettings::channels),
        WholeField("chunk", &CollectiveSettings::chunk_bytes),
        IntField("ranks_per_server", &CollectiveSettings::ranks_per_server),
    };
    for (const OperationChoices& row : OperationChoiceTable()) {
      all.push_back(ChoiceField(row.key, row.member));
    }
    all.push_back({"protocol",
                   [](const CollectiveSettings& s) { return std::string(ToString(s.protocol)); },
                   [](CollectiveSettings& s, std::string_view v) {
                     const auto choice = ParseProtocolChoice(v);
                     if (!choice) Invalid("protocol", "unknown protocol '" + std::string(v) + "'");
                     s.protocol = *choice;
                   }});
    all.push_back(WholeField("nic_bps", &CollectiveSettings::nic_bps));
    all.push_back(WholeField("scaleup_bps", &CollectiveSettings::scale_up_bps));
    return all;
  }();
  return fields;
}

void CheckChoice(const OperationChoices& row, AlgorithmChoice choice) {
  for (AlgorithmChoice ok : row.allowed) {
    if (choice == ok) return;
  }
  std::string names;
  for (AlgorithmChoice ok : row.allowed)
    names += (names.empty() ? "" : ", ") + std::string(ToString(ok));
  Invalid(std::string(row.key),
          "'" + std::string(ToString(choice)) + "' does not run it; expected one of " + names);
}

// The group as NCCL's tuner sees it: its nodes are the servers it touches, and its intra-node
// bandwidth is NVLink's only where a node holds more than one member.
NcclTuningInputs TuningInputs(const CollectiveSettings& settings, int group_size, int per_server) {
  NcclTuningInputs inputs;
  inputs.ranks = group_size;
  inputs.nodes = per_server > 0 ? group_size / per_server : group_size;
  inputs.channels = GroupChannels(settings, group_size, per_server);
  inputs.inter_bytes_per_s = static_cast<double>(settings.nic_bps) / 8;
  inputs.intra_bytes_per_s =
      per_server > 1 ? static_cast<double>(settings.scale_up_bps) / 8 : inputs.inter_bytes_per_s;
  return inputs;
}

Protocol Resolved(ProtocolChoice choice) {
  switch (choice) {
    case ProtocolChoice::kLl:
      return Protocol::kLl;
    case ProtocolChoice::kLl128:
      return Protocol::kLl128;
    case ProtocolChoice::kSimple:
      return Protocol::kSimple;
    case ProtocolChoice::kIdeal:
    case ProtocolChoice::kAuto:
      return Protocol::kIdeal;
  }
  return Protocol::kIdeal;
}

// The protocols NCCL's tuner chooses among for `choice`: all three for auto, the chosen one
// otherwise; Simple's figures for the ideal protocol, as the tuner had before protocols.
std::vector<Protocol> TunedProtocols(ProtocolChoice choice) {
  if (choice == ProtocolChoice::kAuto) return {Protocol::kLl, Protocol::kLl128, Protocol::kSimple};
  if (choice == ProtocolChoice::kIdeal) return {Protocol::kSimple};
  return {Resolved(choice)};
}

Algorithm Resolved(AlgorithmChoice choice) {
  switch (choice) {
    case AlgorithmChoice::kHierarchical:
      return Algorithm::kHierarchical;
    case AlgorithmChoice::kDirect:
      return Algorithm::kDirect;
    case AlgorithmChoice::kHalvingDoubling:
      return Algorithm::kHalvingDoubling;
    case AlgorithmChoice::kTree:
      return Algorithm::kTree;
    case AlgorithmChoice::kRing:
    case AlgorithmChoice::kAuto:
      return Algorithm::kRing;
  }
  return Algorithm::kRing;
}

}  // namespace

const std::vector<OperationChoices>& OperationChoiceTable() {
  using C = AlgorithmChoice;
  static const std::vector<OperationChoices> table = {
      {"allreduce",
       &CollectiveSettings::all_reduce,
       {C::kRing, C::kHierarchical, C::kDirect, C::kHalvingDoubling, C::kTree, C::kAuto}},
      {"allgather",
       &CollectiveSettings::all_gather,
       {C::kRing, C::kDirect, C::kHalvingDoubling, C::kAuto}},
      {"reducescatter",
       &CollectiveSettings::reduce_scatter,
       {C::kRing, C::kDirect, C::kHalvingDoubling, C::kAuto}},
      {"broadcast", &CollectiveSettings::broadcast, {C::kRing, C::kTree, C::kAuto}},
      {"reduce", &CollectiveSettings::reduce, {C::kRing, C::kTree, C::kAuto}},
      {"alltoall", &CollectiveSettings::all_to_all, {C::kDirect, C::kHierarchical}},
  };
  return table;
}

const OperationChoices& OperationChoicesOf(std::string_view key) {
  for (const OperationChoices& row : OperationChoiceTable()) {
    if (row.key == key) return row;
  }
  throw std::invalid_argument("collective settings: no operation '" + std::string(key) + "'");
}

std::optional<AlgorithmChoice> ParseAlgorithmChoice(std::string_view spelling) {
  for (const auto& [choice, known] : kChoiceNames) {
    if (known == spelling) return choice;
  }
  return std::nullopt;
}

std::string_view ToString(ProtocolChoice choice) {
  for (const auto& [known, spelling] : kProtocolNames) {
    if (known == choice) return spelling;
  }
  return "unknown";
}

std::optional<ProtocolChoice> ParseProtocolChoice(std::string_view spelling) {
  for (const auto& [choice, known] : kProtocolNames) {
    if (known == spelling) return choice;
  }
  return std::nullopt;
}

const std::vector<ProtocolChoice>& ProtocolChoices() {
  static const std::vector<ProtocolChoice> choices = [] {
    std::vector<ProtocolChoice> all;
    for (const auto& [choice, spelling] : kProtocolNames) all.push_back(choice);
    return all;
  }();
  return choices;
}

std::string_view ToString(AlgorithmChoice choice) {
  for (const auto& [known, spelling] : kChoiceNames) {
    if (known == choice) return spelling;
  }
  return "unknown";
}

bool CollectiveSettings::operator==(const CollectiveSettings& other) const {
  return EncodeSettings(*this) == EncodeSettings(other);
}

void ValidateSettings(const CollectiveSettings& s) {
  if (s.channels < 0 || s.channels > kMaxChannels) {
    Invalid("channels", "expected 0 (auto) or 1.." + std::to_string(kMaxChannels) + ", got " +
                            std::to_string(s.channels));
  }
  if (s.chunk_bytes != 0 && (s.chunk_bytes < 8 || s.chunk_bytes > (uint64_t{1} << 30))) {
    Invalid("chunk", "expected 0 or 8 bytes..1 GiB, got " + std::to_string(s.chunk_bytes));
  }
  if (s.ranks_per_server < 0) {
    Invalid("ranks_per_server", "expected 0 or more, got " + std::to_string(s.ranks_per_server));
  }
  for (const OperationChoices& row : OperationChoiceTable()) CheckChoice(row, s.*row.member);
  if (ToString(s.protocol) == "unknown") {
    Invalid("protocol", "expected ideal, auto, ll, ll128 or simple");
  }
  if (s.nic_bps == 0) Invalid("nic_bps", "must be more than 0");
  if (s.scale_up_bps == 0) Invalid("scaleup_bps", "must be more than 0");
}

int GroupChannels(const CollectiveSettings& settings, int group_size, int group_ranks_per_server) {
  if (settings.channels > 0) return settings.channels;
  const int per_server = group_ranks_per_server;
  const bool several_servers = per_server >= 2 && group_size / per_server >= 2;
  return several_servers ? std::min(per_server, kMaxChannels) : 2;
}

Algorithm ChooseAlgorithm(const CollectiveSettings& settings, CollectiveOp op, uint64_t bytes,
                          int group_size, int group_ranks_per_server) {
  const int per_server = group_ranks_per_server;
  switch (op) {
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
      return settings.all_to_all == AlgorithmChoice::kHierarchical && per_server > 0
                 ? Algorithm::kHierarchical
                 : Algorithm::kDirect;
    case CollectiveOp::kAllReduce:
      if (settings.all_reduce == AlgorithmChoice::kAuto) {
        if (group_size < 2) return Algorithm::kRing;
        return NcclFastest(op, bytes, TuningInputs(settings, group_size, per_server),
                           {Algorithm::kRing, Algorithm::kTree}, TunedProtocols(settings.protocol))
            .algorithm;
      }
      if (settings.all_reduce == AlgorithmChoice::kHierarchical && per_server == 0) {
        return Algorithm::kRing;
      }
      return Resolved(settings.all_reduce);
    case CollectiveOp::kAllGather:
      return Resolved(settings.all_gather);
    case CollectiveOp::kReduceScatter:
      return Resolved(settings.reduce_scatter);
    case CollectiveOp::kBroadcast:
      return Resolved(settings.broadcast);
    case CollectiveOp::kReduce:
      return Resolved(settings.reduce);
  }
  throw std::invalid_argument("ChooseAlgorithm: unknown op");
}

Protocol ChooseProtocol(const CollectiveSettings& settings, CollectiveOp op, Algorithm algorithm,
                        uint64_t bytes, int group_size, int group_ranks_per_server) {
  if (settings.protocol != ProtocolChoice::kAuto) return Resolved(settings.protocol);
  if (group_size < 2) return Protocol::kSimple;
  if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV) {
    constexpr uint64_t kP2pLlThreshold = 16384;  // NCCL_P2P_LL_THRESHOLD's default
    return bytes / static_cast<uint64_t>(group_size) <= kP2pLlThreshold ? Protocol::kLl
                                                                        : Protocol::kSimple;
  }
  const bool tree = algorithm == Algorithm::kTree && op == CollectiveOp::kAllReduce;
  return NcclFastest(op, bytes, TuningInputs(settings, group_size, group_ranks_per_server),
                     {tree ? Algorithm::kTree : Algorithm::kRing},
                     TunedProtocols(settings.protocol))
      .protocol;
}

CollectiveSpec SpecFromSettings(const CollectiveSettings& settings, CollectiveOp op, uint64_t bytes,
                                uint32_t element_bytes, int group_size, int group_ranks_per_server,
                                int root) {
  CollectiveSpec spec;
  spec.op = op;
  spec.root = root;
  spec.algorithm = ChooseAlgorithm(settings, op, bytes, group_size, group_ranks_per_server);
  spec.protocol =
      ChooseProtocol(settings, op, spec.algorithm, bytes, group_size, group_ranks_per_server);
  spec.world_size = group_size;
  spec.bytes = bytes;
  spec.element_bytes = element_bytes;
  spec.channels = GroupChannels(settings, group_size, group_ranks_per_server);
  spec.chunk_bytes = settings.chunk_bytes;
  spec.ranks_per_server = group_ranks_per_server;
  return spec;
}

std::string EncodeSettings(const CollectiveSettings& settings) {
  std::string text;
  for (const Field& field : Fields()) {
    if (!text.empty()) text += ' ';
    text += std::string(field.name) + "=" + field.format(settings);
  }
  return text;
}

CollectiveSettings DecodeSettings(std::string_view text) {
  CollectiveSettings settings;
  std::vector<bool> seen(Fields().size());
  while (!text.empty()) {
    const size_t end = std::min(text.find(' '), text.size());
    const std::string_view item = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (item.empty()) continue;
    const size_t equals = item.find('=');
    if (equals == std::string_view::npos) Invalid(std::string(item), "expected name=value");
    const std::string_view name = item.substr(0, equals);
    size_t index = 0;
    while (index < Fields().size() && Fields()[index].name != name) ++index;
    if (index == Fields().size()) Invalid(std::string(name), "unknown field");
    if (seen[index]) Invalid(std::string(name), "given twice");
    seen[index] = true;
    Fields()[index].parse(settings, item.substr(equals + 1));
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) Invalid(std::string(Fields()[i].name), "missing");
  }
  ValidateSettings(settings);
  return settings;
}

std::string DescribeDifference(const CollectiveSettings& here, const CollectiveSettings& there) {
  std::string difference;
  for (const Field& field : Fields()) {
    const std::string a = field.format(here);
    const std::string b = field.format(there);
    if (a == b) continue;
    if (!difference.empty()) difference += "; ";
    difference += std::string(field.name) + ": " + a + " here, " + b + " there";
  }
  return difference;
}

}  // namespace nbox::coll
