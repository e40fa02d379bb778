// The C API of nbox_host.h: argument checks, the translation of each call into Parts (the
// schedule and the copies around it), groups, requests and error reporting.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bridge/host/bootstrap_root.h"
#include "bridge/host/communicator.h"
#include "bridge/host/config.h"
#include "bridge/host/data_types.h"
#include "bridge/host/host_error.h"
#include "bridge/host/unique_id.h"
#include "bridge/include/nbox_host.h"
#include "collectives/group_servers.h"
#include "collectives/point_to_point.h"

struct nboxComm {
  std::unique_ptr<nbox::host::Communicator> impl;
};

struct nboxRequest {
  std::shared_ptr<nbox::host::Operation> operation;
};

namespace nbox::host {
namespace {

thread_local std::string t_last_error;

nboxResult_t Failed(nboxResult_t code, const std::string& message) {
  t_last_error = message;
  return code;
}

nboxResult_t Failed(const HostError& error) {
  return Failed(error.code(), error.what());
}

// Calls of a group, per communicator in the order the communicators were first used.
struct GroupState {
  int depth = 0;
  std::vector<std::pair<nboxComm*, std::shared_ptr<Operation>>> operations;
};
thread_local GroupState t_group;

void CheckComm(const nboxComm* comm, const char* call) {
  if (comm == nullptr || comm->impl == nullptr) {
    throw HostError(nboxInvalidArgument, std::string(call) + ": comm is NULL");
  }
}

void CheckType(nboxDataType_t type, const char* call) {
  if (!IsValid(type)) {
    throw HostError(nboxInvalidArgument, std::string(call) + ": unknown datatype " +
                                             std::to_string(static_cast<int>(type)));
  }
}

void CheckOp(nboxRedOp_t op, const char* call) {
  if (!IsValid(op)) {
    throw HostError(nboxInvalidArgument, std::string(call) + ": unknown reduction op " +
                                             std::to_string(static_cast<int>(op)));
  }
}

void CheckRoot(int root, const nbox::host::Communicator& impl, const char* call) {
  if (root < 0 || root >= impl.nranks()) {
    throw HostError(nboxInvalidArgument, std::string(call) + ": root " + std::to_string(root) +
                                             " is not in 0.." + std::to_string(impl.nranks() - 1));
  }
}

void CheckBuffer(const void* buffer, uint64_t bytes, const char* name, const char* call) {
  if (buffer == nullptr && bytes > 0) {
    throw HostError(nboxInvalidArgument, std::string(call) + ": " + name + " is NULL");
  }
}

// count * multiplier * element bytes, refusing overflow.
uint64_t Bytes(size_t count, uint64_t multiplier, nboxDataType_t type, const char* call) {
  const uint64_t element = ElementBytes(type);
  if (count != 0 && multiplier > std::numeric_limits<uint64_t>::max() / element / count) {
    throw HostError(nboxInvalidArgument,
                    std::string(call) + ": count " + std::to_string(count) + " is too large");
  }
  return static_cast<uint64_t>(count) * multiplier * element;
}

std::string Describe(const char* what, size_t count, nboxDataType_t type) {
  return std::string(what) + " of " + std::to_string(count) + " " + ToString(type);
}

coll::CollectiveSpec SpecFor(const Communicator& comm, coll::CollectiveOp op, uint64_t bytes,
                             nboxDataType_t type) {
  return coll::SpecFromSettings(comm.collectives(), op, bytes, ElementBytes(type), comm.nranks(),
                                comm.group_ranks_per_server());
}

// A point-to-point transfer as a schedule: one message of the whole buffer on the
// point-to-point lane, built as an emulated rank builds its transfers
// (collectives/point_to_point.h), so that a real pipeline stage and its emulated neighbour
// agree message for message. A transfer of 0 bytes has no message.
std::shared_ptr<const coll::RankSchedule> PointToPointSchedule(const Communicator& comm,
                                                               coll::StepKind kind, int peer,
                                                               uint64_t bytes) {
  if (bytes == 0) {
    auto schedule = std::make_shared<coll::RankSchedule>();
    schedule->rank = comm.rank();
    return schedule;
  }
  return std::make_shared<const coll::RankSchedule>(coll::BuildTransfersRankSchedule(
      comm.rank(), comm.nranks(), {coll::Transfer{kind, peer, bytes}}, comm.channels()));
}

// What nboxNetExt_v2.reportOp gets for a call (`redop` -1: the call does not reduce).
nboxOpReport Report(int op, nboxDataType_t type, int redop, size_t count, uint64_t bytes,
                    int root) {
  nboxOpReport report{};
  report.kind = NBOX_OP_REPORT_COLLECTIVE;
  report.op = op;
  report.dtype = static_cast<int>(type);
  report.redop = redop < 0 ? 0 : redop;
  report.root = root;
  report.count = count;
  report.bytes = bytes;
  return report;
}

// Runs the call now, or adds it to the open group.
void Submit(nboxComm* comm, Part part, nboxRequest_t* request) {
  comm->impl->RecordLaunch(part);
  std::shared_ptr<Operation> operation;
  if (t_group.depth > 0) {
    for (auto& [group_comm, group_operation] : t_group.operations) {
      if (group_comm == comm) operation = group_operation;
    }
    if (operation == nullptr) {
      operation = std::make_shared<Operation>();
      t_group.operations.emplace_back(comm, operation);
    }
    operation->parts.push_back(std::move(part));
  } else {
    operation = std::make_shared<Operation>();
    operation->parts.push_back(std::move(part));
    comm->impl->Enqueue(operation);
  }
  if (request != nullptr) *request = new nboxRequest{operation};
}

// Wraps a call: HostError becomes the return code and this thread's last error.
template <typename Body>
nboxResult_t Guard(Body body) {
  try {
    body();
    return nboxSuccess;
  } catch (const HostError& error) {
    return Failed(error);
  } catch (const std::bad_alloc&) {
    return Failed(nboxSystemError, "out of memory");
  } catch (const std::exception& error) {
    return Failed(nboxInternalError, error.what());
  }
}

std::string ReadIdFile(const std::string& path, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::ifstream file(path);
    std::string text;
    if (file >> text && text.size() == 2 * NBOX_UNIQUE_ID_BYTES) return text;
    if (std::chrono::steady_clock::now() > deadline) {
      throw HostError(nboxSystemError, "NBOX_UNIQUE_ID_FILE " + path + ": no unique id after " +
                                           std::to_string(timeout.count()) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void WriteIdFile(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream file(temporary);
    file << text << "\n";
    if (!file) throw HostError(nboxSystemError, "NBOX_UNIQUE_ID_FILE: cannot write " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw HostError(nboxSystemError,
                    "NBOX_UNIQUE_ID_FILE: cannot rename " + temporary + " to " + path);
  }
}

}  // namespace
}  // namespace nbox::host

using nbox::host::Bytes;
using nbox::host::CheckBuffer;
using nbox::host::CheckComm;
using nbox::host::CheckOp;
using nbox::host::CheckRoot;
using nbox::host::CheckType;
using nbox::host::Describe;
using nbox::host::Guard;
using nbox::host::HostError;
using nbox::host::Part;
using nbox::host::Report;
using nbox::host::SpecFor;
using nbox::host::Submit;
namespace coll = nbox::coll;

extern "C" {

nboxResult_t nboxGetUniqueId(nboxUniqueId* id) {
  return Guard([&] {
    if (id == nullptr) throw HostError(nboxInvalidArgument, "nboxGetUniqueId: id is NULL");
    std::string variable;
    const std::string address = nbox::host::BootstrapAddressSetting(&variable);
    const long timeout = nbox::host::IntFromEnvironment(
        "NBOX_BOOTSTRAP_TIMEOUT_S", nbox::host::kDefaultBootstrapTimeoutSeconds, 1, 24 * 3600);
    *id = nbox::host::EncodeUniqueId(
        nbox::host::StartBootstrapRoot(address, variable, std::chrono::seconds(timeout)));
  });
}

nboxResult_t nboxUniqueIdToString(const nboxUniqueId* id, char out[NBOX_UNIQUE_ID_STRING_BYTES]) {
  return Guard([&] {
    if (id == nullptr || out == nullptr) {
      throw HostError(nboxInvalidArgument, "nboxUniqueIdToString: NULL argument");
    }
    const std::string text = nbox::host::UniqueIdToHex(*id);
    std::memcpy(out, text.c_str(), text.size() + 1);
  });
}

nboxResult_t nboxUniqueIdFromString(const char* text, nboxUniqueId* id) {
  return Guard([&] {
    if (text == nullptr || id == nullptr) {
      throw HostError(nboxInvalidArgument, "nboxUniqueIdFromString: NULL argument");
    }
    *id = nbox::host::UniqueIdFromHex(text);
  });
}

nboxResult_t nboxCommInitRank(nboxComm_t* comm, int nranks, nboxUniqueId id, int rank) {
  return Guard([&] {
    if (comm == nullptr) throw HostError(nboxInvalidArgument, "nboxCommInitRank: comm is NULL");
    *comm = nullptr;
    auto impl = nbox::host::Communicator::Create(nranks, id, rank);
    *comm = new nboxComm{std::move(impl)};
  });
}

nboxResult_t nboxCommInitFromEnv(nboxComm_t* comm) {
  return Guard([&] {
    if (comm == nullptr) throw HostError(nboxInvalidArgument, "nboxCommInitFromEnv: comm is NULL");
    *comm = nullptr;
    const long world = nbox::host::IntFromEnvironment("NBOX_WORLD_SIZE", -1, 1, 1 << 20);
    const long rank = nbox::host::IntFromEnvironment("NBOX_RANK", -1, 0, 1 << 20);
    if (world < 0 || rank < 0) {
      throw HostError(nboxInvalidArgument,
                      "nboxCommInitFromEnv: NBOX_RANK and NBOX_WORLD_SIZE must be set");
    }
    const nbox::host::RuntimeConfig config = nbox::host::ConfigFromEnvironment();
    nboxUniqueId id;
    const std::string text = nbox::bridge::EnvOr("NBOX_UNIQUE_ID", "");
    const std::string path = nbox::bridge::EnvOr("NBOX_UNIQUE_ID_FILE", "");
    if (!text.empty()) {
      id = nbox::host::UniqueIdFromHex(text);
    } else if (path.empty()) {
      throw HostError(nboxInvalidArgument,
                      "nboxCommInitFromEnv: set NBOX_UNIQUE_ID or NBOX_UNIQUE_ID_FILE");
    } else if (rank == 0) {
      const nboxResult_t result = nboxGetUniqueId(&id);
      if (result != nboxSuccess) throw HostError(result, nbox::host::t_last_error);
      nbox::host::WriteIdFile(path, nbox::host::UniqueIdToHex(id));
    } else {
      id = nbox::host::UniqueIdFromHex(nbox::host::ReadIdFile(path, config.bootstrap_timeout));
    }
    auto impl =
        nbox::host::Communicator::Create(static_cast<int>(world), id, static_cast<int>(rank));
    *comm = new nboxComm{std::move(impl)};
  });
}

nboxResult_t nboxCommSplit(nboxComm_t comm, int color, int key, nboxComm_t* newcomm) {
  constexpr const char* kCall = "nboxCommSplit";
  return Guard([&] {
    CheckComm(comm, kCall);
    if (newcomm == nullptr) throw HostError(nboxInvalidArgument, "nboxCommSplit: newcomm is NULL");
    *newcomm = nullptr;
    if (color < 0 && color != NBOX_SPLIT_NOCOLOR) {
      throw HostError(nboxInvalidArgument, "nboxCommSplit: color " + std::to_string(color) +
                                               " is neither >= 0 nor NBOX_SPLIT_NOCOLOR");
    }
    if (nbox::host::t_group.depth > 0) {
      throw HostError(nboxInvalidUsage, "nboxCommSplit: called inside nboxGroupStart/End");
    }
    if (comm->impl->under_simulation()) {
      // The colors would be exchanged with emulated ranks, whose programs have no such
      // exchange; the scenario already knows each group's members.
      throw HostError(nboxInvalidUsage,
                      "nboxCommSplit: a real rank of nbox-cosim cannot split its communicator "
                      "(its emulated peers do not exchange colors): name the group's members "
                      "with nboxCommInitGroup");
    }
    const int size = comm->impl->nranks();
    const int me = comm->impl->rank();
    // Runs one operation on `comm` to its end; a failure is the parent's, named as such.
    auto run = [&](nboxResult_t result) {
      if (result == nboxSuccess) return;
      throw HostError(result, std::string("nboxCommSplit: exchanging colors and ids on the "
                                          "parent communicator: ") +
                                  nboxGetLastError(comm));
    };
    // Every rank's (color, key), then the ids of the new communicators' roots.
    std::vector<int64_t> colors_and_keys(2 * static_cast<size_t>(size));
    const int64_t mine[2] = {color, key};
    nboxRequest_t request = nullptr;
    run(nboxAllGather(mine, colors_and_keys.data(), 2, nboxInt64, comm, &request));
    run(nboxWait(request));
    std::vector<int> members;  // parent ranks of my color, in their new order
    for (int r = 0; r < size; ++r) {
      if (color != NBOX_SPLIT_NOCOLOR && colors_and_keys[2 * static_cast<size_t>(r)] == color) {
        members.push_back(r);
      }
    }
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      return colors_and_keys[2 * static_cast<size_t>(a) + 1] <
             colors_and_keys[2 * static_cast<size_t>(b) + 1];
    });
    // The first member of each color starts its communicator's bootstrap root.
    nboxUniqueId own{};
    const bool root = !members.empty() && members.front() == me;
    if (root) {
      const nboxResult_t made = nboxGetUniqueId(&own);
      if (made != nboxSuccess) throw HostError(made, nbox::host::t_last_error);
    }
    std::vector<nboxUniqueId> ids(static_cast<size_t>(size));
    run(nboxAllGather(&own, ids.data(), sizeof(nboxUniqueId), nboxUint8, comm, &request));
    run(nboxWait(request));
    if (members.empty()) return;  // NBOX_SPLIT_NOCOLOR
    const auto position = std::find(members.begin(), members.end(), me) - members.begin();
    auto impl = nbox::host::Communicator::Create(static_cast<int>(members.size()),
                                                 ids[static_cast<size_t>(members.front())],
                                                 static_cast<int>(position));
    *newcomm = new nboxComm{std::move(impl)};
  });
}

nboxResult_t nboxCommInitGroup(nboxComm_t comm, int nmembers, const int* members,
                               nboxComm_t* newcomm) {
  constexpr const char* kCall = "nboxCommInitGroup";
  return Guard([&] {
    CheckComm(comm, kCall);
    if (newcomm == nullptr)
      throw HostError(nboxInvalidArgument, "nboxCommInitGroup: newcomm is NULL");
    *newcomm = nullptr;
    if (nbox::host::t_group.depth > 0) {
      throw HostError(nboxInvalidUsage, "nboxCommInitGroup: called inside nboxGroupStart/End");
    }
    const int size = comm->impl->nranks();
    const int me = comm->impl->rank();
    if (nmembers < 1 || nmembers > size || members == nullptr) {
      throw HostError(nboxInvalidArgument, "nboxCommInitGroup: nmembers " +
                                               std::to_string(nmembers) + " is not in 1.." +
                                               std::to_string(size) + " (or members is NULL)");
    }
    const std::vector<int> list(members, members + nmembers);
    std::vector<bool> seen(static_cast<size_t>(size), false);
    for (int member : list) {
      if (member < 0 || member >= size || seen[static_cast<size_t>(member)]) {
        throw HostError(nboxInvalidArgument, "nboxCommInitGroup: member " + std::to_string(member) +
                                                 (member < 0 || member >= size
                                                      ? " is not a rank of the communicator (0.." +
                                                            std::to_string(size - 1) + ")"
                                                      : " is listed twice"));
      }
      seen[static_cast<size_t>(member)] = true;
    }
    const auto position = std::find(list.begin(), list.end(), me) - list.begin();
    if (position == nmembers) {
      throw HostError(nboxInvalidArgument, "nboxCommInitGroup: rank " + std::to_string(me) +
                                               " is not among the members");
    }
    if (comm->impl->under_simulation()) {
      // nbox-cosim's root knows the job's communicators: the join names the members as job
      // ranks, and the root answers for the emulated ones.
      std::vector<int> world(list.size());
      for (size_t i = 0; i < list.size(); ++i) world[i] = comm->impl->world_rank(list[i]);
      *newcomm = new nboxComm{nbox::host::Communicator::Create(
          nmembers, comm->impl->id(), static_cast<int>(position), std::move(world))};
      return;
    }
    // The first member's fresh id, sent to the others on the parent.
    auto run = [&](nboxResult_t result) {
      if (result == nboxSuccess) return;
      throw HostError(result, std::string("nboxCommInitGroup: sending the group's id on the "
                                          "parent communicator: ") +
                                  nboxGetLastError(comm));
    };
    nboxUniqueId id{};
    nboxRequest_t request = nullptr;
    if (position == 0) {
      const nboxResult_t made = nboxGetUniqueId(&id);
      if (made != nboxSuccess) throw HostError(made, nbox::host::t_last_error);
      for (int i = 1; i < nmembers; ++i) {
        run(nboxSend(&id, sizeof(id), nboxUint8, list[static_cast<size_t>(i)], comm, &request));
        run(nboxWait(request));
      }
    } else {
      run(nboxRecv(&id, sizeof(id), nboxUint8, list.front(), comm, &request));
      run(nboxWait(request));
    }
    *newcomm =
        new nboxComm{nbox::host::Communicator::Create(nmembers, id, static_cast<int>(position))};
  });
}

nboxResult_t nboxCommDestroy(nboxComm_t comm) {
  return Guard([&] {
    CheckComm(comm, "nboxCommDestroy");
    comm->impl->Destroy();
    delete comm;
  });
}

nboxResult_t nboxCommAbort(nboxComm_t comm) {
  return Guard([&] {
    CheckComm(comm, "nboxCommAbort");
    comm->impl->Abort();
    delete comm;
  });
}

nboxResult_t nboxCommCount(const nboxComm_t comm, int* count) {
  return Guard([&] {
    CheckComm(comm, "nboxCommCount");
    if (count == nullptr) throw HostError(nboxInvalidArgument, "nboxCommCount: count is NULL");
    *count = comm->impl->nranks();
  });
}

nboxResult_t nboxCommUserRank(const nboxComm_t comm, int* rank) {
  return Guard([&] {
    CheckComm(comm, "nboxCommUserRank");
    if (rank == nullptr) throw HostError(nboxInvalidArgument, "nboxCommUserRank: rank is NULL");
    *rank = comm->impl->rank();
  });
}

nboxResult_t nboxAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           nboxDataType_t datatype, nboxRedOp_t op, nboxComm_t comm,
                           nboxRequest_t* request) {
  constexpr const char* kCall = "nboxAllReduce";
  return Guard([&] {
    CheckComm(comm, kCall);
    CheckType(datatype, kCall);
    CheckOp(op, kCall);
    const uint64_t bytes = Bytes(count, 1, datatype, kCall);
    CheckBuffer(sendbuff, bytes, "sendbuff", kCall);
    CheckBuffer(recvbuff, bytes, "recvbuff", kCall);
    auto& impl = *comm->impl;
    Part part;
    part.spec = SpecFor(impl, coll::CollectiveOp::kAllReduce, bytes, datatype);
    part.schedule = impl.ScheduleFor(part.spec);
    part.contributions = impl.ContributionsFor(part.spec);
    impl.ReportCollective(Report(NBOX_REPORTED_OP_ALLREDUCE, datatype, op, count, bytes, -1));
    part.work = static_cast<uint8_t*>(recvbuff);
    part.type = datatype;
    part.op = op;
    part.before.push_back({part.work, static_cast<const uint8_t*>(sendbuff), bytes});
    part.what = Describe("AllReduce", count, datatype);
    Submit(comm, std::move(part), request);
  });
}

nboxResult_t nboxAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           nboxDataType_t datatype, nboxComm_t comm, nboxRequest_t* request) {
  constexpr const char* kCall = "nboxAllGather";
  return Guard([&] {
    CheckComm(comm, kCall);
    CheckType(datatype, kCall);
    auto& impl = *comm->impl;
    const uint64_t bytes = Bytes(sendcount, impl.nranks(), datatype, kCall);
    CheckBuffer(sendbuff, bytes, "sendbuff", kCall);
    CheckBuffer(recvbuff, bytes, "recvbuff", kCall);
    const coll::CollectiveSpec spec =
        SpecFor(impl, coll::CollectiveOp::kAllGather, bytes, datatype);
    Part part;
    part.spec = spec;
    part.schedule = impl.ScheduleFor(spec);
    part.contributions = impl.ContributionsFor(spec);
    impl.ReportCollective(Report(NBOX_REPORTED_OP_ALLGATHER, datatype, -1, sendcount, bytes, -1));
    part.work = static_cast<uint8_t*>(recvbuff);
    part.type = datatype;
    const coll::ByteRange own = coll::RankSegment(spec, impl.rank());
    part.before.push_back(
        {part.work + own.offset, static_cast<const uint8_t*>(sendbuff), own.bytes});
    part.what = Describe("AllGather", sendcount, datatype);
    Submit(comm, std::move(part), request);
  });
}

