// One rank of a host-runtime test, started by host_runtime_test.cc with fork/exec.
//
//   host_worker <scenario> <rank> <nranks> <unique id> [scenario arguments]
//
// Every scenario checks its results against reference_values.h and describes the first
// mismatches on stderr. Exit status: 0 all checks passed, 1 a check failed, 2 bad usage or an
// unexpected runtime error, 3 the error the scenario expected was reported.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bridge/include/nbox_host.h"
#include "tests/bridge/reference_values.h"

namespace {

using nbox::host::testing::InputInteger;
using nbox::host::testing::IsFloating;
using nbox::host::testing::IsSigned;
using nbox::host::testing::OpName;
using nbox::host::testing::ReduceReference;
using nbox::host::testing::SizeOf;
using nbox::host::testing::Store;
using nbox::host::testing::TypeName;

int g_rank = 0;
int g_nranks = 0;
int g_failures = 0;
// Under nbox-cosim with [realranks] payload = self, every emulated peer holds this rank's own
// data (bridge/README.md): each reference then takes every rank's input to be this rank's.
bool g_peers_hold_my_data = false;

void Fail(const std::string& what) {
  if (++g_failures <= 20) std::fprintf(stderr, "rank %d: FAIL %s\n", g_rank, what.c_str());
}

[[noreturn]] void Die(const char* call, nboxResult_t result, nboxComm_t comm) {
  std::fprintf(stderr, "rank %d: %s returned %d (%s): %s\n", g_rank, call, result,
               nboxGetErrorString(result), nboxGetLastError(comm));
  std::exit(2);
}

#define CHECK_OK(call, comm)                               \
  do {                                                     \
    const nboxResult_t result_ = (call);                   \
    if (result_ != nboxSuccess) Die(#call, result_, comm); \
  } while (0)

int64_t MonotonicNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// A buffer of `count` elements of `type`.
struct Buffer {
  nboxDataType_t type;
  std::vector<uint8_t> bytes;
  Buffer(nboxDataType_t t, size_t count, uint8_t fill = 0xA5)
      : type(t), bytes(count * SizeOf(t) + 1, fill) {}  // +1: never a zero-size vector
  void* at(size_t i) { return bytes.data() + i * SizeOf(type); }
  void Set(size_t i, int64_t value) { Store(type, value, at(i)); }
  // Compares element i with the integer `want` stored as `type`.
  bool Holds(size_t i, int64_t want) {
    uint8_t expected[8];
    Store(type, want, expected);
    return std::memcmp(at(i), expected, SizeOf(type)) == 0;
  }
};

std::string Label(const char* what, nboxDataType_t type, nboxRedOp_t op, size_t count,
                  bool in_place, int root = -1) {
  return std::string(what) + " " + TypeName(type) + " " + OpName(op) + " count " +
         std::to_string(count) + (in_place ? " in place" : "") +
         (root >= 0 ? " root " + std::to_string(root) : "");
}

int64_t Input(int rank, uint64_t i, uint64_t salt, nboxDataType_t type, nboxRedOp_t op) {
  if (g_peers_hold_my_data) rank = g_rank;
  return InputInteger(rank, i, salt, op, IsFloating(type), IsSigned(type));
}

int64_t ReducedInput(uint64_t i, uint64_t salt, nboxDataType_t type, nboxRedOp_t op) {
  std::vector<int64_t> values;
  for (int q = 0; q < g_nranks; ++q) values.push_back(Input(q, i, salt, type, op));
  return ReduceReference(type, op, values);
}

void Wait(nboxRequest_t request, nboxComm_t comm) {
  CHECK_OK(nboxWait(request), comm);
}

void CheckAllReduce(nboxComm_t comm, nboxDataType_t type, nboxRedOp_t op, size_t count,
                    bool in_place, uint64_t salt) {
  Buffer send(type, count), recv(type, count);
  for (size_t i = 0; i < count; ++i) send.Set(i, Input(g_rank, i, salt, type, op));
  Buffer& target = in_place ? send : recv;
  nboxRequest_t request = nullptr;
  CHECK_OK(nboxAllReduce(send.at(0), target.at(0), count, type, op, comm, &request), comm);
  Wait(request, comm);
  for (size_t i = 0; i < count; ++i) {
    if (!target.Holds(i, ReducedInput(i, salt, type, op))) {
      Fail(Label("AllReduce", type, op, count, in_place) + ": element " + std::to_string(i));
      return;
    }
  }
}

void CheckReduceScatter(nboxComm_t comm, nboxDataType_t type, nboxRedOp_t op, size_t count,
                        bool in_place, uint64_t salt) {
  Buffer send(type, count * g_nranks), recv(type, count);
  for (size_t j = 0; j < count * g_nranks; ++j) send.Set(j, Input(g_rank, j, salt, type, op));
  void* target = in_place ? send.at(g_rank * count) : recv.at(0);
  nboxRequest_t request = nullptr;
  CHECK_OK(nboxReduceScatter(send.at(0), target, count, type, op, comm, &request), comm);
  Wait(request, comm);
  Buffer& holder = in_place ? send : recv;
  const size_t base = in_place ? g_rank * count : 0;
  for (size_t i = 0; i < count; ++i) {
    if (!holder.Holds(base + i, ReducedInput(g_rank * count + i, salt, type, op))) {
      Fail(Label("ReduceScatter", type, op, count, in_place) + ": element " + std::to_string(i));
      return;
    }
  }
}

void CheckAllGather(nboxComm_t comm, nboxDataType_t type, size_t count, bool in_place,
                    uint64_t salt) {
  Buffer send(type, count), recv(type, count * g_nranks);
  for (size_t i = 0; i < count; ++i) send.Set(i, Input(g_rank, i, salt, type, nboxSum));
  const void* source = send.at(0);
  if (in_place) {
    for (size_t i = 0; i < count; ++i)
      recv.Set(g_rank * count + i, Input(g_rank, i, salt, type, nboxSum));
    source = recv.at(g_rank * count);
  }
  nboxRequest_t request = nullptr;
  CHECK_OK(nboxAllGather(source, recv.at(0), count, type, comm, &request), comm);
  Wait(request, comm);
  for (int q = 0; q < g_nranks; ++q) {
    for (size_t i = 0; i < count; ++i) {
      if (!recv.Holds(q * count + i, Input(q, i, salt, type, nboxSum))) {
        Fail(Label("AllGather", type, nboxSum, count, in_place) + ": block " + std::to_string(q) +
             " element " + std::to_string(i));
        return;
      }
    }
  }
}

void CheckBroadcast(nboxComm_t comm, nboxDataType_t type, size_t count, bool in_place, int root,
                    uint64_t salt) {
  Buffer send(type, count), recv(type, count);
  if (g_rank == root) {
    for (size_t i = 0; i < count; ++i) send.Set(i, Input(root, i, salt, type, nboxSum));
  } else if (g_peers_hold_my_data) {
    // An emulated root with payload = self sends what this rank's buffer already holds (the
    // broadcast's buffer is its output): a non-root starts with it there.
    for (size_t i = 0; i < count; ++i) {
      send.Set(i, Input(root, i, salt, type, nboxSum));
      recv.Set(i, Input(root, i, salt, type, nboxSum));
    }
  }
  Buffer& target = in_place ? send : recv;
  nboxRequest_t request = nullptr;
  CHECK_OK(nboxBroadcast(send.at(0), target.at(0), count, type, root, comm, &request), comm);
  Wait(request, comm);
  for (size_t i = 0; i < count; ++i) {
    if (!target.Holds(i, Input(root, i, salt, type, nboxSum))) {
      Fail(Label("Broadcast", type, nboxSum, count, in_place, root) + ": element " +
           std::to_string(i));
      return;
    }
  }
}

// Only the root's recvbuff is written; a non-root's stays as it was (its runtime works on a
// copy), which is checked too.
void CheckReduce(nboxComm_t comm, nboxDataType_t type, nboxRedOp_t op, size_t count, bool in_place,
                 int root, uint64_t salt) {
  Buffer send(type, count), recv(type, count);
  for (size_t i = 0; i < count; ++i) send.Set(i, Input(g_rank, i, salt, type, op));
  for (size_t i = 0; i < count; ++i) recv.Set(i, Input(g_rank, i, salt + 1, type, op));
  Buffer& target = in_place ? send : recv;
  nboxRequest_t request = nullptr;
  CHECK_OK(nboxReduce(send.at(0), target.at(0), count, type, op, root, comm, &request), comm);
  Wait(request, comm);
  for (size_t i = 0; i < count; ++i) {
    const bool ok = g_rank == root
                        ? target.Holds(i, ReducedInput(i, salt, type, op))
                        : send.Holds(i, Input(g_rank, i, salt, type, op)) &&
                              (in_place || recv.Holds(i, Input(g_rank, i, salt + 1, type, op)));
    if (!ok) {
      Fail(Label("Reduce", type, op, count, in_place, root) + ": element " + std::to_string(i));
      return;
    }
  }
}

// Rank r sends block d holding Input(r, d * count + i); block s of the result must hold rank s's
// block for this rank.
void CheckAllToAll(nboxComm_t comm, nboxDataType_t type, size_t count, uint64_t salt) {
  Buffer send(type, count * g_nranks), recv(type, count * g_nranks);
  for (size_t j = 0; j < count * g_nranks; ++j) send.Set(j, Input(g_rank, j, salt, type, nboxSum));
  nboxRequest_t request = nullptr;
  CHECK_OK(nboxAllToAll(send.at(0), recv.at(0), count, type, comm, &request), comm);
  Wait(request, comm);
  for (int s = 0; s < g_nranks; ++s) {
    for (size_t i = 0; i < count; ++i) {
      if (!recv.Holds(s * count + i, Input(s, g_rank * count + i, salt, type, nboxSum))) {
        Fail(Label("AllToAll", type, nboxSum, count, false) + ": block " + std::to_string(s) +
             " element " + std::to_string(i));
        return;
      }
    }
  }
}

const nboxDataType_t kAllTypes[] = {nboxInt8,    nboxUint8,   nboxInt32,   nboxUint32,
                                    nboxInt64,   nboxUint64,  nboxFloat16, nboxFloat32,
                                    nboxFloat64, nboxBfloat16};
const nboxRedOp_t kAllOps[] = {nboxSum, nboxProd, nboxMax, nboxMin};

// Every collective; every type x op for the reductions; sizes from empty to several chunks;
// in place and not; broadcast and reduce to the first, middle and last rank.
void ScenarioCollectives(nboxComm_t comm, size_t large) {
  uint64_t salt = 1;
  for (nboxDataType_t type : kAllTypes) {
    for (nboxRedOp_t op : kAllOps) {
      CheckAllReduce(comm, type, op, 333, false, salt++);
      CheckReduceScatter(comm, type, op, 111, false, salt++);
      CheckReduce(comm, type, op, 149, false, g_nranks / 2, salt++);
      salt++;  // CheckReduce uses salt + 1 too
    }
    CheckAllGather(comm, type, 97, false, salt++);
    CheckBroadcast(comm, type, 301, false, g_nranks - 1, salt++);
    CheckAllToAll(comm, type, 53, salt++);
  }
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, large}) {
    for (bool in_place : {false, true}) {
      CheckAllReduce(comm, nboxFloat32, nboxSum, count, in_place, salt++);
      CheckReduceScatter(comm, nboxInt32, nboxMax, count, in_place, salt++);
      CheckAllGather(comm, nboxFloat16, count, in_place, salt++);
      CheckBroadcast(comm, nboxFloat64, count, in_place, 0, salt++);
      CheckReduce(comm, nboxFloat32, nboxSum, count, in_place, g_nranks - 1, salt++);
      salt++;
      if (!in_place) CheckAllToAll(comm, nboxInt32, count, salt++);
    }
  }
  CheckAllReduce(comm, nboxInt64, nboxSum, large + 3, false, salt++);
}

