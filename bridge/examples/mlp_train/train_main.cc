// nbox_mlp_train: a small data-parallel training job on the nbox host runtime (the "real
// job"). Every rank holds the same MLP, draws its own shard of each global batch of a teacher
// task, runs real forward and backward passes in float32, averages the gradient with bucketed
// asynchronous all-reduces that overlap backward (as PyTorch DDP does), and takes an SGD step.
//
//   NBOX_NET_PLUGIN=/path/to/libnccl-net-nboxtcp.so nbox_mlp_train --launch 2 --steps 20
//
// Ranks find each other as nbox_allreduce_bench's do (NBOX_RANK, NBOX_WORLD_SIZE,
// NBOX_UNIQUE_ID[_FILE]); --launch W starts W local ranks. Rank 0 prints the loss and the
// iteration time of every step (on the rank's clock: virtual under nbox-cosim) and a RESULT
// line with the mean iteration time on that clock (iter_us), on the wall clock (wall_iter_us),
// and the median on the rank's clock (median_iter_us, which a stall on a busy machine does not
// move); --print-weights makes every rank print a
// checksum of its weights after each step (they must agree across ranks).

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "bridge/examples/mlp_train/bucket_plan.h"
#include "bridge/examples/mlp_train/gradient_allreduce.h"
#include "bridge/examples/mlp_train/mlp.h"
#include "bridge/examples/mlp_train/teacher_task.h"
#include "bridge/examples/support/iteration_clock.h"
#include "bridge/examples/support/launch_ranks.h"
#include "bridge/include/nbox_host.h"
#include "common/units.h"