nboxResult_t nboxReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               nboxDataType_t datatype, nboxRedOp_t op, nboxComm_t comm,
                               nboxRequest_t* request) {
  constexpr const char* kCall = "nboxReduceScatter";
  return Guard([&] {
    CheckComm(comm, kCall);
    CheckType(datatype, kCall);
    CheckOp(op, kCall);
    auto& impl = *comm->impl;
    const uint64_t bytes = Bytes(recvcount, impl.nranks(), datatype, kCall);
    CheckBuffer(sendbuff, bytes, "sendbuff", kCall);
    CheckBuffer(recvbuff, bytes, "recvbuff", kCall);
    const coll::CollectiveSpec spec =
        SpecFor(impl, coll::CollectiveOp::kReduceScatter, bytes, datatype);
    Part part;
    part.spec = spec;
    part.schedule = impl.ScheduleFor(spec);
    part.contributions = impl.ContributionsFor(spec);
    impl.ReportCollective(
        Report(NBOX_REPORTED_OP_REDUCESCATTER, datatype, op, recvcount, bytes, -1));
    // The schedule leaves partial sums all over its buffer, and sendbuff is const: work on a
    // copy.
    part.scratch.reset(new uint8_t[bytes > 0 ? bytes : 1]);
    part.work = part.scratch.get();
    part.type = datatype;
    part.op = op;
    const coll::ByteRange own = coll::RankSegment(spec, impl.rank());
    part.before.push_back({part.work, static_cast<const uint8_t*>(sendbuff), bytes});
    part.after.push_back({static_cast<uint8_t*>(recvbuff), part.work + own.offset, own.bytes});
    part.what = Describe("ReduceScatter", recvcount, datatype);
    Submit(comm, std::move(part), request);
  });
}

