#include "tools/bench/simgrid_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <utility>

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace nbox::bench {
namespace {

using Clock = std::chrono::steady_clock;
namespace s4u = simgrid::s4u;

// Who waits for whom, and how many messages each still waits for.
struct Release {
  std::vector<std::vector<uint32_t>> dependents;
  std::vector<uint32_t> missing;

  explicit Release(const MessageDag& dag)
      : dependents(dag.messages.size()), missing(dag.messages.size()) {
    for (uint32_t id = 0; id < dag.messages.size(); ++id) {
      missing[id] = static_cast<uint32_t>(dag.messages[id].deps.size());
      for (uint32_t dep : dag.messages[id].deps) dependents[dep].push_back(id);
    }
  }
};

}  // namespace

// The messages of `spec`'s schedule, each with the messages its Send waits for. A Send waits
// on steps of its rank; a Recv step is done when its message has arrived and its own
// dependencies are done, so a dependency on a Recv is a dependency on its message and on
// whatever that Recv waits for (schedule.h's matching rule pairs Sends and Recvs).
MessageDag MessagesOf(const coll::CollectiveSpec& spec) {
  const coll::Schedule schedule = coll::BuildSchedule(spec);
  const auto world = static_cast<uint32_t>(spec.world_size);
  MessageDag dag;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<uint32_t>> lane_messages;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> connection_ids;
  std::vector<std::vector<uint32_t>> message_of(world);  // [rank][step]
  for (uint32_t rank = 0; rank < world; ++rank) {
    const auto& steps = schedule.ranks[rank].steps;
    message_of[rank].assign(steps.size(), UINT32_MAX);
    for (const coll::Step& step : steps) {
      if (step.kind != coll::StepKind::kSend) continue;
      const auto key = std::make_tuple(rank, static_cast<uint32_t>(step.peer),
                                       static_cast<uint32_t>(step.channel));
      const auto [it, added] =
          connection_ids.emplace(key, static_cast<uint32_t>(dag.connections.size()));
      if (added) dag.connections.push_back(key);
      const auto id = static_cast<uint32_t>(dag.messages.size());
      dag.messages.push_back(
          {rank, std::get<1>(key), std::get<2>(key), step.bytes, it->second, {}});
      lane_messages[key].push_back(id);
      message_of[rank][step.id] = id;
    }
  }
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, size_t> lane_taken;
  for (uint32_t rank = 0; rank < world; ++rank) {
    for (const coll::Step& step : schedule.ranks[rank].steps) {
      if (step.kind != coll::StepKind::kRecv) continue;
      const auto key = std::make_tuple(static_cast<uint32_t>(step.peer), rank,
                                       static_cast<uint32_t>(step.channel));
      message_of[rank][step.id] = lane_messages.at(key).at(lane_taken[key]++);
    }
  }
  // Messages a step's completion stands for (memoised per rank and step).
  std::vector<std::vector<std::vector<uint32_t>>> closure(world);
  for (uint32_t rank = 0; rank < world; ++rank) {
    const auto& steps = schedule.ranks[rank].steps;
    closure[rank].resize(steps.size());
    for (const coll::Step& step : steps) {  // dependencies have lower ids: already closed
      std::vector<uint32_t> needs;
      for (uint32_t dep : step.deps) {
        needs.insert(needs.end(), closure[rank][dep].begin(), closure[rank][dep].end());
      }
      std::sort(needs.begin(), needs.end());
      needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
      if (step.kind == coll::StepKind::kSend) {
        dag.messages[message_of[rank][step.id]].deps = needs;
        closure[rank][step.id] = {message_of[rank][step.id]};
      } else {
        needs.push_back(message_of[rank][step.id]);
        closure[rank][step.id] = std::move(needs);
      }
    }
  }
  return dag;
}

ComparedNetwork PrepareNetwork(const topo::Topology& topology, uint32_t mtu, const MessageDag& dag,
                               bool delays) {
  const auto hosts = topology.hosts.size();
  std::vector<int> rank_to_host(hosts);
  for (size_t r = 0; r < hosts; ++r) rank_to_host[r] = static_cast<int>(r);
  auto build = [&]() {
    auto network = ns3::CreateObject<ns3::NboxFlowNetwork>();
    network->SetAttribute("Mtu", ns3::UintegerValue(mtu));
    network->Build(topology);
    return network;
  };
  ComparedNetwork net;
  net.network = build();
  net.transport = ns3::CreateObject<ns3::NboxFlowTransport>(net.network, rank_to_host);
  // Every connection opened in one order on nbox's transport, and the same routes for SimGrid
  // from a second network routed in that order (the ECMP choice follows the order).
  auto twin = build();
  twin->PlaceRanks(rank_to_host);
  for (const auto& [src, dst, channel] : dag.connections) {
    net.transport->Connect(src, dst, channel);
    net.routes.push_back(twin->RouteNewConnection(src, dst));
  }
  net.delays.assign(dag.connections.size(), -1);
  for (const DagMessage& m : dag.messages) {
    if (net.delays[m.connection] < 0) {
      net.delays[m.connection] =
          delays ? twin->GetDeliveryDelaySeconds(net.routes[m.connection], m.bytes) : 0;
    }
  }
  return net;
}

// nbox: the flow model (NboxFlowTransport over NboxFlowNetwork) on ns-3's event queue. A
// connection's messages are handed over in order, as StepTracker does.
DagRun RunOnFlowModel(const MessageDag& dag, const ComparedNetwork& net) {
  const auto& transport = net.transport;
  Release release(dag);
  std::vector<std::vector<uint32_t>> by_connection(dag.connections.size());
  for (uint32_t id = 0; id < dag.messages.size(); ++id) {
    by_connection[dag.messages[id].connection].push_back(id);
  }
  std::vector<size_t> next_post(dag.connections.size(), 0);
  std::vector<bool> ready(dag.messages.size(), false);
  DagRun outcome;
  std::function<void(uint32_t)> post_ready = [&](uint32_t connection) {
    auto& queue = by_connection[connection];
    while (next_post[connection] < queue.size() && ready[queue[next_post[connection]]]) {
      const uint32_t id = queue[next_post[connection]++];
      const DagMessage& m = dag.messages[id];
      transport->Send(m.src, m.dst, m.channel, m.bytes, [&, id]() {
        ++outcome.delivered;
        for (uint32_t waiter : release.dependents[id]) {
          if (--release.missing[waiter] == 0) {
            ready[waiter] = true;
            post_ready(dag.messages[waiter].connection);
          }
        }
      });
    }
  };
  for (uint32_t id = 0; id < dag.messages.size(); ++id) {
    if (release.missing[id] == 0) ready[id] = true;
  }
  for (uint32_t c = 0; c < dag.connections.size(); ++c) post_ready(c);
  const auto start = Clock::now();
  ns3::Simulator::Run();
  outcome.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  outcome.simulated_s = ns3::Simulator::Now().GetSeconds();
  ns3::Simulator::Destroy();
  return outcome;
}

// SimGrid: the same messages as Comms between hosts of a full zone, released from the
// completion signal (no actors: SimGrid's engine and solver alone).
DagRun RunOnSimGrid(const MessageDag& dag, const ComparedNetwork& net) {
  const auto& routes = net.routes;
  const auto& delays = net.delays;
  const auto& network = net.network;
  uint32_t n_ports = 0;
  for (const auto& route : routes) {
    for (uint32_t port : route) n_ports = std::max(n_ports, port + 1);
  }
  int argc = 2;
  char name[] = "nbox-bench-simgrid";
  char quiet[] = "--log=xbt_cfg.thres:warning";  // no line per configuration change
  char* argv[] = {name, quiet, nullptr};
  s4u::Engine engine(&argc, argv);
  s4u::Engine::set_config("network/model:CM02");
  s4u::Engine::set_config("network/TCP-gamma:0");
  s4u::Engine::set_config("network/crosstraffic:0");
  auto* zone = s4u::create_full_zone("nbox");
  std::vector<s4u::Link*> links(n_ports, nullptr);
  const double wire_ratio = network->GetWireRatio();
  for (uint32_t port = 0; port < n_ports; ++port) {
    links[port] =
        zone->create_link(fmt::format("p{}", port), network->GetPortRateBps(port) / 8 / wire_ratio)
            ->set_latency(0)
            ->seal();
  }
  // One host per (rank, channel): routes are per host pair in SimGrid, per connection in nbox.
  std::map<std::pair<uint32_t, uint32_t>, s4u::Host*> hosts;
  auto host_of = [&](uint32_t rank, uint32_t channel) {
    auto& host = hosts[{rank, channel}];
    if (host == nullptr)
      host = zone->create_host(fmt::format("r{}c{}", rank, channel), 1e9)->seal();
    return host;
  };
  for (uint32_t c = 0; c < dag.connections.size(); ++c) {
    const auto [src, dst, channel] = dag.connections[c];
    std::vector<s4u::LinkInRoute> path;
    for (uint32_t port : routes[c]) path.emplace_back(links[port]);
    if (delays[c] > 0) {
      path.emplace_back(zone->create_link(fmt::format("d{}", c), 1e18)
                            ->set_sharing_policy(s4u::Link::SharingPolicy::FATPIPE)
                            ->set_latency(delays[c])
                            ->seal());
    }
    zone->add_route(host_of(src, channel)->get_netpoint(), host_of(dst, channel)->get_netpoint(),
                    nullptr, nullptr, path, false);
  }
  zone->seal();

  Release release(dag);
  // The Comms running, by the message they carry. A finished one is let go at the next
  // completion, once SimGrid is done with it.
  std::unordered_map<const s4u::Activity*, std::pair<uint32_t, s4u::CommPtr>> running;
  s4u::CommPtr finished;
  DagRun outcome;
  auto start_message = [&](uint32_t id) {
    const DagMessage& m = dag.messages[id];
    s4u::CommPtr comm =
        s4u::Comm::sendto_init(host_of(m.src, m.channel), host_of(m.dst, m.channel));
    comm->set_payload_size(m.bytes);
    running.emplace(comm.get(), std::make_pair(id, comm));
    comm->start();
  };
  // A completion starts what it releases at once, as SimGrid's own activity dependencies do
  // from the same signal.
  s4u::Activity::on_completion_cb([&](const s4u::Activity& activity) {
    const auto it = running.find(&activity);
    if (it == running.end()) return;
    const uint32_t id = it->second.first;
    finished = std::move(it->second.second);
    running.erase(it);
    ++outcome.delivered;
    for (uint32_t waiter : release.dependents[id]) {
      if (--release.missing[waiter] == 0) start_message(waiter);
    }
  });
  for (uint32_t id = 0; id < dag.messages.size(); ++id) {
    if (release.missing[id] == 0) start_message(id);
  }
  const auto wall_start = Clock::now();
  engine.run();
  outcome.wall_s = std::chrono::duration<double>(Clock::now() - wall_start).count();
  outcome.simulated_s = s4u::Engine::get_clock();
  return outcome;
}

}  // namespace nbox::bench
