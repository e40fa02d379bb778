"""nbox-import astra-sim on ASTRA-sim's own example setups (tests/workloads/fixtures/astra-sim,
copied from its examples/ folder): the scenario it writes, checked key by key against the
inputs by hand, runs in nbox-cosim; ASTRA-sim's ring all-gather takes its alpha-beta time;
what has no equivalent is said; bad inputs are named and leave nothing written."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMPORT = os.path.join(ROOT, "tools", "import", "nbox-import")
COSIM = os.environ["NBOX_COSIM"]
FIXTURES = os.path.join(ROOT, "tests", "workloads", "fixtures", "astra-sim")


def fixture(*parts):
    return os.path.join(FIXTURES, *parts)


def run_import(out, workload, system, network, *extra):
    return subprocess.run(
        [sys.executable, IMPORT, "astra-sim", "--workload", workload, "--system", system,
         "--network", network, "--out", str(out), *extra],
        capture_output=True, text=True)


def keys(path):
    """The scenario's "section.key" -> value, comments left out."""
    section, found = None, {}
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line:
            key, value = (part.strip() for part in line.split("=", 1))
            found[f"{section}.{key}"] = value
    return found


def run_cosim(scenario, out):
    result = subprocess.run([COSIM, str(scenario), "--out", str(out)], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.load(open(os.path.join(out, "results.json")))


def test_hgx_h100_setup_becomes_a_star_with_its_collectives(tmp_path):
    out = tmp_path / "hgx.ini"
    result = run_import(out, fixture("microbenchmarks", "all_reduce", "8npus_1MB", "all_reduce"),
                        fixture("system", "HGX-H100-validated.json"),
                        fixture("network", "HGX-H100-validated.yml"),
                        "--remote-memory", fixture("remote_memory", "no_memory_expansion.json"))
    assert result.returncode == 0, result.stderr
    found = keys(out)
    # HGX-H100-validated.yml: a Switch of 8 NPUs, 400 GB/s, 936.25 ns; the system's ring
    # implementations, LIFO, 2 active chunks.
    assert found["job.world_size"] == "8"
    assert found["topology.kind"] == "star"
    assert found["topology.hosts"] == "8"
    assert found["topology.host_link"] == "3200Gbps"
    assert found["topology.link_latency"] == "936.25ns"
    assert found["collectives.allreduce"] == "ring"
    assert found["collectives.order"] == "lifo"
    assert found["collectives.channels"] == "2"
    assert found["workload.kind"] == "chakra"
    assert found["workload.trace_prefix"] == "all_reduce"
    assert found["network.model"] == "flow"
    # What nbox cannot do as ASTRA-sim does is said, on the terminal and in the file.
    text = out.read_text()
    for said in ("all-to-all-implementation = ring", "preferred-dataset-splits = 4",
                 "endpoint-delay = 10", "local-mem-bw = 3350", "boost-mode = 0"):
        assert said in result.stdout
        assert said in text.replace("\n#     ", " ")
    results = run_cosim(out, tmp_path / "run")
    assert results["status"] == "complete"
    assert results["workload"]["trace_prefix"] == "all_reduce"


def test_a_ring_of_npus_moves_an_all_gather_in_astra_sims_alpha_beta_time(tmp_path):
    out = tmp_path / "ring.ini"
    result = run_import(out, fixture("microbenchmarks", "all_gather", "4npus_1MB", "all_gather"),
                        fixture("system", "Ring_4chunks.json"),
                        fixture("network", "Ring_4npus.yml"))
    assert result.returncode == 0, result.stderr
    assert keys(out)["topology.kind"] == "file"
    # Ring_4npus.yml: 4 NPUs, 50 GB/s, 500 ns: each NPU on a switch of its own at twice the
    # ring's rate, the switches in a ring.
    topology = [line for line in (tmp_path / "ring.topo").read_text().splitlines()
                if line and not line.startswith("#")]
    assert topology == [
        "host h0..h3", "switch r0 r1 r2 r3",
        "link h0 r0 800Gbps 0ns", "link h1 r1 800Gbps 0ns", "link h2 r2 800Gbps 0ns",
        "link h3 r3 800Gbps 0ns",
        "link r0 r1 400Gbps 500ns", "link r1 r2 400Gbps 500ns", "link r2 r3 400Gbps 500ns",
        "link r3 r0 400Gbps 500ns"]
    # ASTRA-sim's ring all-gather of comm_size 1 MiB a rank: 3 steps of 1 MiB over a 50 GB/s
    # link of 500 ns. nbox adds packet framing and the extra store-and-forward hop: within 2%.
    alpha_beta = 3 * (500e-9 + 1048576 / 50e9)
    results = run_cosim(out, tmp_path / "run")
    time_s = results["iterations"][0]["time_s"]
    assert abs(time_s / alpha_beta - 1) < 0.02, (time_s, alpha_beta)


def test_what_cannot_be_imported_is_named_and_nothing_is_written(tmp_path):
    out = tmp_path / "bad.ini"
    workload = fixture("microbenchmarks", "all_reduce", "4npus_1MB", "all_reduce")
    system = fixture("system", "Ring_4chunks.json")
    two_d = tmp_path / "2d.yml"
    two_d.write_text("topology: [ Ring, Switch ]\nnpus_count: [ 2, 2 ]\n"
                     "bandwidth: [ 50.0, 25.0 ]\nlatency: [ 500.0, 500.0 ]\n")
    result = run_import(out, workload, system, str(two_d))
    assert result.returncode == 1
    assert f"{two_d}: 2 dimensions (Ring, Switch): nbox imports one" in result.stderr
    torus = tmp_path / "torus.yml"
    torus.write_text("topology: [ Torus ]\nnpus_count: [ 4 ]\nbandwidth: [ 50 ]\n"
                     "latency: [ 500 ]\n")
    result = run_import(out, workload, system, str(torus))
    assert f"{torus}: topology 'Torus': expected Ring, FullyConnected or Switch" in result.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "scheduling-policy": "LIFO",\n  oops\n}\n')
    result = run_import(out, workload, str(broken), fixture("network", "Ring_4npus.yml"))
    assert result.returncode == 1
    assert f"{broken}:3: not JSON" in result.stderr
    result = run_import(out, str(tmp_path / "nothing"), system, fixture("network", "Ring_4npus.yml"))
    assert result.returncode == 1
    assert "no trace nothing.0.et" in result.stderr
    assert not out.exists()
    assert not (tmp_path / "bad.topo").exists()