nboxResult_t nboxBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           nboxDataType_t datatype, int root, nboxComm_t comm,
                           nboxRequest_t* request) {
  constexpr const char* kCall = "nboxBroadcast";
  return Guard([&] {
    CheckComm(comm, kCall);
    CheckType(datatype, kCall);
    auto& impl = *comm->impl;
    CheckRoot(root, impl, kCall);
    const uint64_t bytes = Bytes(count, 1, datatype, kCall);
    if (impl.rank() == root) CheckBuffer(sendbuff, bytes, "sendbuff", kCall);
    CheckBuffer(recvbuff, bytes, "recvbuff", kCall);
    coll::CollectiveSpec spec = SpecFor(impl, coll::CollectiveOp::kBroadcast, bytes, datatype);
    spec.root = root;
    Part part;
    part.spec = spec;
    part.schedule = impl.ScheduleFor(spec);
    part.contributions = impl.ContributionsFor(spec);
    impl.ReportCollective(Report(NBOX_REPORTED_OP_BROADCAST, datatype, -1, count, bytes, root));
    part.work = static_cast<uint8_t*>(recvbuff);
    part.type = datatype;
    if (impl.rank() == root) {
      part.before.push_back({part.work, static_cast<const uint8_t*>(sendbuff), bytes});
    }
    part.what = Describe("Broadcast", count, datatype);
    Submit(comm, std::move(part), request);
  });
}

