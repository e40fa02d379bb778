"""A stand-in for nbox-cosim in nbox-sweep's orchestration tests: same command line, same exit
statuses, same output files in the format of tools/cosim/reports/results_json.cc, in milliseconds.

Its figures are made-up functions of the settings (the tests compare nbox-sweep's summary
with the files this writes, never with the formulas). Behaviour chosen by settings:
  job.world_size=13            the run fails (exit 1), like a simulation that deadlocked
  network.tcp_cc=abort         the process dies of SIGABRT
  unknown key / bad number     bad input (exit 2), nothing written
Environment:
  FAKE_COSIM_LOG=FILE          append the --out folder of every simulated run to FILE
  FAKE_COSIM_RESULTS=FILE      write FILE's content as results.json
  FAKE_COSIM_CHECK=1           offer --check (validate only), as a newer nbox-cosim would
  FAKE_COSIM_SLEEP=S           take S seconds per run
"""

import json
import os
import sys
import time

KEYS = {
    "job": ["world_size", "seed"],
    "topology": ["kind", "host_link"],
    "network": ["tcp_cc", "ecn", "switch_queue"],
    "workload": ["model", "iterations"],
    "output": ["dir", "trace", "progress"],
}
DEFAULTS = {"job.world_size": "8", "job.seed": "1", "topology.kind": "star",
            "topology.host_link": "100Gbps", "network.tcp_cc": "cubic", "network.ecn": "off",
            "network.switch_queue": "4MB", "workload.model": "resnet50",
            "workload.iterations": "3", "output.dir": "", "output.trace": "none",
            "output.progress": "auto"}


def bad_input(message):
    sys.stderr.write(f"nbox-cosim: {message}\n")
    sys.exit(2)


def list_keys():
    for section, keys in KEYS.items():
        print(f"### [{section}]\n\nThe {section}.\n")
        print("| Key | Default | Expected | Meaning |\n|-----|---------|----------|---------|")
        for key in keys:
            print(f"| `{key}` | `{DEFAULTS[section + '.' + key]}` | text | the {key} |")
        print()


def parse(argv):
    settings, scenario, check = dict(DEFAULTS), None, False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--set", "--out", "--seed"):
            if i + 1 == len(argv):
                bad_input(f"{arg} needs a value")
            value = argv[i + 1]
            if arg == "--set":
                key, _, text = value.partition("=")
                if key not in DEFAULTS:
                    bad_input(f"--set {key}: unknown key")
                settings[key] = text
            elif arg == "--out":
                settings["output.dir"] = value
            else:
                settings["job.seed"] = value
            i += 2
        elif arg == "--check" and os.environ.get("FAKE_COSIM_CHECK") == "1":
            check = True
            i += 1
        elif arg.startswith("-"):
            sys.stderr.write(f"The following argument was not expected: {arg}\n")
            sys.exit(109)
        else:
            scenario = arg
            i += 1
    if scenario is None or not os.path.isfile(scenario):
        bad_input(f"cannot read the scenario file {scenario}")
    for key in ("job.world_size", "workload.iterations"):
        if not settings[key].isdigit() or int(settings[key]) < 1:
            bad_input(f"{scenario}: {key} = {settings[key]}: expected a whole number >= 1")
    if not settings["topology.host_link"].endswith("Gbps"):
        bad_input(f"{scenario}: topology.host_link = {settings['topology.host_link']}: "
                  f"expected a rate such as 100Gbps")
    return scenario, settings, check


