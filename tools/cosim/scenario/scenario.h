// A scenario: everything one nbox-cosim run needs, typed and validated.
//
// Every key has a default (scenarios/README.md lists them, generated from the same schema
// the parser uses: `nbox-cosim --list-keys`). Unknown sections and keys are errors that name
// the file, the line and the nearest valid name; bad values name the key, the value and what
// was expected.
//
// A key is named like its field without the unit suffix (host_link_bps -> host_link,
// switch_queue_bytes -> switch_queue, gpu_peak_flops -> gpu_peak); the one exception is
// optimizer_s -> optimizer_time. The fields hold SI base units: bits/s, bytes, seconds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/settings.h"
#include "workloads/gpu_preset.h"
#include "workloads/pipeline_schedule.h"
#include "workloads/trace_scaling.h"
#include "workloads/transformer_config.h"

namespace nbox::scenario {

class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which hosts a job's ranks run on (topologies/placement.cc).
enum class Placement { kPacked, kSpread, kRandom, kFile };

struct JobSection {
  int world_size = 8;
  uint64_t seed = 1;
  Placement placement = Placement::kPacked;
  std::string placement_file;  // placement = file; resolved against the scenario's folder
  double start_s = 0;          // when its ranks begin, once every connection is up
};

// Several jobs on one fabric: each job file's [job], [workload] and [collectives] over the
// cluster scenario's own, placed one after another on the hosts the earlier ones left
// (docs/CLUSTERS.md).
struct ClusterSection {
  std::vector<std::string> jobs;  // job files, resolved against the scenario's folder; empty:
                                  // the scenario is one job
  bool alone = false;             // also run each job alone on its hosts, for its slowdown
};

enum class TopologyKind { kStar, kLeafSpine, kFatTree, kFile, kRail };

struct TopologySection {
  TopologyKind kind = TopologyKind::kStar;
  int hosts = 0;  // star: 0 = as many as the ranks need
  int leaves = 4;
  int spines = 2;
  int hosts_per_leaf = 4;
  int k = 4;         // fat-tree arity
  std::string file;  // kind = file; after loading, the path resolved against the
                     // scenario file's folder (as given when absolute)
  double host_link_bps = 100e9;
  double fabric_link_bps = 100e9;
  double oversubscription = 0;  // leaf-spine: > 0 derives fabric_link from it
  double link_latency_s = 1e-6;
};

// The choices a key names, read once from the scenario's spelling (key_schema.cc lists each
// with its spelling; the report prints the spelling from the settings' text).
enum class Transport { kTcp, kRoce };
enum class Switching { kStoreAndForward, kCutThrough };
enum class Routing { kEcmp, kSpray, kFlowlet };
enum class CollectiveOrder { kFifo, kLifo };
enum class Timeline { kNone, kChrome };
// A workload's choices that the workloads library has no type for: how compute is timed, and
// the shape keys whose "preset" keeps the model preset's own value.
enum class ComputeChoice { kUtil, kModel, kProfile };
enum class MlpChoice { kPreset, kGelu, kSwiglu };
enum class PresetOnOff { kPreset, kOn, kOff };
enum class MessageLog { kNone, kCsv };
enum class RealRankClock { kVirtual, kRealtime };
enum class RealRankPeers { kWorkload, kMirror };
enum class RealRankPayload { kZeros, kSelf };

struct NetworkSection {
  std::string model = "packet";  // packet | flow | analytical (docs/DESIGN.md, "Network models")
  Transport transport = Transport::kTcp;
  std::string tcp_cc = "cubic";  // newreno | cubic | dctcp | bbr
  uint32_t mtu = 1500;
  uint64_t switch_queue_bytes = 4000000;  // per egress port
  bool ecn = false;
  uint64_t ecn_threshold_bytes = 100000;      // step marking threshold K
  uint64_t tcp_buffer_bytes = 4000000;        // socket send and receive buffers
  double tcp_min_rto_s = 0.2;                 // Linux TCP_RTO_MIN
  double tcp_delayed_ack_s = 200e-6;          // receiver's delayed-ACK timeout
  uint64_t tcp_limit_output_bytes = 1 << 20;  // TCP Small Queues cap; 0 = off
  uint32_t tcp_reordering = 3;                // duplicate ACKs before a fast retransmit
  bool tcp_rack_tlp = true;                   // RACK-TLP loss detection (Linux's default)
  bool tcp_forward_retransmissions = false;   // RFC 6675 NextSeg rule 3 (Linux: none)
  Switching switching = Switching::kStoreAndForward;
  Routing routing = Routing::kEcmp;
  double flowlet_timeout_s = 500e-6;  // CONGA's flowlet timeout (SIGCOMM 2014)
};

struct CollectivesSection {
  // Each operation's algorithm, of those coll::OperationChoiceTable allows it (hierarchical
  // needs topology.kind = rail); coll::CollectiveSettingsOf gathers them for the job.
  coll::AlgorithmChoice allreduce = coll::CollectiveSettings{}.all_reduce;
  coll::AlgorithmChoice alltoall = coll::CollectiveSettings{}.all_to_all;
  coll::AlgorithmChoice allgather = coll::CollectiveSettings{}.all_gather;
  coll::AlgorithmChoice reducescatter = coll::CollectiveSettings{}.reduce_scatter;
  coll::AlgorithmChoice broadcast = coll::CollectiveSettings{}.broadcast;
  coll::AlgorithmChoice reduce = coll::CollectiveSettings{}.reduce;
  // NCCL's tuner's pick, as a job on NCCL gets it (the library's own default stays kIdeal, the
  // closed forms its tests check against).
  coll::ProtocolChoice protocol = coll::ProtocolChoice::kAuto;
  CollectiveOrder order = CollectiveOrder::kFifo;  // which waiting collective starts next
  int concurrent = 1;              // collectives a rank runs at once per communicator
  int channels = 0;                // auto (coll::GroupChannels)
  uint64_t chunk_bytes = 1 << 20;  // 0 = no chunking
};

struct WorkloadSection {
  std::string kind = "ddp";  // ddp | transformer | moe (tools/cosim/assembly/workload_registry.h)
  std::string model = "resnet152";
  uint64_t parameters = 0;      // 0 = the preset's
  int layers = 0;               // 0 = the preset's
  double flops_per_sample = 0;  // 0 = the preset's
  int batch_per_rank = 32;
  double gpu_peak_flops = 125e12;
  double gpu_util = 0.4;
  double backward_ratio = 2.0;
  uint64_t bucket_bytes = 25ull << 20;
  double optimizer_s = 0;
  int iterations = 3;
  std::string trace;  // model = trace: the collective trace file; after loading, the path
                      // resolved against the scenario file's folder (as given when absolute)
  work::TraceScaling trace_scaling = work::TraceScaling::kNone;  // model = trace
  int trace_replica = 1;     // model = trace: ranks of one model replica
  std::string trace_prefix;  // kind = chakra: "" = the folder's one complete prefix
  std::string trace_dir;     // kind = chakra: the folder of Chakra traces, resolved the same way