nboxResult_t nboxReduce(const void* sendbuff, void* recvbuff, size_t count, nboxDataType_t datatype,
                        nboxRedOp_t op, int root, nboxComm_t comm, nboxRequest_t* request) {
  constexpr const char* kCall = "nboxReduce";
  return Guard([&] {
    CheckComm(comm, kCall);
    CheckType(datatype, kCall);
    CheckOp(op, kCall);
    auto& impl = *comm->impl;
    CheckRoot(root, impl, kCall);
    const uint64_t bytes = Bytes(count, 1, datatype, kCall);
    CheckBuffer(sendbuff, bytes, "sendbuff", kCall);
    const bool at_root = impl.rank() == root;
    if (at_root) CheckBuffer(recvbuff, bytes, "recvbuff", kCall);
    coll::CollectiveSpec spec = SpecFor(impl, coll::CollectiveOp::kReduce, bytes, datatype);
    spec.root = root;
    Part part;
    part.spec = spec;
    part.schedule = impl.ScheduleFor(spec);
    part.contributions = impl.ContributionsFor(spec);
    impl.ReportCollective(Report(NBOX_REPORTED_OP_REDUCE, datatype, op, count, bytes, root));
    // The root sums into recvbuff; the others' buffers end with partial sums, and their
    // sendbuff is const: they work on a copy.
    if (at_root) {
      part.work = static_cast<uint8_t*>(recvbuff);
    } else {
      part.scratch.reset(new uint8_t[bytes > 0 ? bytes : 1]);
      part.work = part.scratch.get();
    }
    part.type = datatype;
    part.op = op;
    part.before.push_back({part.work, static_cast<const uint8_t*>(sendbuff), bytes});
    part.what = Describe("Reduce", count, datatype);
    Submit(comm, std::move(part), request);
  });
}