// Element i of the message rank `from` sends to rank `to`.
int64_t P2pValue(int from, int to, size_t i) {
  return static_cast<int64_t>(nbox::host::testing::Mix(from * 1000003 + to * 7919 + i) % 200001);
}

// Point to point: a ring shift and an all-to-all in groups (every rank sends before it
// receives), a chain outside any group, and a multi-chunk message.
void ScenarioPointToPoint(nboxComm_t comm, size_t large) {
  const int next = (g_rank + 1) % g_nranks;
  const int prev = (g_rank + g_nranks - 1) % g_nranks;
  {
    Buffer out(nboxInt32, large), in(nboxInt32, large);
    for (size_t i = 0; i < large; ++i) out.Set(i, P2pValue(g_rank, next, i));
    CHECK_OK(nboxGroupStart(), comm);
    CHECK_OK(nboxSend(out.at(0), large, nboxInt32, next, comm, nullptr), comm);
    CHECK_OK(nboxRecv(in.at(0), large, nboxInt32, prev, comm, nullptr), comm);
    CHECK_OK(nboxGroupEnd(), comm);
    CHECK_OK(nboxCommSynchronize(comm), comm);
    for (size_t i = 0; i < large; ++i) {
      if (!in.Holds(i, P2pValue(prev, g_rank, i))) {
        Fail("ring shift: element " + std::to_string(i));
        break;
      }
    }
  }
  {
    const size_t count = 777;
    std::vector<Buffer> out, in;
    for (int q = 0; q < g_nranks; ++q) {
      out.emplace_back(nboxUint32, count);
      in.emplace_back(nboxUint32, count);
      for (size_t i = 0; i < count; ++i) out[q].Set(i, P2pValue(g_rank, q, i));
    }
    std::vector<nboxRequest_t> requests;
    CHECK_OK(nboxGroupStart(), comm);
    for (int q = 0; q < g_nranks; ++q) {
      if (q == g_rank) continue;
      nboxRequest_t request = nullptr;
      CHECK_OK(nboxSend(out[q].at(0), count, nboxUint32, q, comm, &request), comm);
      requests.push_back(request);
      CHECK_OK(nboxRecv(in[q].at(0), count, nboxUint32, q, comm, &request), comm);
      requests.push_back(request);
    }
    // Waiting before the group is launched is a usage error, and leaves the request usable.
    if (!requests.empty() && nboxWait(requests[0]) != nboxInvalidUsage) {
      Fail("nboxWait inside an open group was not refused");
    }
    CHECK_OK(nboxGroupEnd(), comm);
    for (nboxRequest_t request : requests) Wait(request, comm);
    for (int q = 0; q < g_nranks; ++q) {
      if (q == g_rank) continue;
      for (size_t i = 0; i < count; ++i) {
        if (!in[q].Holds(i, P2pValue(q, g_rank, i))) {
          Fail("all-to-all from rank " + std::to_string(q) + ": element " + std::to_string(i));
          break;
        }
      }
    }
  }
  {
    // A chain 0 -> 1 -> ... -> W-1, each hop its own operation.
    const size_t count = 5000;
    Buffer data(nboxFloat64, count);
    if (g_rank == 0) {
      for (size_t i = 0; i < count; ++i) data.Set(i, P2pValue(0, 0, i));
    } else {
      CHECK_OK(nboxRecv(data.at(0), count, nboxFloat64, g_rank - 1, comm, nullptr), comm);
    }
    if (g_rank + 1 < g_nranks) {
      CHECK_OK(nboxSend(data.at(0), count, nboxFloat64, g_rank + 1, comm, nullptr), comm);
    }
    CHECK_OK(nboxCommSynchronize(comm), comm);
    for (size_t i = 0; i < count; ++i) {
      if (!data.Holds(i, P2pValue(0, 0, i))) {
        Fail("chain: element " + std::to_string(i));
        break;
      }
    }
  }
}

