// What the machine lets nbox-cosim take (tools/cosim/assembly/machine_memory.h): a MemoryCap turns
// an allocation past its room into std::bad_alloc and gives the room back when it ends, a workload
// built within a room that it outgrows is refused, and --memory lowers what AvailableMemoryBytes
// reports.
#include "tools/cosim/assembly/machine_memory.h"

#include <gtest/gtest.h>

#include <new>
#include <vector>

#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/assembly/memory_estimate.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::testing {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// Writes every page, so that the bytes are held, not only reserved.
void Allocate(uint64_t bytes) {
  std::vector<char> block(bytes, 1);
  ASSERT_EQ(block[bytes - 1], 1);
}

TEST(MemoryCap, AnAllocationPastItsRoomThrowsAndTheRoomComesBackAfter) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &before), 0);
  {
    const cosim::MemoryCap cap(64 * kMiB);
    EXPECT_THROW(Allocate(512 * kMiB), std::bad_alloc);
    EXPECT_NO_THROW(Allocate(8 * kMiB));  // within the room
  }
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &after), 0);
  EXPECT_EQ(after.rlim_cur, before.rlim_cur);
  EXPECT_NO_THROW(Allocate(512 * kMiB));
}

TEST(MemoryCap, NoRoomGivenSetsNoLimit) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &before), 0);
  const cosim::MemoryCap cap(0);
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &now), 0);
  EXPECT_EQ(now.rlim_cur, before.rlim_cur);
}

// 100,000 layers of GPT-3 13B take some 5 GB of ops: built within 256 MiB, the build is
// refused (nbox-cosim's exit 3) rather than ended by the kernel's OOM killer.
TEST(MemoryCap, AWorkloadThatOutgrowsItsRoomIsRefused) {
  const scenario::Scenario s =
      scenario::LoadScenario("scenarios/gpt3-13b-64.ini", {"workload.layers=100000"});
  try {
    cosim::BuildWorkloadWithin(s, 256 * kMiB);
    ADD_FAILURE() << "built 100,000 layers within 256 MiB";
  } catch (const cosim::ResourceRefusal& e) {
    EXPECT_NE(std::string(e.what()).find("building the workload's programs took more than"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(Allocate(512 * kMiB));  // the room came back
}

TEST(AvailableMemoryBytes, ALimitBoundsTheRoomByWhatTheProcessHoldsNow) {
  const uint64_t machine = cosim::AvailableMemoryBytes();
  ASSERT_GT(machine, 0u);  // /proc/meminfo is readable here
  // This process holds some MiB already: 1 GiB leaves less than 1 GiB, and never more than
  // the machine has.
  const uint64_t limited = cosim::AvailableMemoryBytes(1024 * kMiB);
  EXPECT_LT(limited, 1024 * kMiB);
  EXPECT_GT(limited, 512 * kMiB);
  EXPECT_LE(limited, machine);
}

// The schedules live while collectives run; the report is built after the last one. A run
// holds one or the other at its peak, so the estimate adds the larger: network 20, connections
// 1, programs 2, records 3, and the larger of schedules 5 and report 4: 31 MiB, not 35.
TEST(MemoryEstimateTotal, CountsTheLargerOfTheSchedulesAndTheReportNotBoth) {
  cosim::MemoryEstimate e;
  e.network_bytes = 20 * kMiB;
  e.connection_bytes = 1 * kMiB;
  e.program_bytes = 2 * kMiB;
  e.record_bytes = 3 * kMiB;
  e.schedule_bytes = 5 * kMiB;
  e.report_bytes = 4 * kMiB;
  EXPECT_EQ(e.total_bytes(), 31 * kMiB);
  e.report_bytes = 9 * kMiB;
  EXPECT_EQ(e.total_bytes(), 35 * kMiB);
}

}  // namespace
}  // namespace nbox::testing
