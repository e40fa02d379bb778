// Runs one Operation's schedules over the ncclNet comms of a communicator, on the calling
// (runtime) thread, without ever blocking: Progress() does what can be done now.
//
// Messages follow the matching rule of collectives/schedule.h per lane (a FIFO connection):
// on every lane the sends are posted, and the receives posted, in one global order — the
// operation's parts in call order, each part's steps in id order — which both ranks of the lane
// compute alike. A send is posted once StepTracker hands it out and every earlier send of its
// lane is posted; it reads the region in place. A receive is posted as soon as it is next on
// its lane (up to a window), so messages are taken off the network even before their step may
// write its region (the loose semantics collectives/reference_executor.h checks schedules
// against): it lands in place when its step was handed out and does not reduce, else in a
// staging buffer from which it is reduced or copied once the step is handed out.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "bridge/host/connections.h"
#include "bridge/host/net_plugin.h"
#include "bridge/host/operation.h"
#include "bridge/host/staging_pool.h"
#include "collectives/step_tracker.h"

namespace nbox::host {

class OperationRun {
 public:
  // `p2p_lane` is the lane of point-to-point parts (the communicator's channel count).
  // `emulated_peers`: some peer is emulated by nbox-cosim, so receives may complete as
  // synthetic (payload = self): the run keeps a copy of each part's input to fill them from.
  OperationRun(Operation& operation, Connections& connections, const NetPlugin& plugin,
               StagingPool& staging, int p2p_lane, bool emulated_peers);
  ~OperationRun();
  OperationRun(const OperationRun&) = delete;
  OperationRun& operator=(const OperationRun&) = delete;

  // Performs the copies the parts need before their first step.
  void Begin();
  // Posts, tests and completes whatever can be now; true if anything moved. Throws HostError.
  bool Progress();
  bool Done() const;
  // Performs the copies after the last step. Call once Done().
  void End();
  // After the comms were closed on a failure: forget the registrations instead of
  // deregistering them on comms that no longer exist.
  void Abandon() { registrations_.clear(); }
  // True while some comm is still being connected (connect/accept must be polled again).
  bool connecting() const { return connecting_; }

 private:
  struct StepRef {
    uint32_t part;
    uint32_t step;
  };
  struct StepState {
    bool taken = false;    // handed out by the tracker
    bool posted = false;   // isend/irecv issued
    bool arrived = false;  // receive: the message is in `staging`
    bool direct = false;   // receive: posted straight into the region
    uint8_t* staging = nullptr;
  };
  struct Lane {
    int peer = 0;
    int lane = 0;
    std::vector<StepRef> order;  // the lane's sends (or receives) in matching order
    size_t next = 0;             // first not yet posted
    int outstanding = 0;         // receives posted and not yet arrived
  };
  struct InFlight {
    void* request;
    StepRef ref;
    Lane* lane;
    bool send;
  };

  const coll::Step& StepOf(StepRef ref) const {
    return operation_.parts[ref.part].schedule->steps[ref.step];
  }
  StepState& StateOf(StepRef ref) { return states_[ref.part][ref.step]; }
  int LaneOf(const Part& part, const coll::Step& step) const;
  void* Registration(void* comm, uint8_t* base, uint64_t bytes);

  bool HandOutReadySteps();
  bool PostSends(Lane& lane);
  bool PostRecvs(Lane& lane);
  bool TestInFlight();
  void OnArrived(StepRef ref);
  // Applies a staged message to its region (copy or reduction) and completes the step.
  void ApplyStaged(StepRef ref);
  // A message from an emulated rank arrived without bytes: writes into its landing place what
  // the sender would have sent if every rank held this rank's input (collectives/
  // contributions.h): k contributions give sum k·x, prod x^k, max/min x.
  void FillSynthetic(StepRef ref);
  std::string Where(const Lane& lane, bool send) const;

  Operation& operation_;
  Connections& connections_;
  const NetPlugin& plugin_;
  StagingPool& staging_;
  const int p2p_lane_;
  const bool emulated_peers_;
  std::vector<uint8_t*> inputs_;  // per part, when emulated_peers_: the input (staging_)
  std::vector<coll::StepTracker> trackers_;
  std::vector<std::vector<StepState>> states_;
  std::vector<Lane> send_lanes_;
  std::vector<Lane> recv_lanes_;
  std::vector<InFlight> in_flight_;
  // regMr handles of this run, by (comm, buffer); deregistered at the end.
  std::map<std::pair<void*, uint8_t*>, void*> registrations_;
  bool connecting_ = false;
};

}  // namespace nbox::host