  // transformer and moe (workloads/transformer.h): the shape (0 = the preset's) ...
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  // Multi-head latent attention (kv_lora_rank > 0); 0 = the preset's.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_head_dim = 0;
  int qk_rope_dim = 0;
  int v_head_dim = 0;
  int head_dim = 0;                                    // 0 = the preset's (hidden / heads)
  MlpChoice mlp = MlpChoice::kPreset;                  // preset: custom's is swiglu
  PresetOnOff tied_embeddings = PresetOnOff::kPreset;  // preset: custom's is off
  PresetOnOff bias = PresetOnOff::kPreset;             // linear biases; preset: custom's is off
  int ffn = 0;
  int vocab = 0;
  int seq_len = 0;
  int experts = 0;
  int top_k = 0;
  int shared_expert_ffn = 0;   // moe: the shared expert's width; 0 = the preset's (none: custom)
  int moe_layer_freq = 0;      // moe: every k-th layer is an MoE layer; 0 = the preset's (1)
  int first_dense_layers = 0;  // moe: dense layers before the MoE ones; 0 = the preset's
  int dense_ffn = 0;           // moe: the dense layers' MLP width; 0 = the preset's (ffn)
  bool shared_expert_overlap = false;  // moe: the shared expert beside the all-to-alls
  // ... the parallelism (data_parallel 0 = derived: world_size / (tensor x context x pipeline))
  int tensor_parallel = 1;
  int context_parallel = 1;
  int pipeline_parallel = 1;
  int data_parallel = 0;
  int expert_parallel = 1;
  std::string order = "tp-dp-pp";
  // ... and how it trains.
  int micro_batch = 1;
  int global_batch = 0;  // 0 = micro_batch x data_parallel
  work::PipelineSchedule schedule = work::PipelineSchedule::kOneFOneB;
  int virtual_stages = 1;  // model chunks per pipeline rank (interleaved 1F1B when > 1)
  work::DataParallelMode data_parallel_mode = work::DataParallelMode::kDdp;
  bool sequence_parallel = false;
  work::Recompute recompute = work::Recompute::kNone;
  bool flash_attention = true;
  work::AttentionKernel attention_kernel = work::AttentionKernel::kAuto;
  bool overlap_param_gather = false;  // zero1, zero2: gather parameters during the next forward
  // Reduce gradients during the last backward; unset: on for ddp and zero2, off for zero1.
  std::optional<bool> overlap_grad_reduce;
  bool tp_comm_overlap = false;  // Transformer Engine's tensor-parallel communication overlap
  work::CrossEntropyKernels cross_entropy = work::CrossEntropyKernels::kUnfused;
  work::ContextParallelComm context_parallel_comm = work::ContextParallelComm::kP2p;
  int context_a2a = 0;                // a2a+p2p: context ranks per all-to-all block
  uint64_t activation_bytes = 2;      // per activation (and weight) element: bf16
  uint64_t gradient_bytes = 0;        // per gradient element; 0 = the kind's (ddp: the model's)
  double routing_skew = 0;            // moe: 0 = balanced routing
  double expert_capacity_factor = 0;  // moe: 0 = dropless
  bool pad_to_capacity = false;       // moe: every expert receives its capacity
  double gpu_util_attention = 0;      // 0 = gpu_util
  ComputeChoice compute = ComputeChoice::kUtil;  // model: per operation on `gpu`
  std::string compute_profile;                   // compute = profile: a PyTorch profiler trace
  std::string gpu = "none";                      // a GPU preset (workloads/gpu_preset.h), or none
  work::Precision precision = work::Precision::kBf16;  // the GEMMs' inputs
  uint64_t gpu_memory = 0;  // bytes one GPU holds; 0 = the estimate is not checked
  // nccl-tests (workloads/nccl_tests.h): the sweep; `iterations` are its timed runs per size
  coll::CollectiveOp nccl_collective = coll::CollectiveOp::kAllReduce;
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 128ull << 20;
  int step_factor = 2;
  int warmup = 1;
  // dlrm (workloads/dlrm.h): the model (0 / empty = the preset's) and the GPU's memory
  double gpu_memory_bw = 0;  // bytes/s
  int tables = 0;
  int embedding_dim = 0;
  int pooling = 0;
  int dense_features = 0;
  std::vector<int> bottom_mlp;
  std::vector<int> top_mlp;
};

struct OutputSection {
  std::string dir;  // "" = results/<scenario file stem>
  Timeline trace = Timeline::kNone;
  std::string progress = "auto";  // auto | on | off: the loop's ProgressMode, parsed by it
  double link_sample_s = 0;       // links.csv sampling interval; 0 = off
  MessageLog messages = MessageLog::kNone;  // csv: messages.csv, every message of the run
};

// Real ranks in the loop: which ranks run as real processes through the bridge,
// and how nbox-cosim plays the rest. Empty `ranks` (the default) changes nothing.
struct RealRanksSection {
  std::vector<int> ranks;  // ascending, distinct, < job.world_size; empty = none
  RealRankClock clock = RealRankClock::kVirtual;      // docs/DESIGN.md, "Time"
  RealRankPeers peers = RealRankPeers::kWorkload;     // what the emulated ranks run
  RealRankPayload payload = RealRankPayload::kZeros;  // bytes from emulated to real ranks
  std::string launch;                    // command run once per real rank ({rank} substituted);
                                         // "" = the user starts the ranks by hand
  std::string bridge = "unix";           // unix | tcp:HOST:PORT
  double max_lag_s = 100e-6;             // realtime: a larger lag makes the run not valid
  double realtime_heartbeat_s = 200e-6;  // realtime: how often an idle rank promises its clock
  double join_timeout_s = 60;            // every real rank must have joined by then (wall clock)
};

// Settings for debugging nbox itself; none changes a result.
// GPUs that are not all alike: how long each emulated rank's compute takes against the
// workload's figure (tools/cosim/assembly/compute_time_factors.h).
// A change to the cluster at a moment of the run ([events] at): a GPU slowing down (or back to
// its speed), a link's rate changing, links or a switch failing or coming back
// (tools/cosim/assembly/timed_changes.h carries them out).
struct TimedChange {
  enum class Kind { kGpuSlowdown, kLinkRate, kLinksDown, kLinksUp };
  double at_s = 0;  // simulated time from the run's start
  Kind kind = Kind::kGpuSlowdown;
  std::vector<int> ranks;  // kGpuSlowdown: whose GPUs
  double slowdown = 1;     // kGpuSlowdown: their compute takes this many times as long from then
  // The other kinds: the links joining these two nodes of the topology, or with `node_b`
  // empty every link of switch `node_a`.
  std::string node_a;
  std::string node_b;
  double rate_bps = 0;  // kLinkRate: each direction's rate from then on
};

struct EventsSection {
  double gpu_variation = 0;    // standard deviation of each GPU's speed around 1, seeded
  std::vector<int> slow_gpus;  // ranks whose GPU computes `slowdown` times as long
  double slowdown = 1;
  std::vector<TimedChange> changes;  // in the order given; each `at` key adds one
};

struct DebugSection {
  double slowdown_s = 0;  // wall-clock pause per simulated event (real-rank runs only)
};

// Scale-up servers: what topology.kind = rail is built of. Each server has `gpus`
// GPUs (one rank each) on one NVSwitch and one NIC per GPU; ranks fill servers in order. A
// named preset sets gpus, nvlink and nic unless the file or --set gives them; the defaults
// below are the h100 preset's.
struct ServersSection {
  std::string preset = "h100";  // a topologies/servers.h preset name | custom
  int count = 2;
  int gpus = 8;
  double nvlink_bps = 3.6e12;  // GPU <-> NVSwitch, each direction
  double nvlink_latency_s = 1e-6;
  double nic_bps = 400e9;  // GPU's NIC <-> its rail switch, each direction
};

// The RoCEv2 fabric, used when network.transport = roce: switch buffer, PFC and ECN
// (NboxSwitchMmu), the NIC's DCQCN, ACKs and priorities (NboxRoceNic). Defaults are those of
// the ns-3 attributes; tools/cosim/scenario/roce_keys.cc names their sources.
struct RoceSection {
  std::string cc = "dcqcn";  // dcqcn | hpcc | timely | none
  bool pfc = true;
  uint64_t buffer_bytes = 12ull << 20;  // shared buffer per switch
  double alpha = 0.125;                 // PFC dynamic threshold
  uint64_t headroom_bytes = 0;          // per port and lossless priority; 0 = computed
  uint64_t xon_offset_bytes = 3 << 10;
  uint64_t ecn_kmin_bytes = 400000;  // at 100 Gb/s; scaled with port rate
  uint64_t ecn_kmax_bytes = 1600000;
  double ecn_pmax = 0.2;
  double dcqcn_g = 1.0 / 16;
  double alpha_update_s = 55e-6;
  double rate_increase_s = 300e-6;
  uint64_t byte_counter_bytes = 150000;
  int fast_recovery = 5;
  double rai_bps = 50e6;
  double rhai_bps = 100e6;
  double min_rate_bps = 100e6;
  bool clamp_target_rate = false;
  double cnp_interval_s = 50e-6;
  double hpcc_eta = 0.95;
  int hpcc_max_stage = 5;
  double hpcc_rate_ai_bps = 50e6;
  double timely_alpha = 0.875;
  double timely_beta = 0.8;
  double timely_t_low_s = 50e-6;
  double timely_t_high_s = 500e-6;
  double timely_min_rtt_s = 20e-6;
  double timely_delta_bps = 10e6;
  int ack_interval = 16;
  double rto_s = 4.096e-6 * (1 << 18);  // NCCL_IB_TIMEOUT 18: 1.074 s
  int data_priority = 3;
  int control_priority = 6;
};

// The analytical model's effective-bandwidth factors C (network.model = analytical;
// ns3::NboxAnalyticalTransport): the bandwidth term of each operation's alpha-beta time is
// divided by its factor. 1 = the ideal bottleneck rate; nbox-fit-analytical fits them.
struct AnalyticalSection {
  double allreduce_factor = 1;
  double allgather_factor = 1;
  double reducescatter_factor = 1;
  double broadcast_factor = 1;
  double reduce_factor = 1;
  double alltoall_factor = 1;
  double p2p_factor = 1;
};

struct Scenario {
  std::string path;  // the file it was read from
  JobSection job;
  TopologySection topology;
  NetworkSection network;
  RoceSection roce;
  AnalyticalSection analytical;
  CollectivesSection collectives;
  WorkloadSection workload;
  OutputSection output;
  RealRanksSection realranks;
  EventsSection events;
  DebugSection debug;
  ServersSection servers;
  ClusterSection cluster;
  // Every key as "section.key" -> the effective value text (defaults included), for reports.
  // Values derived by a rule (fabric_link from oversubscription, the resolved topology.file)
  // appear as derived. Each text reads back to the same value ("--set" accepts it).
  std::map<std::string, std::string> settings;
  // How many keys the file itself set: 0 for an empty file (or one of comments only), which
  // runs every default; nbox-cosim says so rather than run it silently.
  int keys_in_file = 0;
};

// Reads `path`, then applies `overrides` ("section.key=value", as from --set), then checks
// the cross-key rules. Throws ScenarioError with a message ready for the terminal: one line
// per problem ("path:line: ...", "--set network.mtu=abc: ...", "path: <rule>"), file
// problems by line, then overrides, then cross-key rules (checked only when every value read).
// A key may appear once in the file and once among the overrides (the override wins).
class RuleContext;  // rule_context.h

// A rule between keys that a layer above adds to the scenario's own (a network model's: what
// its model cannot run); it reports through context.Fail like the scenario's rules.
using ScenarioRule = std::function<void(RuleContext& context)>;

Scenario LoadScenario(const std::string& path, const std::vector<std::string>& overrides = {},
                      const std::vector<ScenarioRule>& more_rules = {});

// The jobs of a cluster scenario (cluster.job), each as one scenario: `cluster`'s file with the
// job file's [job], [workload] and [collectives] read over it, then `overrides`, then the rules, as
// LoadScenario does; a job file's keys are named by its own path and line, and its relative
// paths start at its own folder. Throws ScenarioError as LoadScenario does, and for a job file
// that sets a key of another section (the cluster's fabric, network and collectives are shared).
std::vector<Scenario> LoadClusterJobs(const Scenario& cluster,
                                      const std::vector<std::string>& overrides = {},
                                      const std::vector<ScenarioRule>& more_rules = {});

// A cluster job's name: its file's name without the folder and extension ("llm-a").
std::string ClusterJobName(const std::string& job_file);

// Markdown tables of every section and key: name, default, expected values, meaning. This is
// the block between <!-- keys:begin --> and <!-- keys:end --> in scenarios/README.md.
std::string ScenarioKeysMarkdown();

}  // namespace nbox::scenario