// Asynchronous calls: several in flight and waited for out of order, nboxTest polling, and a
// group that mixes collectives with point-to-point traffic.
// What host_runtime_test's recording test expects in the trace (NBOX_PROFILE_TRACE): five
// collectives of known sizes, and an all-to-all and a send/recv ring it leaves out.
void ScenarioRecord(nboxComm_t comm) {
  CheckAllReduce(comm, nboxFloat32, nboxSum, 1000, false, 1);
  CheckAllToAll(comm, nboxInt32, 5, 2);
  CheckAllGather(comm, nboxInt32, 10, false, 3);
  CheckReduceScatter(comm, nboxFloat16, nboxSum, 7, false, 4);
  CheckBroadcast(comm, nboxFloat64, 5, false, g_nranks - 1, 5);
  CheckReduce(comm, nboxInt8, nboxMax, 9, false, 1 % g_nranks, 6);
  Buffer out(nboxInt32, 100), in(nboxInt32, 100);
  CHECK_OK(nboxGroupStart(), comm);
  CHECK_OK(nboxSend(out.at(0), 100, nboxInt32, (g_rank + 1) % g_nranks, comm, nullptr), comm);
  CHECK_OK(nboxRecv(in.at(0), 100, nboxInt32, (g_rank + g_nranks - 1) % g_nranks, comm, nullptr),
           comm);
  CHECK_OK(nboxGroupEnd(), comm);
  CHECK_OK(nboxCommSynchronize(comm), comm);
  CheckAllReduce(comm, nboxFloat32, nboxSum, 1000, false, 7);
}