def results(scenario, settings):
    world = int(settings["job.world_size"])
    gbps = float(settings["topology.host_link"][:-4])
    ecn = settings["network.ecn"] == "on"
    iterations, collectives, t = [], [], 0.0
    for i in range(int(settings["workload.iterations"])):
        compute = 0.05
        exposed = 0.002 * world / gbps * (3.0 if i == 0 else 1.0) + (0.0 if ecn else 0.001)
        iterations.append({"iteration": i, "start_s": t, "end_s": t + compute + exposed,
                           "time_s": compute + exposed, "compute_s": compute,
                           "exposed_comm_s": exposed})
        for b, size in enumerate((25 << 20, 8 << 20)):
            algbw = gbps / 8 * 0.8 / (1 + b) / (2 if i == 0 else 1)
            collectives.append({"iteration": i, "label": f"bucket{b}", "op": "AllReduce",
                                "bytes": size, "ranks": world, "start_s": t, "end_s": t + 0.01,
                                "time_s": 0.01, "algbw_GBps": algbw,
                                "busbw_GBps": algbw * 2 * (world - 1) / world})
        t += compute + exposed
    steady = iterations[1:] or iterations
    ports = [{"from": f"host{h}", "to": "sw0", "link": h, "tx_bytes": 1000 * (h + 1) * world,
              "tx_packets": h + 10, "drops": h % 2, "ecn_marks": h if ecn else 0,
              "peak_queue_bytes": 1500 * h} for h in range(world)]
    return {
        "scenario": {"path": scenario, "settings": settings},
        "topology": {"description": "star", "hosts": world, "switches": 1, "links": world},
        "model": {"name": settings["workload.model"], "parameters": 25557032, "layers": 50,
                  "forward_flops_per_sample": 4.1e9, "source": "fake"},
        "job_start_s": 0.001,
        "steady_iteration_time_s": sum(it["time_s"] for it in steady) / len(steady),
        "collectives_per_iteration": 2,
        "iterations": iterations,
        "collectives": collectives,
        "network": {"payload_bytes_sent": 1, "payload_bytes_delivered": 1, "messages_sent": 1,
                    "messages_delivered": 1, "connections": world, "host_wire_bytes": 2,
                    "wire_bytes": 4, "drops": sum(p["drops"] for p in ports),
                    "retransmissions": world // 2 + (0 if ecn else 3),
                    "retransmitted_bytes": 9000, "ecn_marks": sum(p["ecn_marks"] for p in ports),
                    "peak_queue_bytes": max(p["peak_queue_bytes"] for p in ports),
                    "peak_queue_port": "host->sw0", "ports": ports},
        "simulation": {"events": 1000, "simulated_s": t},
    }


def trace(settings):
    events = []
    for rank in range(int(settings["job.world_size"])):
        events.append({"ph": "M", "name": "process_name", "pid": rank, "tid": 0,
                       "args": {"name": f"rank {rank}"}})
        events.append({"ph": "X", "name": "forward", "cat": "compute", "pid": rank, "tid": 0,
                       "ts": 0.0, "dur": 1000.0, "args": {"iteration": 0}})
        events.append({"ph": "X", "name": "bucket0", "cat": "collective", "pid": rank,
                       "tid": 1, "ts": 800.0 + rank, "dur": 500.0, "args": {"iteration": 0}})
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def write(path, value):
    with open(path + ".tmp", "w") as f:
        json.dump(value, f, indent=2)
    os.replace(path + ".tmp", path)


def main(argv):
    if "--list-keys" in argv:
        list_keys()
        return 0
    if "--help" in argv:
        print("nbox-cosim (fake)\nOptions:\n  --set SECTION.KEY=VALUE\n  --out DIR\n  --seed N")
        if os.environ.get("FAKE_COSIM_CHECK") == "1":
            print("  --check   validate the scenario and exit")
        return 0
    scenario, settings, check = parse(argv)
    if check:
        return 0
    if settings["network.tcp_cc"] == "abort":
        os.abort()
    time.sleep(float(os.environ.get("FAKE_COSIM_SLEEP", "0")))
    if settings["job.world_size"] == "13":
        sys.stderr.write("nbox-cosim: the simulation ran out of events at 0.5 s with 12 of 13 "
                         "ranks finished (a deadlock in the job or a lost message); no results "
                         "written\n")
        return 1
    out = settings["output.dir"] or "results"
    os.makedirs(out, exist_ok=True)
    if os.environ.get("FAKE_COSIM_LOG"):
        with open(os.environ["FAKE_COSIM_LOG"], "a") as log:
            log.write(out + "\n")
    fixture = os.environ.get("FAKE_COSIM_RESULTS")
    if fixture:
        with open(fixture) as f:
            write(os.path.join(out, "results.json"), json.load(f))
    else:
        write(os.path.join(out, "results.json"), results(scenario, settings))
    write(os.path.join(out, "perf.json"), {"scenario": scenario, "wall_s": 0.01})
    if settings["output.trace"] == "chrome":
        write(os.path.join(out, "trace.json"), trace(settings))
    print(f"fake nbox-cosim: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
