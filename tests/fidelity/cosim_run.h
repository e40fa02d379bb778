// The nbox-cosim side of the fidelity test: the same job with some ranks real and the others
// emulated by nbox-cosim (mirror mode) on a simulated star shaped like the namespace network.
#pragma once

#include <string>

namespace nbox::fidelity {

struct CosimJob {
  int world = 2;
  std::string host_link = "200Mbps";  // scenario syntax
  int mtu = 9000;
  std::string real_ranks = "0";
  std::string clock = "virtual";
  std::string payload = "self";
  std::string launch;     // the real rank's command line ({rank} substituted by nbox-cosim)
  std::string extra_ini;  // more scenario lines, appended as they are
};

struct CosimRun {
  int status = -1;
  std::string output;     // nbox-cosim's stdout and stderr
  std::string rank0_log;  // what real rank 0 printed (OUTPUT_DIR/rank0.log)
  std::string scenario;   // the scenario text that ran
};

// The scenario of `job`: a star of `world` hosts with `host_link` links and `mtu`, TCP Cubic
// with Linux's minimum RTO,
// one channel of 1 MiB chunks (what the host runtime uses by default and the ground truth ran
// with), and the [realranks] section.
std::string CosimScenario(const CosimJob& job, const std::string& output_dir);

// Writes the scenario into a fresh temporary folder, runs nbox-cosim on it and collects the
// output and rank 0's log; removes the folder.
CosimRun RunCosimJob(const CosimJob& job);

}  // namespace nbox::fidelity