// Checks that `group` has this rank at its place among `members` (parent ranks, in the group's
// order), then runs an all-gather of the parent rank and an all-reduce of parent rank + 1 and
// checks both, `of(m)` being the parent rank whose input member m holds. Returns the rank in the
// group, or -1 when the group is not the one expected (then destroyed).
int CheckGroup(nboxComm_t group, const std::vector<int>& members, const std::string& what,
               const std::function<int(int)>& of) {
  int size = 0, rank = -1;
  CHECK_OK(nboxCommCount(group, &size), group);
  CHECK_OK(nboxCommUserRank(group, &rank), group);
  const int want_rank =
      static_cast<int>(std::find(members.begin(), members.end(), g_rank) - members.begin());
  if (size != static_cast<int>(members.size()) || rank != want_rank) {
    Fail(what + ": rank " + std::to_string(rank) + " of " + std::to_string(size) + ", expected " +
         std::to_string(want_rank) + " of " + std::to_string(members.size()));
    CHECK_OK(nboxCommDestroy(group), nullptr);
    return -1;
  }
  std::vector<int32_t> order(members.size(), -1);
  const int32_t me = g_rank;
  CHECK_OK(nboxAllGather(&me, order.data(), 1, nboxInt32, group, nullptr), group);
  int64_t sum = g_rank + 1;
  CHECK_OK(nboxAllReduce(&sum, &sum, 1, nboxInt64, nboxSum, group, nullptr), group);
  CHECK_OK(nboxCommSynchronize(group), group);
  int64_t want_sum = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    want_sum += of(members[i]) + 1;
    if (order[i] != of(members[i])) {
      Fail(what + ": member " + std::to_string(i) + " is parent rank " + std::to_string(order[i]) +
           ", expected " + std::to_string(of(members[i])));
    }
  }
  if (sum != want_sum) {
    Fail(what + ": all-reduce gave " + std::to_string(sum) + ", expected " +
         std::to_string(want_sum));
  }
  return rank;
}