nboxResult_t nboxAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                          nboxDataType_t datatype, nboxComm_t comm, nboxRequest_t* request) {
  constexpr const char* kCall = "nboxAllToAll";
  return Guard([&] {
    CheckComm(comm, kCall);
    CheckType(datatype, kCall);
    auto& impl = *comm->impl;
    const uint64_t bytes = Bytes(count, impl.nranks(), datatype, kCall);
    CheckBuffer(sendbuff, bytes, "sendbuff", kCall);
    CheckBuffer(recvbuff, bytes, "recvbuff", kCall);
    if (bytes > 0 && sendbuff == recvbuff) {
      throw HostError(nboxInvalidArgument,
                      std::string(kCall) + ": sendbuff and recvbuff are the same (not in place)");
    }
    const coll::CollectiveSpec spec = SpecFor(impl, coll::CollectiveOp::kAllToAll, bytes, datatype);
    Part part;
    part.spec = spec;
    part.schedule = impl.ScheduleFor(spec);
    part.contributions = impl.ContributionsFor(spec);
    impl.ReportCollective(Report(NBOX_REPORTED_OP_ALLTOALL, datatype, -1, count, bytes, -1));
    // The schedule's buffer is the send buffer, the receive buffer and (hierarchical) the
    // pieces this rank relays (collectives/all_to_all.h); the own block is a local copy.
    part.scratch.reset(
        new uint8_t[part.schedule->buffer_bytes > 0 ? part.schedule->buffer_bytes : 1]);
    part.work = part.scratch.get();
    part.type = datatype;
    const auto* send = static_cast<const uint8_t*>(sendbuff);
    auto* recv = static_cast<uint8_t*>(recvbuff);
    const coll::ByteRange own = coll::RankSegment(spec, impl.rank());
    part.before.push_back({part.work, send, bytes});
    part.after.push_back({recv, part.work + bytes, bytes});
    part.after.push_back({recv + own.offset, send + own.offset, own.bytes});
    part.what = Describe("AllToAll", count * impl.nranks(), datatype);
    Submit(comm, std::move(part), request);
  });
}

