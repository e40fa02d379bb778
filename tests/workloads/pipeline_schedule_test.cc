// Pipeline schedules as steps, before any op is built: the orders of Megatron's rules worked
// by hand, and, over many shapes, that every stage runs each micro-batch's forward and backward
// of each chunk once, the forward first, and sends its neighbour exactly what that neighbour
// receives from it.
#include "workloads/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

namespace nbox::work {
namespace {

// "F0 F1 B0 ...": the forwards and backwards in order (chunks as "F0c1" when v > 1).
std::string Passes(const StageSchedule& schedule, int v) {
  std::string out;
  for (const PipelineStep& step : schedule.steps) {
    if (step.kind == PipelineStep::Kind::kExchange) continue;
    const char pass = step.kind == PipelineStep::Kind::kForward ? 'F' : 'B';
    out += (out.empty() ? "" : " ") + PassLabel(pass, step.microbatch, step.chunk, v);
  }
  return out;
}

TEST(PipelineSchedule, OneFOneBWarmsUpAlternatesAndCoolsDown) {
  // p = 4, m = 6: stage 0 warms up with p - 1 = 3 forwards, stage 3 with none (Megatron's
  // num_warmup_microbatches = p - s - 1).
  const auto stage = [](int s) {
    return Passes(ScheduleStage(PipelineShape{PipelineSchedule::kOneFOneB, 4, 1, 6, s}), 1);
  };
  EXPECT_EQ(stage(0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(stage(3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  EXPECT_EQ(ScheduleStage(PipelineShape{PipelineSchedule::kOneFOneB, 4, 1, 6, 0}).last_backward, 5);
  EXPECT_EQ(Passes(ScheduleStage(PipelineShape{PipelineSchedule::kGPipe, 4, 1, 3, 2}), 1),
            "F0 F1 F2 B2 B1 B0");
  EXPECT_EQ(ScheduleStage(PipelineShape{PipelineSchedule::kGPipe, 4, 1, 3, 2}).last_backward, 0);
}

TEST(PipelineSchedule, OneFOneBExchangesAreMegatronsBatchedPairs) {
  // p = 2, m = 2, stage 1: receive F0's input, then after F0 send B0's gradient while
  // receiving F1's input (send_backward_recv_forward), then send B1's.
  const StageSchedule s = ScheduleStage(PipelineShape{PipelineSchedule::kOneFOneB, 2, 1, 2, 1});
  std::string labels;
  for (const PipelineStep& step : s.steps) {
    if (step.kind == PipelineStep::Kind::kExchange) labels += step.label + "; ";
  }
  EXPECT_EQ(labels, "F0 recv; B0 send F1 recv; B1 send; ");
}

TEST(PipelineSchedule, WarmupStepsFollowMegatron) {
  EXPECT_EQ(WarmupSteps(PipelineShape{PipelineSchedule::kOneFOneB, 4, 1, 8, 0}), 3);
  EXPECT_EQ(WarmupSteps(PipelineShape{PipelineSchedule::kOneFOneB, 4, 1, 2, 0}), 2);  // m caps it
  // Interleaved: (p - s - 1) 2 + (v - 1) p, or all m v steps when m = p.
  EXPECT_EQ(WarmupSteps(PipelineShape{PipelineSchedule::kOneFOneB, 4, 2, 8, 1}), 2 * 2 + 4);
  EXPECT_EQ(WarmupSteps(PipelineShape{PipelineSchedule::kOneFOneB, 4, 2, 4, 1}), 8);
}

// For every shape: each (micro-batch, chunk) runs its forward and then its backward once on
// every stage, and the activations stage s sends forward (to s + 1, or with interleaving from
// the last stage to the first) are as many as that stage receives from it; gradients likewise.
TEST(PipelineSchedule, EveryStageRunsEachPassOnceAndNeighboursAgreeOnEveryTransfer) {
  int shapes = 0;
  for (PipelineSchedule kind : {PipelineSchedule::kGPipe, PipelineSchedule::kOneFOneB}) {
    for (int p : {1, 2, 3, 4}) {
      for (int v : {1, 2, 3}) {
        for (int m : {1, 2, 3, 4, 6, 8, 9, 12}) {
          if (v > 1 && (kind != PipelineSchedule::kOneFOneB || p < 2 || m % p != 0)) continue;
          ++shapes;
          SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << " p " << p
                                          << " v " << v << " m " << m);
          // sent[{from, to}] and received[{at, from}], counted in messages.
          std::map<std::pair<int, int>, int> activations_sent, activations_received, gradients_sent,
              gradients_received;
          for (int s = 0; s < p; ++s) {
            const StageSchedule schedule = ScheduleStage(PipelineShape{kind, p, v, m, s});
            std::map<std::pair<int, int>, int> forwards, backwards;
            for (const PipelineStep& step : schedule.steps) {
              const std::pair<int, int> pass{step.microbatch, step.chunk};
              if (step.kind == PipelineStep::Kind::kForward) {
                ++forwards[pass];
              } else if (step.kind == PipelineStep::Kind::kBackward) {
                EXPECT_EQ(forwards[pass], 1) << "backward before its forward";
                ++backwards[pass];
              } else {
                const int next = (s + 1) % p;
                const int prev = (s + p - 1) % p;
                activations_sent[{s, next}] += step.send_next;
                gradients_sent[{s, prev}] += step.send_prev;
                activations_received[{s, prev}] += step.recv_prev;
                gradients_received[{s, next}] += step.recv_next;
              }
            }
            EXPECT_EQ(static_cast<int>(forwards.size()), m * v);
            EXPECT_EQ(static_cast<int>(backwards.size()), m * v);
            for (const auto& [pass, n] : backwards) EXPECT_EQ(n, 1);
          }
          for (int s = 0; s < p; ++s) {
            const int next = (s + 1) % p;
            const int sent = activations_sent[{s, next}];
            const int received = activations_received[{next, s}];
            EXPECT_EQ(sent, received) << "activations " << s << " -> " << next;
            const int gradients = gradients_sent[{next, s}];
            const int taken = gradients_received[{s, next}];
            EXPECT_EQ(gradients, taken) << "gradients " << next << " -> " << s;
          }
          if (p > 1) {
            // Every virtual stage boundary is crossed once per micro-batch each way.
            int crossings = 0;
            for (const auto& [pair, n] : activations_sent) crossings += n;
            EXPECT_EQ(crossings, m * (p * v - 1));
          }
        }
      }
    }
  }
  EXPECT_GT(shapes, 60);
}

}  // namespace
}  // namespace nbox::work