// nboxCommSplit as NCCL's: the last rank takes no color (when there are three or more); the
// others split by parity, ranked by descending parent rank (key = -rank). In each group, an
// all-gather of the parent ranks shows the order, and an all-reduce of parent rank + 1 gives
// the group's sum; then a split of the group in two halves by key alone runs one more
// all-reduce. Every figure is worked out here from the parent ranks.
void ScenarioSplit(nboxComm_t comm) {
  const bool no_color = g_nranks >= 3 && g_rank == g_nranks - 1;
  const int color = no_color ? NBOX_SPLIT_NOCOLOR : g_rank % 2;
  nboxComm_t group = nullptr;
  CHECK_OK(nboxCommSplit(comm, color, -g_rank, &group), comm);
  if (no_color) {
    if (group != nullptr) Fail("a rank without color got a communicator");
    return;
  }
  std::vector<int> members;  // the parent ranks of my color, descending
  for (int r = g_nranks - 1; r >= 0; --r) {
    if (r % 2 == color && !(g_nranks >= 3 && r == g_nranks - 1)) members.push_back(r);
  }
  const int rank = CheckGroup(group, members, "split", [](int member) { return member; });
  if (rank < 0) return;
  const int size = static_cast<int>(members.size());
  // A split of the split: the first half of the group (by its ranks) and the second.
  const int half = size / 2;
  nboxComm_t part = nullptr;
  CHECK_OK(nboxCommSplit(group, rank < half ? 0 : 1, rank, &part), group);
  int64_t part_sum = g_rank + 1;
  CHECK_OK(nboxAllReduce(&part_sum, &part_sum, 1, nboxInt64, nboxSum, part, nullptr), part);
  CHECK_OK(nboxCommSynchronize(part), part);
  int64_t want_part = 0;
  for (int i = rank < half ? 0 : half; i < (rank < half ? half : size); ++i) {
    want_part += members[static_cast<size_t>(i)] + 1;
  }
  if (part_sum != want_part) {
    Fail("split of a split: all-reduce gave " + std::to_string(part_sum) + ", expected " +
         std::to_string(want_part));
  }
  CHECK_OK(nboxCommDestroy(part), nullptr);
  CHECK_OK(nboxCommDestroy(group), nullptr);
}