namespace nbox::train {
namespace {

struct Options {
  std::vector<int> widths{64, 256, 256, 16};
  int global_batch = 64;
  int steps = 20;
  int warmup = 2;
  float learning_rate = 0.05f;
  std::string bucket_size = "1MiB";
  uint64_t seed = 1;
  int launch = 0;
  bool print_weights = false;
};

void Check(nboxResult_t result, const char* what, nboxComm_t comm) {
  if (result != nboxSuccess) {
    throw std::runtime_error(std::string(what) + " failed: " + nboxGetErrorString(result) + ": " +
                             nboxGetLastError(comm));
  }
}

// FNV-1a over the bytes of the parameters: equal weights give equal checksums.
uint64_t Checksum(const std::vector<float>& parameters) {
  uint64_t hash = 0xcbf29ce484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(parameters.data());
  for (size_t k = 0; k < parameters.size() * sizeof(float); ++k) {
    hash = (hash ^ bytes[k]) * 0x100000001b3ull;
  }
  return hash;
}

int Train(const Options& options) {
  nboxComm_t comm = nullptr;
  Check(nboxCommInitFromEnv(&comm), "nboxCommInitFromEnv", nullptr);
  int rank = 0, world = 0;
  Check(nboxCommUserRank(comm, &rank), "nboxCommUserRank", comm);
  Check(nboxCommCount(comm, &world), "nboxCommCount", comm);
  if (options.global_batch % world != 0) {
    throw std::invalid_argument("--global-batch " + std::to_string(options.global_batch) +
                                " is not a multiple of the world size " + std::to_string(world));
  }
  const int local_batch = options.global_batch / world;

  Mlp mlp(options.widths);
  TeacherTask task(options.widths.front(), options.widths.back(), options.seed);
  std::vector<float> parameters;
  mlp.Initialise(&parameters, options.seed);
  const size_t parameter_count = mlp.parameter_count();
  // The gradient plus one float: this rank's share of the batch loss, summed with the gradient.
  std::vector<float> gradient(parameter_count + 1);
  GradientAllReduce allreduce(comm, PlanBuckets(mlp, ParseBytes(options.bucket_size), 1));
  const float loss_scale = 1.0f / static_cast<float>(options.global_batch);

  std::vector<float> inputs, targets;
  double timed_ns = 0, timed_wall_ns = 0, first_loss = 0, last_loss = 0;
  std::vector<double> timed;  // each timed step on the rank's clock, ns
  for (int step = 0; step < options.warmup + options.steps; ++step) {
    const uint64_t start = IterationClockNs(comm);
    const auto wall_start = std::chrono::steady_clock::now();
    Check(MarkIteration(comm, step, 1), "MarkIteration", comm);
    const uint64_t first_sample = static_cast<uint64_t>(step) * options.global_batch +
                                  static_cast<uint64_t>(rank) * local_batch;
    task.Draw(first_sample, local_batch, &inputs, &targets);
    mlp.Forward(parameters, inputs, local_batch);
    gradient[parameter_count] = static_cast<float>(mlp.SetOutputError(targets, loss_scale));
    allreduce.Begin(gradient.data());
    mlp.Backward(parameters, gradient.data(), [&](int layer) { allreduce.OnLayerDone(layer); });
    allreduce.Finish();
    SgdStep(options.learning_rate, gradient.data(), &parameters);
    Check(MarkIteration(comm, step, 0), "MarkIteration", comm);
    const uint64_t elapsed = IterationClockNs(comm) - start;
    const double wall_elapsed_ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - wall_start)
            .count();
    const double loss = gradient[parameter_count];  // the global batch's mean loss
    if (step == 0) first_loss = loss;
    last_loss = loss;
    if (step >= options.warmup) {
      timed.push_back(static_cast<double>(elapsed));
      timed_ns += static_cast<double>(elapsed);
      timed_wall_ns += wall_elapsed_ns;
    }
    if (rank == 0) std::printf("step %d loss %.6f iter_ms %.3f\n", step, loss, elapsed * 1e-6);
    if (options.print_weights) {
      std::printf("WEIGHTS rank=%d step=%d fnv1a=%016llx\n", rank, step,
                  static_cast<unsigned long long>(Checksum(parameters)));
    }
    std::fflush(stdout);
  }
  if (rank == 0) {
    std::printf(
        "RESULT ranks=%d params=%zu global_batch=%d buckets=%zu steps=%d iter_us=%.1f "
        "wall_iter_us=%.1f median_iter_us=%.1f first_loss=%.6f last_loss=%.6f\n",
        world, parameter_count, options.global_batch, allreduce.buckets().size(), options.steps,
        timed_ns / options.steps * 1e-3, timed_wall_ns / options.steps * 1e-3,
        IterationMedian(timed.data(), static_cast<int>(timed.size())) * 1e-3, first_loss,
        last_loss);
  }
  Check(nboxCommDestroy(comm), "nboxCommDestroy", comm);
  return 0;
}

}  // namespace
}  // namespace nbox::train

int main(int argc, char** argv) {
  nbox::train::Options options;
  CLI::App app{"nbox_mlp_train: data-parallel MLP training over the nbox host runtime"};
  app.add_option("--layers", options.widths, "widths: input,hidden...,output")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--global-batch", options.global_batch, "samples per step over all ranks")
      ->check(CLI::PositiveNumber);
  app.add_option("--steps", options.steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", options.warmup, "steps before timing starts")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--lr", options.learning_rate, "SGD learning rate")->check(CLI::PositiveNumber);
  app.add_option("--bucket-size", options.bucket_size, "gradient bucket size, e.g. 1MiB");
  app.add_option("--seed", options.seed, "model and data seed");
  app.add_option("--launch", options.launch, "start this many local ranks")
      ->check(CLI::PositiveNumber);
  app.add_flag("--print-weights", options.print_weights,
               "every rank prints a checksum of its weights after each step");
  CLI11_PARSE(app, argc, argv);
  try {
    if (options.widths.size() < 2) throw std::invalid_argument("--layers needs at least 2 widths");
    if (nbox::ParseBytes(options.bucket_size) < 1) {
      throw std::invalid_argument("--bucket-size must be at least 1 byte");
    }
    if (options.launch > 0 && std::getenv("NBOX_RANK") == nullptr) {
      return LaunchLocalRanks(options.launch, argv);
    }
    return nbox::train::Train(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "nbox_mlp_train: %s\n", error.what());
    return 1;
  }
}