static nboxResult_t PointToPoint(const char* call, coll::StepKind kind, void* buffer, size_t count,
                                 nboxDataType_t datatype, int peer, nboxComm_t comm,
                                 nboxRequest_t* request) {
  return Guard([&] {
    CheckComm(comm, call);
    CheckType(datatype, call);
    auto& impl = *comm->impl;
    if (peer < 0 || peer >= impl.nranks()) {
      throw HostError(nboxInvalidArgument, std::string(call) + ": peer " + std::to_string(peer) +
                                               " is not in 0.." +
                                               std::to_string(impl.nranks() - 1));
    }
    if (peer == impl.rank()) {
      throw HostError(nboxInvalidUsage, std::string(call) + ": peer " + std::to_string(peer) +
                                            " is this rank; copy the buffer instead");
    }
    const uint64_t bytes = Bytes(count, 1, datatype, call);
    CheckBuffer(buffer, bytes, "buffer", call);
    impl.ReportCollective(
        Report(kind == coll::StepKind::kSend ? NBOX_REPORTED_OP_SEND : NBOX_REPORTED_OP_RECV,
               datatype, -1, count, bytes, peer));
    Part part;
    part.schedule = nbox::host::PointToPointSchedule(impl, kind, peer, bytes);
    part.work = static_cast<uint8_t*>(buffer);
    part.type = datatype;
    part.point_to_point = true;
    part.what = Describe(kind == coll::StepKind::kSend ? "Send" : "Recv", count, datatype) +
                (kind == coll::StepKind::kSend ? " to rank " : " from rank ") +
                std::to_string(peer);
    Submit(comm, std::move(part), request);
  });
}

