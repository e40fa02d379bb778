// The flow model's max-min solver against SimGrid's, on the same messages
// (tools/bench/README.md, "SimGrid's solver").
//
// The issue that asked for the flow model let its solver be nbox's own or SimGrid's (the
// field's reference for flow-level sharing) and asked for the choice to be made by a benchmark.
// SimGrid's solver (kernel/lmm) has no installed header in Debian's libsimgrid-dev 3.32, so it
// is measured where it runs, inside SimGrid's engine, against nbox's solver inside nbox's flow
// model (NboxFlowTransport on ns-3's event queue): both move the same message DAG (a collective
// from collectives/, every message released when the messages it depends on have arrived) over
// the same links and routes.
//
// SimGrid runs its CM02 model with every correction off (TCP-gamma window bound 0, no cross
// traffic, latency and bandwidth factors 1): plain max-min sharing of each link's capacity,
// each flow's share weighted by its route's latency. Each nbox port is one SimGrid link of the
// port's payload capacity (rate / 8 / the transport's wire bytes per payload byte). With
// `delays`, each connection also crosses a link of its own, FATPIPE and never full, that
// carries the flow model's delivery delay for its messages (propagation plus store-and-forward
// of the last packet): SimGrid pays latency before the bytes flow and nbox after, which gives
// the same times where one flow crosses each port at a time (a ring), and routes of one length
// keep SimGrid's latency weights equal. Without, SimGrid's routes have no latency (plain
// max-min whatever the route lengths) and its times lack nbox's delivery delays.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "collectives/schedule.h"
#include "ns3/nbox-flow-network.h"
#include "ns3/nbox-flow-transport.h"
#include "topologies/topology.h"

namespace nbox::bench {

// One point-to-point message of the collective: from `src` to `dst` on connection
// `connection`, released once every message in `deps` has arrived.
struct DagMessage {
  uint32_t src = 0;
  uint32_t dst = 0;
  uint32_t channel = 0;
  uint64_t bytes = 0;
  uint32_t connection = 0;
  std::vector<uint32_t> deps;
};

struct MessageDag {
  std::vector<DagMessage> messages;
  // (src, dst, channel) of every connection, in the order of their first message.
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> connections;
};

// The messages of every rank's schedule of `spec`, each with the messages its Send waits for.
MessageDag MessagesOf(const coll::CollectiveSpec& spec);

// The network both sides run on: nbox's flow model with rank r on host r and every
// connection opened, and for SimGrid each connection's ports and delivery delay.
struct ComparedNetwork {
  ns3::Ptr<ns3::NboxFlowNetwork> network;
  ns3::Ptr<ns3::NboxFlowTransport> transport;
  std::vector<std::vector<uint32_t>> routes;  // per connection of the DAG
  std::vector<double> delays;                 // per connection; all 0 without `delays`
};
ComparedNetwork PrepareNetwork(const topo::Topology& topology, uint32_t mtu, const MessageDag& dag,
                               bool delays);

struct DagRun {
  double simulated_s = 0;  // when the last message arrived
  double wall_s = 0;       // running the simulation, building nothing
  uint64_t delivered = 0;
};

// The DAG on nbox's flow model (then ns-3's simulator is destroyed).
DagRun RunOnFlowModel(const MessageDag& dag, const ComparedNetwork& net);
// The DAG on SimGrid's engine. SimGrid allows one engine per process: call it once.
DagRun RunOnSimGrid(const MessageDag& dag, const ComparedNetwork& net);

}  // namespace nbox::bench