// nboxCommInitGroup, torch's new_group shape: only the members call. First an all-reduce of
// rank + 1 on the parent; then the odd parent ranks form a group in descending order, the even
// ones in ascending order (a lone rank's group has one member); an all-gather of the parent
// ranks shows each group's order, an all-reduce of parent rank + 1 its sum, and a group of the
// group's first two members (as ranks of the group) one more all-reduce. Every figure is worked
// out here from the parent ranks; where the peers hold this rank's data (a real rank of
// nbox-cosim with payload = self), from this rank's alone.
void ScenarioGroup(nboxComm_t comm) {
  // What member `rank` contributes, as this rank sees it.
  auto of = [](int rank) { return g_peers_hold_my_data ? g_rank : rank; };
  int64_t world_sum = g_rank + 1;
  CHECK_OK(nboxAllReduce(&world_sum, &world_sum, 1, nboxInt64, nboxSum, comm, nullptr), comm);
  CHECK_OK(nboxCommSynchronize(comm), comm);
  int64_t want_world = 0;
  for (int r = 0; r < g_nranks; ++r) want_world += of(r) + 1;
  if (world_sum != want_world) {
    Fail("group: the parent's all-reduce gave " + std::to_string(world_sum) + ", expected " +
         std::to_string(want_world));
  }
  std::vector<int> members;
  if (g_rank % 2 == 1) {
    for (int r = g_nranks - 1; r >= 0; --r) {
      if (r % 2 == 1) members.push_back(r);
    }
  } else {
    for (int r = 0; r < g_nranks; r += 2) members.push_back(r);
  }
  nboxComm_t group = nullptr;
  CHECK_OK(nboxCommInitGroup(comm, static_cast<int>(members.size()), members.data(), &group), comm);
  const int rank = CheckGroup(group, members, "group", of);
  if (rank < 0) return;
  const int size = static_cast<int>(members.size());
  if (size >= 2 && rank < 2) {
    const int pair[2] = {1, 0};  // the group's ranks 1 and 0, in that order
    nboxComm_t part = nullptr;
    CHECK_OK(nboxCommInitGroup(group, 2, pair, &part), group);
    int part_rank = -1;
    CHECK_OK(nboxCommUserRank(part, &part_rank), part);
    int64_t part_sum = g_rank + 1;
    CHECK_OK(nboxAllReduce(&part_sum, &part_sum, 1, nboxInt64, nboxSum, part, nullptr), part);
    CHECK_OK(nboxCommSynchronize(part), part);
    const int64_t want_part = of(members[0]) + of(members[1]) + 2;
    if (part_rank != 1 - rank || part_sum != want_part) {
      Fail("group of a group: rank " + std::to_string(part_rank) + ", all-reduce " +
           std::to_string(part_sum) + ", expected rank " + std::to_string(1 - rank) + " and " +
           std::to_string(want_part));
    }
    CHECK_OK(nboxCommDestroy(part), nullptr);
  }
  CHECK_OK(nboxCommDestroy(group), nullptr);
}

// A pipeline's point-to-point pattern, each transfer its own blocking call: forward, rank r
// receives `count` int32 from r - 1 and sends to r + 1; backward, it receives from r + 1 and
// sends to r - 1. A received buffer holds its sender's values (P2pValue); from an emulated peer
// under payload = self, what this rank's buffer held before (its peers hold its own data).
void ScenarioPipe(nboxComm_t comm, size_t count) {
  auto receive = [&](int from, const char* pass) {
    Buffer in(nboxInt32, count);
    for (size_t i = 0; i < count; ++i) in.Set(i, P2pValue(-1, g_rank, i));  // as before
    CHECK_OK(nboxRecv(in.at(0), count, nboxInt32, from, comm, nullptr), comm);
    CHECK_OK(nboxCommSynchronize(comm), comm);
    const int sender = g_peers_hold_my_data ? -1 : from;
    for (size_t i = 0; i < count; ++i) {
      if (!in.Holds(i, P2pValue(sender, g_rank, i))) {
        Fail(std::string(pass) + " from rank " + std::to_string(from) + ": element " +
             std::to_string(i));
        break;
      }
    }
  };
  auto send = [&](int to) {
    Buffer out(nboxInt32, count);
    for (size_t i = 0; i < count; ++i) out.Set(i, P2pValue(g_rank, to, i));
    CHECK_OK(nboxSend(out.at(0), count, nboxInt32, to, comm, nullptr), comm);
    CHECK_OK(nboxCommSynchronize(comm), comm);
  };
  if (g_rank > 0) receive(g_rank - 1, "forward");
  if (g_rank < g_nranks - 1) send(g_rank + 1);
  if (g_rank < g_nranks - 1) receive(g_rank + 1, "backward");
  if (g_rank > 0) send(g_rank - 1);
}

