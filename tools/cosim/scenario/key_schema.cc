#include "tools/cosim/scenario/key_schema.h"

#include <limits>
#include <stdexcept>

#include "tools/cosim/scenario/analytical_keys.h"
#include "tools/cosim/scenario/dlrm_keys.h"
#include "tools/cosim/scenario/nccl_tests_keys.h"
#include "tools/cosim/scenario/realranks_values.h"
#include "tools/cosim/scenario/roce_keys.h"
#include "tools/cosim/scenario/timed_change_values.h"
#include "tools/cosim/scenario/transformer_keys.h"
#include "topologies/servers.h"
#include "workloads/ddp.h"
#include "workloads/dlrm.h"
#include "workloads/nccl_tests.h"
#include "workloads/transformer_shape.h"

namespace nbox::scenario {
namespace {

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kGiB = uint64_t{1} << 30;

std::vector<std::string> ModelChoices() {
  std::vector<std::string> choices = work::ModelPresetNames();
  for (const std::string& name : work::TransformerPresetNames()) choices.push_back(name);
  for (const std::string& name : work::DlrmPresetNames()) choices.push_back(name);
  choices.push_back("custom");
  choices.push_back("trace");
  return choices;
}

std::vector<KeySpec> JobKeys() {
  auto job = [](auto member) { return FieldOf(&Scenario::job, member); };
  return {
      {"job", "world_size", "number of ranks; each rank runs on a host of its own",
       WholeNumber(job(&JobSection::world_size), 1, 65536)},
      {"job", "seed", "seed of every random choice; the same seed gives the same result",
       WholeNumber(job(&JobSection::seed), 0, std::numeric_limits<uint64_t>::max())},
      {"job", "placement",
       "which hosts the ranks run on: packed (rank r on the topology's host r), spread (ranks "
       "dealt round-robin over the hosts' switches, so consecutive ranks sit under different "
       "leaves), random (a permutation of the hosts drawn from job.seed) or file (the hosts of "
       "job.placement_file); a rail fabric's GPUs fill its servers in order (packed only)",
       EnumChoice(job(&JobSection::placement), {{Placement::kPacked, "packed"},
                                                {Placement::kSpread, "spread"},
                                                {Placement::kRandom, "random"},
                                                {Placement::kFile, "file"}})},
      {"job", "placement_file",
       "placement = file: host names or ranges (h0..h7), rank r on the r-th named, '#' a "
       "comment; a relative path starts at the scenario file's folder",
       Text(job(&JobSection::placement_file), "a file path")},
      {"job", "start",
       "when the job's ranks begin, once every connection is up (connections are made at 0s); "
       "a cluster's jobs begin each at its own",
       Duration(job(&JobSection::start_s), 0, 86400)},
  };
}

std::vector<KeySpec> ClusterKeys() {
  auto cluster = [](auto member) { return FieldOf(&Scenario::cluster, member); };
  return {
      {"cluster", "job",
       "a job of the cluster: a scenario file whose [job], [workload] and [collectives] are "
       "read over this file's (it sets nothing else: the fabric, network, events and output "
       "are the cluster's); jobs are placed in the order given, each by its job.placement on the "
       "hosts the earlier ones left; a relative path starts at this file's folder; give the "
       "key once per job; none = this scenario is one job",
       FileList(cluster(&ClusterSection::jobs), "a scenario file path")},
      {"cluster", "alone",
       "also run each job alone, on the same fabric and the hosts it has in the cluster, "
       "before the cluster itself: the report gives each job's steady iteration alone and its "
       "slowdown (together over alone), what the jobs cost each other; the run takes as long "
       "again",
       Switch(cluster(&ClusterSection::alone))},
  };
}

std::vector<KeySpec> TopologyKeys() {
  auto topo = [](auto member) { return FieldOf(&Scenario::topology, member); };
  return {
      {"topology", "kind",
       "shape of the network: one switch, two-tier leaf-spine, k-ary fat-tree, a file, or "
       "rail-optimised [servers] (rail k joins GPU k of every server; spines join the rails)",
       EnumChoice(topo(&TopologySection::kind), {{TopologyKind::kStar, "star"},
                                                 {TopologyKind::kLeafSpine, "leaf-spine"},
                                                 {TopologyKind::kFatTree, "fat-tree"},
                                                 {TopologyKind::kFile, "file"},
                                                 {TopologyKind::kRail, "rail"}})},
      {"topology", "hosts", "star: hosts on the switch; 0 = job.world_size",
       WholeNumber(topo(&TopologySection::hosts), 0, 65536)},
      {"topology", "leaves", "leaf-spine: number of leaf switches",
       WholeNumber(topo(&TopologySection::leaves), 1, 1024)},
      {"topology", "spines",
       "leaf-spine and rail: number of spine switches, each linked to every leaf (rail switch)",
       WholeNumber(topo(&TopologySection::spines), 1, 1024)},
      {"topology", "hosts_per_leaf", "leaf-spine: hosts under each leaf",
       WholeNumber(topo(&TopologySection::hosts_per_leaf), 1, 1024)},
      {"topology", "k", "fat-tree: switch arity, even; the tree has k^3/4 hosts",
       WholeNumber(topo(&TopologySection::k), 2, 64)},
      {"topology", "file",
       "kind = file: the topology file; a relative path starts at the scenario file's folder",
       Text(topo(&TopologySection::file), "a file path")},
      {"topology", "host_link", "rate of every host-to-switch link",
       Rate(topo(&TopologySection::host_link_bps), topo::kMinLinkRateBps, topo::kMaxLinkRateBps)},
      {"topology", "fabric_link",
       "rate of every switch-to-switch link (derived when oversubscription > 0)",
       Rate(topo(&TopologySection::fabric_link_bps), topo::kMinLinkRateBps, topo::kMaxLinkRateBps)},
      {"topology", "oversubscription",
       "leaf-spine: host to uplink capacity of a leaf; > 0 sets fabric_link = "
       "hosts_per_leaf x host_link / (spines x oversubscription); 0 = off",
       Real(topo(&TopologySection::oversubscription), 0, 1000)},
      {"topology", "link_latency",
       "propagation delay of every link (rail: but NVLink links, see servers.nvlink_latency)",
       Duration(topo(&TopologySection::link_latency_s), 1e-9, topo::kMaxLinkLatencyS)},
  };
}

std::vector<KeySpec> NetworkKeys() {
  auto net = [](auto member) { return FieldOf(&Scenario::network, member); };
  return {
      {"network", "model",
       "how the network is simulated: packet (every packet through queues, the reference), "
       "flow (link rates shared max-min fairly among the flows on their routes; no packets, "
       "queues or losses; thousands of GPUs in seconds) or analytical (each collective's "
       "alpha-beta time on its routes' bottleneck, congestion-unaware, so optimistic where "
       "traffic shares links; [analytical] factors)",
       Choice(net(&NetworkSection::model), {"packet", "flow", "analytical"})},
      {"network", "transport", "how messages cross the network",
       EnumChoice(net(&NetworkSection::transport),
                  {{Transport::kTcp, "tcp"}, {Transport::kRoce, "roce"}})},
      {"network", "tcp_cc", "TCP congestion control (ns-3's TcpNewReno, TcpCubic, ...)",
       Choice(net(&NetworkSection::tcp_cc), {"newreno", "cubic", "dctcp", "bbr"})},
      {"network", "mtu", "largest IP packet on every link",
       Bytes(net(&NetworkSection::mtu), 576, 9216)},
      {"network", "switch_queue", "buffer of each switch egress port",
       Bytes(net(&NetworkSection::switch_queue_bytes), 1500, 1000000000)},
      {"network", "ecn", "switches mark ECN instead of dropping once a queue passes ecn_threshold",
       Switch(net(&NetworkSection::ecn))},
      {"network", "ecn_threshold", "queue length K above which packets are marked (step marking)",
       Bytes(net(&NetworkSection::ecn_threshold_bytes), 1, 1000000000)},
      {"network", "tcp_buffer", "TCP socket send and receive buffer",
       Bytes(net(&NetworkSection::tcp_buffer_bytes), 4 * kKiB, kGiB)},
      {"network", "tcp_min_rto",
       "TCP minimum retransmission timeout (200 ms: Linux's TCP_RTO_MIN; with tcp_rack_tlp = off "
       "a lost tail waits this long); a tcp_delayed_ack longer than half of it becomes half of "
       "it; at least the network's smallest round trip (a full packet over two links of the "
       "slowest rate)",
       Duration(net(&NetworkSection::tcp_min_rto_s), 1e-6, 10)},
      {"network", "tcp_delayed_ack",
       "how long a TCP receiver holds the ACK of a lone segment (every second full segment is "
       "ACKed at once); 200 us acknowledges every segment of a flow whose segments arrive "
       "further apart, where Linux waits at least 40 ms (TCP_DELACK_MIN) and ACKs every "
       "second one; at most half of tcp_min_rto (longer becomes that)",
       Duration(net(&NetworkSection::tcp_delayed_ack_s), 1e-6, 1)},
      {"network", "tcp_limit_output",
       "TCP Small Queues: most bytes one socket keeps in its host's NIC queue, about 1 ms of its "
       "rate below this cap (1 MiB: Linux's tcp_limit_output_bytes); 0 = off, every byte the "
       "window allows waits in the host queue",
       Bytes(net(&NetworkSection::tcp_limit_output_bytes), 0, kGiB)},
      {"network", "tcp_reordering",
       "duplicate ACKs that start a fast retransmit (3: Linux's net.ipv4.tcp_reordering and "
       "RFC 5681); ns-3's TCP does not adapt it, as Linux does up to tcp_max_reordering (300) "
       "once it sees reordering, so with routing = spray a higher value stands in for a "
       "reordering-tolerant receiver",
       WholeNumber(net(&NetworkSection::tcp_reordering), 1, 300)},
      {"network", "tcp_rack_tlp",
       "TCP detects losses with RACK-TLP (RFC 8985) besides duplicate ACKs, as Linux does by "
       "default (net.ipv4.tcp_recovery = 1, tcp_early_retrans = 3): a segment lost among a "
       "message's last ones is resent within a few round trips, not after tcp_min_rto; off = "
       "ns-3's own TCP (RFC 6675 only)",
       Switch(net(&NetworkSection::tcp_rack_tlp))},
      {"network", "tcp_forward_retransmissions",
       "in fast recovery, TCP also resends segments not deemed lost when nothing lost or new is "
       "left to send (RFC 6675's NextSeg rule 3, which ns-3 follows); off = only lost segments, "
       "as Linux since 4.14, which removed its forward retransmissions",
       Switch(net(&NetworkSection::tcp_forward_retransmissions))},
      {"network", "switching",
       "how switches forward on the packet model over TCP: store-and-forward (once a packet is "
       "whole; ns-3's links) or cut-through (once its 64-byte header is in and the egress port "
       "is free: most datacenter Ethernet switches, InfiniBand, a Linux bridge); the flow and "
       "analytical models have no packets and are the same either way",
       EnumChoice(net(&NetworkSection::switching),
                  {{Switching::kStoreAndForward, "store-and-forward"},
                   {Switching::kCutThrough, "cut-through"}})},
      {"network", "routing",
       "how switches spread traffic over equal-cost paths: ecmp (a hash of each flow, so a "
       "connection keeps one path and two can collide on one link), spray (every packet on "
       "the next path in turn, with receivers that accept out-of-order packets, as AI fabrics "
       "do on RoCE; TCP receivers see reordering) or flowlet (a connection "
       "keeps its "
       "path until it pauses for network.flowlet_timeout, then draws another: LetFlow; TCP and "
       "RoCE on the packet model)",
       EnumChoice(
           net(&NetworkSection::routing),
           {{Routing::kEcmp, "ecmp"}, {Routing::kSpray, "spray"}, {Routing::kFlowlet, "flowlet"}})},
      {"network", "flowlet_timeout",
       "routing = flowlet: how long a connection must send nothing through a switch before its "
       "next packet may take another path (500 us: CONGA's flowlet timeout); below the paths' "
       "difference in delay a new flowlet can overtake the one before it",
       Duration(net(&NetworkSection::flowlet_timeout_s), 1e-6, 1)},
  };
}

// An operation's algorithm: the spellings collectives/settings.h's table allows it, in its
// order.
ValueKind Algorithm(Field<CollectivesSection, coll::AlgorithmChoice> field, std::string_view key) {
  std::vector<std::pair<coll::AlgorithmChoice, std::string>> choices;
  for (coll::AlgorithmChoice choice : coll::OperationChoicesOf(key).allowed) {
    choices.emplace_back(choice, coll::ToString(choice));
  }
  return EnumChoice(field, std::move(choices));
}

// collectives.protocol: the spellings collectives/settings.h gives the choices, in its order.
ValueKind ProtocolKind(Field<CollectivesSection, coll::ProtocolChoice> field) {
  std::vector<std::pair<coll::ProtocolChoice, std::string>> choices;
  for (coll::ProtocolChoice choice : coll::ProtocolChoices()) {
    choices.emplace_back(choice, coll::ToString(choice));
  }
  return EnumChoice(field, std::move(choices));
}

std::vector<KeySpec> CollectivesKeys() {
  auto coll = [](auto member) { return FieldOf(&Scenario::collectives, member); };
  return {
      {"collectives", "allreduce",
       "all-reduce algorithm: ring (NCCL's), hierarchical (reduce-scatter inside each server, "
       "all-reduce across servers over one rail, all-gather inside; topology.kind = rail), or "
       "direct (one-shot: every rank sends each peer its segment, then its reduced segment to "
       "every peer; one message hop per phase, W - 1 connections per rank), or "
       "halving-doubling (Rabenseifner's: recursive halving, then recursive doubling; "
       "2 log2 W message hops; other W fold into a power of two), or tree (NCCL's double binary "
       "tree: chunks up and down two complementary trees, channel c on tree c mod 2; "
       "2 x depth message hops), or auto (ring or tree by size, as NCCL 2.20's tuner picks "
       "them from the ranks, servers, channels and the NIC and NVLink rates; "
       "collectives/nccl_tuning.h)",
       Algorithm(coll(&CollectivesSection::allreduce), "allreduce")},
      {"collectives", "allgather",
       "all-gather algorithm: ring (NCCL's), direct (every rank sends its segment to every "
       "peer at once), halving-doubling (recursive doubling: log2 W rounds), or auto (NCCL's "
       "choice without NVLS or CollNet: the ring)",
       Algorithm(coll(&CollectivesSection::allgather), "allgather")},
      {"collectives", "reducescatter",
       "reduce-scatter algorithm: ring (NCCL's), direct (every rank sends each peer the "
       "peer's segment at once), halving-doubling (recursive halving: log2 W rounds), or auto "
       "(NCCL's choice without NVLS or CollNet: the ring)",
       Algorithm(coll(&CollectivesSection::reducescatter), "reducescatter")},
      {"collectives", "broadcast",
       "broadcast algorithm: ring (NCCL's: a pipelined chain from the root), tree (two "
       "complementary binary trees over the other ranks below the root, channel c on tree c "
       "mod 2: 1 + depth hops instead of W - 1), or auto (NCCL's choice: the ring)",
       Algorithm(coll(&CollectivesSection::broadcast), "broadcast")},
      {"collectives", "reduce",
       "reduce algorithm: ring (NCCL's: a pipelined chain ending at the root), tree (the "
       "broadcast's trees, sums going up: 1 + depth hops instead of W - 1), or auto (NCCL's "
       "choice: the ring)",
       Algorithm(coll(&CollectivesSection::reduce), "reduce")},
      {"collectives", "alltoall",
       "all-to-all algorithm: direct (every pair at once, NCCL's), or hierarchical (a block for "
       "another server goes first to the sender's GPU of the destination's local index, which "
       "sends it on its rail: only rail-aligned traffic leaves a server; topology.kind = rail)",
       Algorithm(coll(&CollectivesSection::alltoall), "alltoall")},
      {"collectives", "order",
       "which of a rank's waiting collectives (on one communicator) starts next: fifo (the one "
       "issued first, NCCL's stream order) or lifo (the one issued last); point-to-point "
       "transfers keep their place",
       EnumChoice(coll(&CollectivesSection::order),
                  {{CollectiveOrder::kFifo, "fifo"}, {CollectiveOrder::kLifo, "lifo"}})},
      {"collectives", "concurrent",
       "how many collectives a rank runs at once on one communicator (1 = one after another, "
       "as NCCL on one stream)",
       WholeNumber(coll(&CollectivesSection::concurrent), 1, 64)},
      {"collectives", "protocol",
       "how collectives move data between GPUs: auto (the default: the protocol NCCL's tuner "
       "picks by size, with the algorithm where that is auto; all-to-alls LL up to 16 KiB a "
       "peer, else Simple; collectives/protocol.h), or one of NCCL's: ll (8-byte stores, half "
       "of them flags: short hops, a quarter of the links' rate), ll128 (128-byte lines with an "
       "8-byte flag: 0.92 of the rate) or simple (whole chunks behind a fence: the rate, the "
       "longest hops), each with NCCL 2.20's base latency and hop latencies inside and between "
       "servers; or ideal (at the links' rate, with no latency but the network's: what a "
       "closed form of the network alone assumes)",
       ProtocolKind(coll(&CollectivesSection::protocol))},
      {"collectives", "channels",
       "parallel channels a collective is split over, like NCCL's; auto: as many as NCCL's "
       "rings use NICs, each NIC both ways (a group with k GPUs on each of several servers: k; "
       "otherwise 2)",
       WholeNumberOrAuto(coll(&CollectivesSection::channels), 1, 32)},
      {"collectives", "chunk",
       "largest message of one step of a channel; 0 = no chunking, else at least 8 bytes",
       Bytes(coll(&CollectivesSection::chunk_bytes), 0, kGiB)},
  };
}

std::vector<KeySpec> WorkloadKeys() {
  auto work = [](auto member) { return FieldOf(&Scenario::workload, member); };
  return {
      {"workload", "kind",
       "how the job trains: data-parallel (PyTorch DDP), a hybrid-parallel transformer "
       "(Megatron-LM: tensor, pipeline, data parallelism), a mixture-of-experts transformer "
       "(also expert parallelism), a recommendation model (DLRM: embedding tables sharded, "
       "MLPs data-parallel), Chakra traces, or nccl-tests' sweep of one collective over sizes",
       Choice(work(&WorkloadSection::kind),
              {"ddp", "transformer", "moe", "dlrm", "chakra", std::string(work::kNcclTestsKind)})},
      {"workload", "model",
       "a published model preset of the kind (ddp: CNNs and BERT/GPT-2 as whole models; "
       "transformer and moe: GPT-3, Llama, Mixtral shapes; dlrm: the DLRM of Rashidi et al.), "
       "custom (ddp: parameters, layers and flops_per_sample are then required; transformer, "
       "moe and dlrm: the shape keys), or trace (ddp: replay the recorded collectives of "
       "workload.trace)",
       Choice(work(&WorkloadSection::model), ModelChoices())},
      {"workload", "parameters", "parameter count; 0 = the preset's",
       Count(work(&WorkloadSection::parameters), 0, 100000000000000)},
      {"workload", "layers",
       "ddp: layers the parameters and FLOPs are spread over evenly; transformer and moe: "
       "transformer blocks; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::layers), 0, 100000)},
      {"workload", "flops_per_sample", "FLOPs of one sample's forward pass; 0 = the preset's",
       FlopCount(work(&WorkloadSection::flops_per_sample), 0, 1e18)},
      {"workload", "batch_per_rank", "ddp, dlrm: samples per rank per iteration",
       WholeNumber(work(&WorkloadSection::batch_per_rank), 1, 65536)},
      {"workload", "gpu_peak",
       "peak FLOP rate of one GPU (chakra: for compute nodes that record only num_ops)",
       FlopRate(work(&WorkloadSection::gpu_peak_flops), 1e9, 100e15)},
      {"workload", "gpu_util", "fraction of gpu_peak that compute achieves",
       Real(work(&WorkloadSection::gpu_util), 0, 1, /*min_excluded=*/true)},
      {"workload", "backward_ratio", "backward-pass FLOPs per forward-pass FLOP",
       Real(work(&WorkloadSection::backward_ratio), 0, 10, /*min_excluded=*/true)},
      {"workload", "bucket", "gradient bucket size (PyTorch DDP's bucket_cap_mb)",
       Bytes(work(&WorkloadSection::bucket_bytes), kKiB, work::kMaxCollectiveBytes)},
      {"workload", "optimizer_time", "duration of the optimizer step after gradients are reduced",
       Duration(work(&WorkloadSection::optimizer_s), 0, 3600)},
      {"workload", "iterations",
       "training iterations to simulate (nccl-tests: timed runs of each size, nccl-tests' -n; "
       "chakra: how many times the traces run, once unless given)",
       WholeNumber(work(&WorkloadSection::iterations), 1, 10000)},
  };
}

// workload.model = trace: replaying a collective trace (workloads/trace_replay.h).
std::vector<KeySpec> WorkloadTraceKeys() {
  return {
      {"workload", "trace",
       "model = trace: a collective trace recorded by libnccl-net-nbox.so's profiler "
       "(NBOX_PROFILE_TRACE), replayed once per iteration; a relative path starts at the "
       "scenario file's folder",
       Text(FieldOf(&Scenario::workload, &WorkloadSection::trace), "a file path")},
      {"workload", "trace_scaling",
       "model = trace: run a trace recorded on fewer (or more) ranks as the same job on "
       "job.world_size ranks, adding or removing model replicas of workload.trace_replica "
       "ranks (each rank runs its place in a recorded replica; all-reduces, broadcasts and "
       "reduces keep their bytes): none (the job must have the "
       "trace's ranks), fixed-total (all-gathers and reduce-scatters keep their whole tensor, "
       "as ZeRO and FSDP shard model state) or fixed-per-rank (they keep each rank's part)",
       EnumChoice(FieldOf(&Scenario::workload, &WorkloadSection::trace_scaling),
                  {{work::TraceScaling::kNone, "none"},
                   {work::TraceScaling::kFixedTotal, "fixed-total"},
                   {work::TraceScaling::kFixedPerRank, "fixed-per-rank"}})},
      {"workload", "trace_replica",
       "model = trace with trace_scaling: ranks of one model replica (tensor x pipeline "
       "parallel ranks, consecutive as Megatron places them); scaling adds or removes whole "
       "replicas: groups inside a replica are copied, groups across replicas (data-parallel, "
       "the world) widened",
       WholeNumber(FieldOf(&Scenario::workload, &WorkloadSection::trace_replica), 1, 65536)},
      {"workload", "trace_dir",
       "kind = chakra: a folder of MLCommons Chakra execution traces, <prefix>.<rank>.et per "
       "rank and, where collectives run on groups, comm_groups.json (as nbox-cosim "
       "--export-chakra and ASTRA-sim's examples have them; workloads/chakra/README.md); a "
       "relative path starts at the scenario file's folder",
       Text(FieldOf(&Scenario::workload, &WorkloadSection::trace_dir), "a folder path")},
      {"workload", "trace_prefix",
       "kind = chakra: the traces' file prefix (<prefix>.<rank>.et); empty = the one prefix "
       "of trace_dir whose files hold every rank",
       Text(FieldOf(&Scenario::workload, &WorkloadSection::trace_prefix), "a file prefix")},
  };
}

std::vector<KeySpec> OutputKeys() {
  auto out = [](auto member) { return FieldOf(&Scenario::output, member); };
  return {
      {"output", "dir", "folder for results; empty = results/NAME for a scenario file NAME.ini",
       Text(out(&OutputSection::dir), "a folder path")},
      {"output", "trace", "timeline to write: none, or a Chrome/Perfetto trace",
       EnumChoice(out(&OutputSection::trace),
                  {{Timeline::kNone, "none"}, {Timeline::kChrome, "chrome"}})},
      {"output", "progress", "progress line on the terminal; auto = only when it is a terminal",
       Choice(out(&OutputSection::progress), {"auto", "on", "off"})},
      {"output", "link_sample",
       "interval at which every port's throughput and queue are sampled into links.csv; "
       "0s = no samples",
       Duration(out(&OutputSection::link_sample_s), 0, 1)},
      {"output", "messages",
       "every point-to-point message of the run to messages.csv (source, destination, "
       "channel, bytes, the messages it depended on, when it was posted and delivered; "
       "docs/TRACES.md): none or csv; packet and flow models, simulated ranks",
       EnumChoice(out(&OutputSection::messages),
                  {{MessageLog::kNone, "none"}, {MessageLog::kCsv, "csv"}})},
  };
}

// --- real ranks ---------------------------------------------------------------------

std::vector<KeySpec> RealRanksKeys() {
  auto real = [](auto member) { return FieldOf(&Scenario::realranks, member); };
  return {
      {"realranks", "ranks",
       "ranks that run as real processes through the bridge (libnccl-net-nbox.so); "
       "nbox-cosim emulates the others; empty = none (a simulated job)",
       RankList(real(&RealRanksSection::ranks), 65535)},
      {"realranks", "clock",
       "the real ranks' clock: virtual (stands still while a rank waits on the simulator) "
       "or realtime (the wall clock; valid only while the simulator keeps up)",
       EnumChoice(real(&RealRanksSection::clock),
                  {{RealRankClock::kVirtual, "virtual"}, {RealRankClock::kRealtime, "realtime"}})},
      {"realranks", "peers",
       "what emulated ranks run: the scenario's workload, or mirror (repeat each collective "
       "the lowest real rank starts)",
       EnumChoice(real(&RealRanksSection::peers),
                  {{RealRankPeers::kWorkload, "workload"}, {RealRankPeers::kMirror, "mirror"}})},
      {"realranks", "payload",
       "bytes of messages from emulated to real ranks: zeros, or self (what the sender would "
       "send if it held the receiver's own data, so reductions stay meaningful)",
       EnumChoice(real(&RealRanksSection::payload),
                  {{RealRankPayload::kZeros, "zeros"}, {RealRankPayload::kSelf, "self"}})},
      {"realranks", "launch",
       "command line nbox-cosim runs once per real rank ({rank} is replaced by the rank; "
       "output to OUTPUT_DIR/rank<r>.log); empty = start them by hand with the printed "
       "environment",
       Text(real(&RealRanksSection::launch), "a command line")},
      {"realranks", "bridge", "where real ranks reach nbox-cosim",
       BridgeEndpoint(real(&RealRanksSection::bridge))},
      {"realranks", "max_lag",
       "realtime: the largest lag of the simulator behind the wall clock for a valid result",
       Duration(real(&RealRanksSection::max_lag_s), 1e-9, 3600)},
      {"realranks", "realtime_heartbeat",
       "realtime: how often a real rank promises its wall clock when it sends nothing else; "
       "the simulator may not run past a rank's last promise, so deliveries lag by about this "
       "much more",
       Duration(real(&RealRanksSection::realtime_heartbeat_s), 1e-6, 1)},
      {"realranks", "join_timeout",
       "wall-clock time every real rank has to join (connect and bootstrap)",
       Duration(real(&RealRanksSection::join_timeout_s), 1e-3, 86400)},
  };
}

std::vector<KeySpec> EventsKeys() {
  auto events = [](auto member) { return FieldOf(&Scenario::events, member); };
  return {
      {"events", "gpu_variation",
       "standard deviation of each GPU's compute speed around the workload's, drawn once per "
       "rank from job.seed (uniform, so every speed lies within 1 +- 1.73 x this): a fleet's "
       "spread; 0 = every GPU alike",
       Real(events(&EventsSection::gpu_variation), 0, 0.2)},
      {"events", "slow_gpus",
       "ranks whose GPU computes events.slowdown times as long as the others for the whole run "
       "(stragglers); empty = none",
       RankList(events(&EventsSection::slow_gpus), kMaxEventRank)},
      {"events", "slowdown", "how many times as long events.slow_gpus compute (1.3: 30% slower)",
       Real(events(&EventsSection::slowdown), 1, kMaxSlowdown)},
      {"events", "at",
       "a change to the cluster at a moment of the run: GPUs slowing down (a straggler from "
       "then on; compute already started keeps its time) or a link's rate (a degraded link: "
       "what crosses it from then on moves at the new rate), on every network model; links or "
       "a switch failing and coming back (the routes recomputed over the links left, every "
       "connection re-routed as its ECMP hash picks; on TCP packets what was on a failed link "
       "is lost and retransmitted), on every model but RoCE packets; may be given many times",
       TimedChanges(events(&EventsSection::changes))},
  };
}

std::vector<KeySpec> DebugKeys() {
  auto debug = [](auto member) { return FieldOf(&Scenario::debug, member); };
  return {
      {"debug", "slowdown",
       "wall-clock pause per simulated event, to check that virtual-clock results do not "
       "depend on the simulator's speed (real-rank runs only); 0s = none",
       Duration(debug(&DebugSection::slowdown_s), 0, 1)},
  };
}

std::vector<std::string> ServerPresetChoices() {
  std::vector<std::string> choices = topo::ServerPresetNames();
  choices.push_back("custom");
  return choices;
}

std::vector<KeySpec> ServersKeys() {
  auto servers = [](auto member) { return FieldOf(&Scenario::servers, member); };
  return {
      {"servers", "preset",
       "a published server design (topologies/servers.h names its source), or custom (then "
       "gpus, nvlink and nic are required); given keys override the preset's",
       Choice(servers(&ServersSection::preset), ServerPresetChoices())},
      {"servers", "count", "servers in the cluster",
       WholeNumber(servers(&ServersSection::count), 1, 8192)},
      {"servers", "gpus", "GPUs per server, each on the NVSwitch and with a NIC of its own",
       WholeNumber(servers(&ServersSection::gpus), 1, 576)},
      {"servers", "nvlink",
       "the rate data moves at between one GPU and the NVSwitch, each direction (a preset's is "
       "NCCL's NVLink bandwidth, about 80% of the datasheet's line rate)",
       Rate(servers(&ServersSection::nvlink_bps), topo::kMinLinkRateBps, topo::kMaxLinkRateBps)},
      {"servers", "nvlink_latency",
       "propagation delay of a GPU's NVLink link (no vendor publishes one; the default is "
       "topology.link_latency's)",
       Duration(servers(&ServersSection::nvlink_latency_s), 0, topo::kMaxLinkLatencyS)},
      {"servers", "nic", "rate of each GPU's NIC link to its rail switch",
       Rate(servers(&ServersSection::nic_bps), topo::kMinLinkRateBps, topo::kMaxLinkRateBps)},
  };
}

}  // namespace

const std::vector<SectionSpec>& ScenarioSections() {
  static const std::vector<SectionSpec> sections = {
      {"job", "The training job as a whole."},
      {"topology", "The physical network: hosts, switches and the links between them."},
      {"network", "How the simulated network carries packets: transport, queues, ECN."},
      {"roce",
       "The RoCEv2 fabric of network.transport = roce: switch buffer, PFC, ECN, DCQCN, the "
       "NIC."},
      {"analytical",
       "The analytical model of network.model = analytical: each operation's effective-"
       "bandwidth factor."},
      {"collectives", "How collectives become point-to-point messages."},
      {"workload", "What every rank computes and when it communicates."},
      {"output", "What a run writes and shows."},
      {"realranks",
       "Real ranks in the loop: processes whose messages cross the simulated network."},
      {"events",
       "A cluster that is not ideal, on every network model: GPUs that are not all alike (a "
       "fleet's spread of compute speeds, stragglers; emulated ranks, a real rank computes as it "
       "does) and changes at moments of the run (GPUs slowing down, links degraded, links and "
       "switches failing and coming back). Times are simulated, from the run's start, as in "
       "results.json; nodes are named as the topology names them (topologies/README.md: h0, "
       "sw0, leaf0, spine0; on a rail fabric s0g3, nvsw0, rail3; results.json's network ports "
       "name both ends of every link)."},
      {"debug", "Settings for debugging nbox itself; none changes a result."},
      {"servers",
       "Scale-up servers that topology.kind = rail is built of: GPUs on one NVSwitch, a NIC per "
       "GPU."},
      {"cluster",
       "Several jobs on one fabric: each its own workload and placement, sharing the network "
       "(docs/CLUSTERS.md)."},
  };
  return sections;
}

const std::vector<KeySpec>& ScenarioKeys() {
  static const std::vector<KeySpec> keys = [] {
    std::vector<KeySpec> all;
    for (auto* group :
         {JobKeys, TopologyKeys, NetworkKeys, RoceKeys, AnalyticalKeys, CollectivesKeys,
          WorkloadKeys, WorkloadTraceKeys, TransformerKeys, DlrmKeys, NcclTestsKeys, OutputKeys,
          RealRanksKeys, EventsKeys, DebugKeys, ServersKeys, ClusterKeys}) {
      for (KeySpec& key : group()) all.push_back(std::move(key));
    }
    return all;
  }();
  return keys;
}

std::vector<std::string> SectionNames() {
  std::vector<std::string> names;
  for (const SectionSpec& section : ScenarioSections()) names.push_back(section.name);
  return names;
}

std::vector<std::string> KeyNames(std::string_view section) {
  std::vector<std::string> names;
  for (const KeySpec& key : ScenarioKeys()) {
    if (key.section == section) names.push_back(key.name);
  }
  return names;
}

bool IsSection(std::string_view section) {
  for (const SectionSpec& spec : ScenarioSections()) {
    if (spec.name == section) return true;
  }
  return false;
}

const KeySpec* FindKey(std::string_view section, std::string_view name) {
  for (const KeySpec& key : ScenarioKeys()) {
    if (key.section == section && key.name == name) return &key;
  }
  return nullptr;
}

const KeySpec& KeyByFullName(std::string_view full_name) {
  for (const KeySpec& key : ScenarioKeys()) {
    if (key.FullName() == full_name) return key;
  }
  throw std::logic_error("no scenario key " + std::string(full_name));
}

std::string SettingText(const Scenario& scenario, std::string_view full_name) {
  return KeyByFullName(full_name).value.format(scenario);
}

}  // namespace nbox::scenario
