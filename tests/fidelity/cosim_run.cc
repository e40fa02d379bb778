#include "tests/fidelity/cosim_run.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/fidelity/fidelity_support.h"

namespace nbox::fidelity {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string CosimScenario(const CosimJob& job, const std::string& output_dir) {
  std::ostringstream ini;
  ini << "[job]\nworld_size = " << job.world << "\n\n"
      << "[topology]\nkind = star\nhost_link = " << job.host_link
      << "\n\n"
      // Linux's minimum RTO: nbox's default (1 ms) suits 100 Gb/s fabrics, but at 200 Mb/s a
      // 9000-byte packet takes 360 us and queued data makes it fire spuriously. And Linux's
      // delayed ACK (40 ms), so that every second segment is ACKed, as the namespaces do.
      << "[network]\ntcp_cc = cubic\ntcp_min_rto = 200ms\ntcp_delayed_ack = 40ms\nmtu = " << job.mtu
      << "\n\n"
      << "[collectives]\nchannels = 1\nchunk = 1MiB\n\n"
      << "[output]\ndir = " << output_dir << "\nprogress = off\n\n"
      << "[realranks]\nranks = " << job.real_ranks << "\nclock = " << job.clock
      << "\npeers = mirror\npayload = " << job.payload << "\nlaunch = " << job.launch << "\n"
      << job.extra_ini;
  return ini.str();
}

CosimRun RunCosimJob(const CosimJob& job) {
  CosimRun run;
  char directory[] = "/tmp/nbox-fidelity-cosim-XXXXXX";
  if (mkdtemp(directory) == nullptr) {
    run.output = "cannot create a temporary folder";
    return run;
  }
  const std::string dir = directory;
  run.scenario = CosimScenario(job, dir + "/out");
  std::ofstream(dir + "/job.ini") << run.scenario;
  const CommandResult result = RunCommand("timeout 900 " NBOX_COSIM_PATH " " + dir + "/job.ini");
  run.status = result.status;
  run.output = result.output;
  run.rank0_log = ReadFile(dir + "/out/rank0.log");
  RunCommand("rm -rf " + dir);
  return run;
}

}  // namespace nbox::fidelity