def test_the_roofline_becomes_the_rate_compute_nodes_without_a_duration_take(tmp_path):
    system = json.load(open(fixture("system", "Ring_4chunks.json")))
    out = tmp_path / "off.ini"
    result = run_import(out, fixture("microbenchmarks", "all_reduce", "4npus_1MB", "all_reduce"),
                        fixture("system", "Ring_4chunks.json"), fixture("network", "Ring_4npus.yml"))
    assert result.returncode == 0, result.stderr
    assert "peak-perf = 900 with the roofline off" in result.stdout
    assert "workload.gpu_peak" not in keys(out)
    system["roofline-enabled"] = 1
    on = tmp_path / "roofline.json"
    on.write_text(json.dumps(system))
    out = tmp_path / "on.ini"
    result = run_import(out, fixture("microbenchmarks", "all_reduce", "4npus_1MB", "all_reduce"),
                        str(on), fixture("network", "Ring_4npus.yml"))
    assert result.returncode == 0, result.stderr
    found = keys(out)
    # Ring_4chunks.json: peak-perf 900 (TFLOP/s), local-mem-bw 1600 (GB/s).
    assert found["workload.gpu_peak"] == "900TFLOPS"
    assert found["workload.gpu_util"] == "1"
    assert found["workload.gpu_memory_bw"] == "1600GB/s"
    check = subprocess.run([COSIM, str(out), "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
