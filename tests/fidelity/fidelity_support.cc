#include "tests/fidelity/fidelity_support.h"

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace nbox::fidelity {

CommandResult RunCommand(const std::string& command) {
  return test_support::RunCommand(command + " 2>&1");
}

CommandResult RunNetnsJob(int world, const std::string& rate, int mtu,
                          const std::string& program_and_arguments,
                          const std::string& layout_options) {
  std::ostringstream command;
  command << NBOX_NETNS_JOB_SCRIPT << " --world " << world << " --rate " << rate << " --mtu " << mtu
          << " " << layout_options << " --plugin " << NBOX_TCP_PLUGIN_PATH << " --root "
          << NBOX_FIDELITY_ROOT_PATH << " -- " << program_and_arguments;
  return RunCommand(command.str());
}

std::map<std::string, std::string> ResultFields(const std::string& output) {
  std::map<std::string, std::string> fields;
  const size_t at = output.rfind("RESULT ");
  if (at == std::string::npos) return fields;
  std::istringstream line(output.substr(at + 7, output.find('\n', at) - at - 7));
  std::string field;
  while (line >> field) {
    const size_t equals = field.find('=');
    if (equals != std::string::npos) fields[field.substr(0, equals)] = field.substr(equals + 1);
  }
  return fields;
}

double RingAllReduceSeconds(int world, double bytes, double rate_bps, int mtu) {
  const double payload_fraction = static_cast<double>(mtu - 52) / (mtu + 14);
  const double sent = 2.0 * (world - 1) / world * bytes;
  return sent * 8.0 / (rate_bps * payload_fraction);
}

std::string NoGroundTruth(double truth_us, double ideal_us) {
  if (truth_us <= kTruthSlowdownLimit * ideal_us) return "";
  std::ostringstream why;
  why.precision(1);
  why << std::fixed << "no ground truth on this machine now: the namespaces took " << truth_us / 1e3
      << " ms, " << 100 * (truth_us / ideal_us - 1) << "% over the links' alpha-beta time of "
      << ideal_us / 1e3 << " ms (more than " << 100 * (kTruthSlowdownLimit - 1)
      << "%): something other than the links set it (late timers starving HTB, or CPU)";
  return why.str();
}

std::string UnsteadyGroundTruth(double fastest_us, double slowest_us, double tolerance) {
  if (slowest_us <= (1 + tolerance) * fastest_us) return "";
  std::ostringstream why;
  why.precision(1);
  why << std::fixed << "no ground truth on this machine now: the namespaces' own runs took "
      << fastest_us / 1e3 << " to " << slowest_us / 1e3 << " ms, "
      << 100 * (slowest_us / fastest_us - 1) << "% apart (more than the " << 100 * tolerance
      << "% nbox is judged by)";
  return why.str();
}

std::string TruthAwayFromItsClosedForm(double truth_us, double nbox_us, double ideal_us,
                                       double tolerance) {
  const bool compared_badly = std::fabs(nbox_us - truth_us) > tolerance * truth_us;
  const bool truth_off = truth_us > (1 + tolerance) * ideal_us;
  const bool nbox_on = std::fabs(nbox_us - ideal_us) <= tolerance * ideal_us;
  if (!(compared_badly && truth_off && nbox_on)) return "";
  std::ostringstream why;
  why.precision(1);
  why << std::fixed << "no ground truth on this machine now: the namespaces took " << truth_us / 1e3
      << " ms, " << 100 * (truth_us / ideal_us - 1) << "% over the links' alpha-beta time of "
      << ideal_us / 1e3 << " ms, while nbox's " << nbox_us / 1e3 << " ms is within the "
      << 100 * tolerance
      << "% it is judged by of that time: the machine, not the links, set the truth";
  return why.str();
}

}  // namespace nbox::fidelity
