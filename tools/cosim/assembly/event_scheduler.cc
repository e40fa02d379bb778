#include "tools/cosim/assembly/event_scheduler.h"

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "ns3/nbox-pruning-scheduler.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

namespace nbox::cosim {

std::string SchedulerTypeIn(const std::string& global_values) {
  std::istringstream in(global_values);
  std::string item;
  std::string type;
  while (std::getline(in, item, ';')) {
    const auto equals = item.find('=');
    if (equals != std::string::npos && item.substr(0, equals) == "SchedulerType") {
      type = item.substr(equals + 1);  // the last one wins, as in ns-3
    }
  }
  return type;
}

void InstallEventScheduler() {
  const ns3::TypeId pruning = ns3::NboxPruningScheduler::GetTypeId();  // registers it
  const char* global_values = std::getenv("NS_GLOBAL_VALUE");
  const std::string named = global_values != nullptr ? SchedulerTypeIn(global_values) : "";
  ns3::TypeId type = pruning;
  if (!named.empty() && (!ns3::TypeId::LookupByNameFailSafe(named, &type) ||
                         !type.IsChildOf(ns3::Scheduler::GetTypeId()) || !type.HasConstructor())) {
    throw std::invalid_argument(
        "NS_GLOBAL_VALUE: SchedulerType=" + named +
        " is not an ns-3 event scheduler (expected one of ns3::NboxPruningScheduler, the "
        "default, ns3::MapScheduler, ns3::HeapScheduler, ns3::ListScheduler, "
        "ns3::CalendarScheduler, ns3::PriorityQueueScheduler)");
  }
  ns3::ObjectFactory factory;
  factory.SetTypeId(type);
  ns3::Simulator::SetScheduler(factory);
}

}  // namespace nbox::cosim