nboxResult_t nboxSend(const void* sendbuff, size_t count, nboxDataType_t datatype, int peer,
                      nboxComm_t comm, nboxRequest_t* request) {
  // The schedule only reads a Send's buffer.
  return PointToPoint("nboxSend", coll::StepKind::kSend, const_cast<void*>(sendbuff), count,
                      datatype, peer, comm, request);
}

nboxResult_t nboxRecv(void* recvbuff, size_t count, nboxDataType_t datatype, int peer,
                      nboxComm_t comm, nboxRequest_t* request) {
  return PointToPoint("nboxRecv", coll::StepKind::kRecv, recvbuff, count, datatype, peer, comm,
                      request);
}

nboxResult_t nboxGroupStart(void) {
  ++nbox::host::t_group.depth;
  return nboxSuccess;
}

nboxResult_t nboxGroupEnd(void) {
  auto& group = nbox::host::t_group;
  if (group.depth == 0) {
    return nbox::host::Failed(nboxInvalidUsage, "nboxGroupEnd without nboxGroupStart");
  }
  if (--group.depth > 0) return nboxSuccess;
  auto operations = std::move(group.operations);
  group.operations.clear();
  for (auto& [comm, operation] : operations) comm->impl->Enqueue(operation);
  return nboxSuccess;
}