void ScenarioAsync(nboxComm_t comm) {
  const size_t count = 20000;
  const int kOps = 4;
  std::vector<Buffer> buffers;
  for (int k = 0; k < kOps; ++k) {
    buffers.emplace_back(nboxFloat32, count);
    for (size_t i = 0; i < count; ++i)
      buffers[k].Set(i, Input(g_rank, i, 900 + k, nboxFloat32, nboxSum));
  }
  std::vector<nboxRequest_t> requests(kOps);
  for (int k = 0; k < kOps; ++k) {
    CHECK_OK(nboxAllReduce(buffers[k].at(0), buffers[k].at(0), count, nboxFloat32, nboxSum, comm,
                           &requests[k]),
             comm);
  }
  Wait(requests[kOps - 1], comm);  // the last one done means all earlier ones are
  for (int k = 0; k < kOps - 1; ++k) {
    int done = 0;
    CHECK_OK(nboxTest(requests[k], &done), comm);
    if (!done) {
      Fail("operation " + std::to_string(k) + " not done after a later one completed");
      Wait(requests[k], comm);
    }
  }
  for (int k = 0; k < kOps; ++k) {
    for (size_t i = 0; i < count; ++i) {
      if (!buffers[k].Holds(i, ReducedInput(i, 900 + k, nboxFloat32, nboxSum))) {
        Fail("async AllReduce " + std::to_string(k) + ": element " + std::to_string(i));
        break;
      }
    }
  }

  // One group: an all-reduce, a ring shift and an all-gather, progressing together.
  const int next = (g_rank + 1) % g_nranks;
  const int prev = (g_rank + g_nranks - 1) % g_nranks;
  Buffer reduce(nboxInt64, count), shift_out(nboxInt8, count), shift_in(nboxInt8, count);
  Buffer gather_in(nboxUint8, 64), gather_out(nboxUint8, 64 * g_nranks);
  for (size_t i = 0; i < count; ++i) {
    reduce.Set(i, Input(g_rank, i, 77, nboxInt64, nboxMin));
    shift_out.Set(i, P2pValue(g_rank, next, i));
  }
  for (size_t i = 0; i < 64; ++i) gather_in.Set(i, Input(g_rank, i, 78, nboxUint8, nboxSum));
  nboxRequest_t last = nullptr;
  CHECK_OK(nboxGroupStart(), comm);
  CHECK_OK(nboxAllReduce(reduce.at(0), reduce.at(0), count, nboxInt64, nboxMin, comm, nullptr),
           comm);
  if (g_nranks > 1) {
    CHECK_OK(nboxSend(shift_out.at(0), count, nboxInt8, next, comm, nullptr), comm);
    CHECK_OK(nboxRecv(shift_in.at(0), count, nboxInt8, prev, comm, nullptr), comm);
  }
  CHECK_OK(nboxAllGather(gather_in.at(0), gather_out.at(0), 64, nboxUint8, comm, &last), comm);
  CHECK_OK(nboxGroupEnd(), comm);
  int done = 0;
  while (!done) {
    CHECK_OK(nboxTest(last, &done), comm);
    if (!done) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  for (size_t i = 0; i < count; ++i) {
    if (!reduce.Holds(i, ReducedInput(i, 77, nboxInt64, nboxMin))) {
      Fail("grouped AllReduce: element " + std::to_string(i));
      break;
    }
    if (g_nranks > 1 && !shift_in.Holds(i, P2pValue(prev, g_rank, i))) {
      Fail("grouped ring shift: element " + std::to_string(i));
      break;
    }
  }
  for (int q = 0; q < g_nranks; ++q) {
    for (size_t i = 0; i < 64; ++i) {
      if (!gather_out.Holds(q * 64 + i, Input(q, i, 78, nboxUint8, nboxSum))) {
        Fail("grouped AllGather: block " + std::to_string(q));
        q = g_nranks;
        break;
      }
    }
  }
}

// A loop of all-reduces in which rank `victim` dies (mode "kill": SIGKILL) or aborts its
// communicator (mode "abort") at iteration 3. The victim prints EVENT_NS; every other rank
// must get an error, prints DETECTED_NS and exits 3.
int ScenarioDie(nboxComm_t comm, int victim, const std::string& mode) {
  const size_t count = 1 << 18;
  Buffer data(nboxFloat32, count);
  for (int iteration = 0; iteration < 1000; ++iteration) {
    if (g_rank == victim && iteration == 3) {
      std::printf("EVENT_NS %lld\n", static_cast<long long>(MonotonicNs()));
      std::fflush(stdout);
      if (mode == "kill") kill(getpid(), SIGKILL);
      nboxCommAbort(comm);
      // Stay alive: the others must learn of the abort itself, not of this process's end.
      std::this_thread::sleep_for(std::chrono::seconds(2));
      return 0;
    }
    nboxRequest_t request = nullptr;
    nboxResult_t result =
        nboxAllReduce(data.at(0), data.at(0), count, nboxFloat32, nboxSum, comm, &request);
    if (result == nboxSuccess) result = nboxWait(request);
    if (result != nboxSuccess) {
      std::printf("DETECTED_NS %lld\n", static_cast<long long>(MonotonicNs()));
      std::printf("ERROR %s\n", nboxGetLastError(comm));
      std::fflush(stdout);
      // Every later call fails at once.
      if (nboxAllReduce(data.at(0), data.at(0), 1, nboxFloat32, nboxSum, comm, &request) ==
              nboxSuccess &&
          nboxWait(request) == nboxSuccess) {
        Fail("an all-reduce succeeded on a failed communicator");
        return 1;
      }
      nboxCommDestroy(comm);
      return 3;
    }
  }
  Fail("no error although rank " + std::to_string(victim) + " went away");
  return 1;
}

// The victim kills itself after one all-reduce; the others make no call but poll
// nboxCommGetAsyncError, which must turn to an error while they are idle.
int ScenarioDieWhileIdle(nboxComm_t comm, int victim) {
  Buffer data(nboxFloat32, 1000);
  CHECK_OK(nboxAllReduce(data.at(0), data.at(0), 1000, nboxFloat32, nboxSum, comm, nullptr), comm);
  CHECK_OK(nboxCommSynchronize(comm), comm);
  if (g_rank == victim) {
    std::printf("EVENT_NS %lld\n", static_cast<long long>(MonotonicNs()));
    std::fflush(stdout);
    kill(getpid(), SIGKILL);
  }
  for (int polls = 0; polls < 1000; ++polls) {
    nboxResult_t state = nboxSuccess;
    CHECK_OK(nboxCommGetAsyncError(comm, &state), comm);
    if (state != nboxSuccess) {
      std::printf("DETECTED_NS %lld\n", static_cast<long long>(MonotonicNs()));
      std::printf("ERROR %s\n", nboxGetLastError(comm));
      std::fflush(stdout);
      nboxCommDestroy(comm);
      return 3;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Fail("no asynchronous error although rank " + std::to_string(victim) + " went away");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || (std::string(argv[2]) != "env" && argc < 5)) {
    std::fprintf(stderr,
                 "usage: %s <scenario> <rank> <nranks> <unique id> [args]\n"
                 "       %s <scenario> env self|real [args]  (a real rank of nbox-cosim: "
                 "rank, size and id from NBOX_*; self: its peers hold its own data)\n",
                 argv[0], argv[0]);
    return 2;
  }
  const std::string scenario = argv[1];
  const bool from_env = std::string(argv[2]) == "env";
  // The scenario's own arguments: args[0], args[1], ...
  const std::vector<std::string> args(argv + (from_env ? 4 : 5), argv + argc);
  nboxComm_t comm = nullptr;
  nboxResult_t init = nboxSuccess;
  if (from_env) {
    g_peers_hold_my_data = std::string(argv[3]) == "self";
    init = nboxCommInitFromEnv(&comm);
    if (init == nboxSuccess) {
      CHECK_OK(nboxCommUserRank(comm, &g_rank), comm);
      CHECK_OK(nboxCommCount(comm, &g_nranks), comm);
    }
  } else {
    g_rank = std::atoi(argv[2]);
    g_nranks = std::atoi(argv[3]);
    nboxUniqueId id;
    CHECK_OK(nboxUniqueIdFromString(argv[4], &id), nullptr);
    init = nboxCommInitRank(&comm, g_nranks, id, g_rank);
  }
  if (scenario == "join_timeout") {
    std::printf("INIT %d %s\n", init, nboxGetLastError(nullptr));
    return init == nboxSuccess ? 1 : 3;
  }
  if (init != nboxSuccess) Die("nboxCommInitRank", init, nullptr);
  int count = 0, rank = -1;
  CHECK_OK(nboxCommCount(comm, &count), comm);
  CHECK_OK(nboxCommUserRank(comm, &rank), comm);
  if (count != g_nranks || rank != g_rank) Fail("nboxCommCount/nboxCommUserRank");

  const size_t large = !args.empty() ? std::strtoul(args[0].c_str(), nullptr, 10) : 100000;
  if (scenario == "collectives") {
    ScenarioCollectives(comm, large);
  } else if (scenario == "p2p") {
    ScenarioPointToPoint(comm, large);
  } else if (scenario == "async") {
    ScenarioAsync(comm);
  } else if (scenario == "split") {
    ScenarioSplit(comm);
  } else if (scenario == "group") {
    ScenarioGroup(comm);
  } else if (scenario == "pipe") {
    ScenarioPipe(comm, large);
  } else if (scenario == "record") {
    ScenarioRecord(comm);
  } else if (scenario == "die_idle") {
    if (args.empty()) return 2;
    return ScenarioDieWhileIdle(comm, std::atoi(args[0].c_str()));
  } else if (scenario == "die") {
    if (args.size() < 2) return 2;
    return ScenarioDie(comm, std::atoi(args[0].c_str()), args[1]);
  } else {
    std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
    return 2;
  }
  CHECK_OK(nboxCommDestroy(comm), nullptr);
  return g_failures == 0 ? 0 : 1;
}
