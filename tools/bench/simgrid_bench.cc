// nbox-bench-simgrid: nbox's flow model and SimGrid's max-min solver on one collective's
// messages (simgrid_compare.h says how; tools/bench/README.md, "SimGrid's solver", has the
// figures). Prints both simulated completion times and both wall times.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <stdexcept>
#include <string>

#include "tools/bench/simgrid_compare.h"

int main(int argc, char** argv) {
  namespace coll = nbox::coll;
  namespace bench = nbox::bench;
  CLI::App app{
      "nbox-bench-simgrid: nbox's flow model and SimGrid's max-min solver on one "
      "collective's messages"};
  int world = 64;
  uint64_t bytes = 64ull << 20;
  int channels = 1;
  double rate_gbps = 100;
  double latency_us = 1;
  std::string run = "both";
  std::string shape = "star";
  std::string op = "allreduce";
  app.add_option("--world", world, "ranks, one per host")->check(CLI::Range(2, 4096));
  app.add_option("--topology", shape,
                 "star (one switch) | leaf-spine (8 hosts per leaf, 4 spines: 2:1 oversubscribed)")
      ->check(CLI::IsMember({"star", "leaf-spine"}));
  app.add_option("--op", op,
                 "allreduce (NCCL's ring) | alltoall (direct: every pair at once, so many flows "
                 "share the leaf-spine's uplinks and the solver recomputes large components; "
                 "SimGrid's routes then carry no latency, simgrid_compare.h)")
      ->check(CLI::IsMember({"allreduce", "alltoall"}));
  app.add_option("--bytes", bytes, "the collective's size in bytes (nccl-tests' convention)");
  app.add_option("--channels", channels, "rings")->check(CLI::Range(1, 8));
  app.add_option("--rate-gbps", rate_gbps, "every link's rate");
  app.add_option("--latency-us", latency_us, "every link's latency");
  app.add_option("--run", run, "both | nbox | simgrid (one alone, for its peak memory)")
      ->check(CLI::IsMember({"both", "nbox", "simgrid"}));
  CLI11_PARSE(app, argc, argv);

  try {
    if (shape == "leaf-spine" && world % 8 != 0) {
      throw std::invalid_argument("--topology leaf-spine needs --world a multiple of 8");
    }
    const bool all_to_all = op == "alltoall";
    coll::CollectiveSpec spec;
    spec.op = all_to_all ? coll::CollectiveOp::kAllToAll : coll::CollectiveOp::kAllReduce;
    spec.algorithm = all_to_all ? coll::Algorithm::kDirect : coll::Algorithm::kRing;
    spec.world_size = world;
    spec.bytes = bytes;
    spec.channels = channels;
    const auto built = std::chrono::steady_clock::now();
    const bench::MessageDag dag = bench::MessagesOf(spec);
    const double dag_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - built).count();
    const nbox::topo::Topology topology =
        shape == "star" ? nbox::topo::MakeStar(world, rate_gbps * 1e9, latency_us * 1e-6)
                        : nbox::topo::MakeLeafSpine(world / 8, 4, 8, rate_gbps * 1e9,
                                                    rate_gbps * 1e9, latency_us * 1e-6);
    const bench::ComparedNetwork net = bench::PrepareNetwork(topology, 9000, dag, !all_to_all);

    fmt::print(
        "{} of {} bytes, {} ranks, {}, {} channel(s), MTU 9000: {} messages (built in "
        "{:.2f} s)\n",
        all_to_all ? "direct all-to-all" : "ring all-reduce", bytes, world, topology.description,
        channels, dag.messages.size(), dag_s);
    bench::DagRun nbox_run;
    bench::DagRun simgrid_run;
    if (run != "simgrid") {
      nbox_run = bench::RunOnFlowModel(dag, net);
      fmt::print("nbox flow model  simulated {:.9f} s  wall {:.3f} s  delivered {}\n",
                 nbox_run.simulated_s, nbox_run.wall_s, nbox_run.delivered);
    }
    if (run != "nbox") {
      simgrid_run = bench::RunOnSimGrid(dag, net);
      fmt::print("SimGrid CM02     simulated {:.9f} s  wall {:.3f} s  delivered {}\n",
                 simgrid_run.simulated_s, simgrid_run.wall_s, simgrid_run.delivered);
    }
    if (run == "both") {
      fmt::print("simulated time SimGrid / nbox {:.6f}; wall time SimGrid / nbox {:.2f}\n",
                 simgrid_run.simulated_s / nbox_run.simulated_s,
                 simgrid_run.wall_s / nbox_run.wall_s);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "nbox-bench-simgrid: {}\n", e.what());
    return 1;
  }
  return 0;
}