namespace {

nboxResult_t WaitAndRelease(const char* call, nboxRequest_t request, bool program_waits) {
  if (request == nullptr) {
    return nbox::host::Failed(nboxInvalidArgument, std::string(call) + ": NULL request");
  }
  if (!request->operation->launched()) {
    return nbox::host::Failed(
        nboxInvalidUsage,
        std::string(call) + " on a call of a group that nboxGroupEnd has not launched");
  }
  const nboxResult_t result =
      program_waits ? request->operation->Wait() : request->operation->WaitInBackground();
  delete request;
  if (result != nboxSuccess) {
    return nbox::host::Failed(result, "the operation failed; see nboxGetLastError(comm)");
  }
  return nboxSuccess;
}

}  // namespace

nboxResult_t nboxWait(nboxRequest_t request) {
  return WaitAndRelease("nboxWait", request, true);
}

nboxResult_t nboxWaitInBackground(nboxRequest_t request) {
  return WaitAndRelease("nboxWaitInBackground", request, false);
}

nboxResult_t nboxProgramWaiting(nboxComm_t comm, int waiting) {
  return Guard([&] {
    CheckComm(comm, "nboxProgramWaiting");
    comm->impl->ProgramWaiting(waiting != 0);
  });
}

nboxResult_t nboxTest(nboxRequest_t request, int* done) {
  if (request == nullptr || done == nullptr) {
    return nbox::host::Failed(nboxInvalidArgument, "nboxTest: NULL argument");
  }
  nboxResult_t result = nboxSuccess;
  *done = request->operation->Poll(&result) ? 1 : 0;
  if (*done) delete request;
  if (result != nboxSuccess) {
    return nbox::host::Failed(result, "the operation failed; see nboxGetLastError(comm)");
  }
  return nboxSuccess;
}

nboxResult_t nboxCommSynchronize(nboxComm_t comm) {
  nboxResult_t result = nboxSuccess;
  const nboxResult_t checked = Guard([&] {
    CheckComm(comm, "nboxCommSynchronize");
    result = comm->impl->Synchronize();
  });
  if (checked != nboxSuccess) return checked;
  if (result != nboxSuccess) return nbox::host::Failed(result, comm->impl->last_error());
  return nboxSuccess;
}

nboxResult_t nboxCommVirtualTimeNs(nboxComm_t comm, uint64_t* ns) {
  return Guard([&] {
    CheckComm(comm, "nboxCommVirtualTimeNs");
    if (ns == nullptr) throw HostError(nboxInvalidArgument, "nboxCommVirtualTimeNs: ns is NULL");
    *ns = comm->impl->VirtualTimeNs();
  });
}

nboxResult_t nboxMarkIteration(nboxComm_t comm, uint64_t iteration, int begin) {
  return Guard([&] {
    CheckComm(comm, "nboxMarkIteration");
    comm->impl->ReportIteration(iteration, begin != 0);
  });
}

const char* nboxGetErrorString(nboxResult_t result) {
  switch (result) {
    case nboxSuccess:
      return "no error";
    case nboxSystemError:
      return "system error (a system call or the network failed on this host)";
    case nboxInternalError:
      return "internal error";
    case nboxInvalidArgument:
      return "invalid argument";
    case nboxInvalidUsage:
      return "invalid usage";
    case nboxRemoteError:
      return "remote error (a peer failed or went away)";
    case nboxInProgress:
      return "operation in progress";
  }
  return "unknown result code";
}

nboxResult_t nboxCommGetAsyncError(nboxComm_t comm, nboxResult_t* asyncError) {
  return Guard([&] {
    CheckComm(comm, "nboxCommGetAsyncError");
    if (asyncError == nullptr) {
      throw HostError(nboxInvalidArgument, "nboxCommGetAsyncError: asyncError is NULL");
    }
    *asyncError = comm->impl->status();
  });
}

const char* nboxGetLastError(nboxComm_t comm) {
  thread_local std::string text;
  text = nbox::host::t_last_error;
  if (comm != nullptr && comm->impl != nullptr && comm->impl->status() != nboxSuccess) {
    text = comm->impl->last_error();
  }
  return text.c_str();
}

}  // extern "C"
