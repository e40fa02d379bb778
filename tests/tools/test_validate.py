"""nbox-validate (tools/validate) as a user runs it: two rows simulated, the table printed with
the median and worst error, and the files written; errors computed from the results each run
wrote (the measured figure's time against the simulated steady iteration's)."""

import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(REPO, "tools", "validate", "nbox-validate")
ROWS = ["h100-llama2-7b-8", "a100-gpt-1.7b-32"]


def run(tmp_path, *args):
    return subprocess.run([sys.executable, TOOL, "--cosim", os.environ["NBOX_COSIM"], *args],
                          capture_output=True, text=True, cwd=REPO)


def test_two_rows_run_and_their_errors_follow_from_the_results(tmp_path):
    out = tmp_path / "v"
    done = run(tmp_path, "--rows", ",".join(ROWS), "-j", "2", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "analytical: 2 rows, median |error|" in done.stdout
    table = json.loads((out / "validation.json").read_text())
    rows = {r["id"]: r for r in table["rows"]}
    assert set(rows) == set(ROWS)
    with open(os.path.join(REPO, "tools", "validate", "rows.json")) as f:
        published = {r["id"]: r for r in json.load(f)["rows"]}
    # Llama 2 7B: 128 sequences of 4096 tokens over 8 GPUs at 16,847 tokens/s per GPU.
    llama = rows["h100-llama2-7b-8"]
    assert abs(llama["measured_iteration_s"] - 128 * 4096 / (16847 * 8)) < 1e-9
    results = json.loads((out / "runs" / "h100-llama2-7b-8-analytical" / "results.json")
                         .read_text())
    assert llama["predicted_iteration_s"] == results["steady_iteration_time_s"]
    assert abs(llama["error"] - (llama["measured_iteration_s"] / llama["predicted_iteration_s"] - 1)) < 1e-12
    assert results["workload"]["compute"] == "model on h100 (fp8)"
    # Megatron 2021's own FLOP count: 96 B s l h^2 (1 + s/6h + V/16lh) at 137 TFLOP/s x 32.
    b, s, l, h, v = 512, 2048, 24, 2304, 51200
    flops = 96.0 * b * s * l * h * h * (1 + s / (6.0 * h) + v / (16.0 * l * h))
    assert abs(rows["a100-gpt-1.7b-32"]["measured_iteration_s"] - flops / (137e12 * 32)) < 1e-9
    assert published["a100-gpt-1.7b-32"]["gaps"] == {"workload.micro_batch": "1"}
    assert (out / "validation.csv").exists()


def test_an_unknown_row_is_named(tmp_path):
    done = run(tmp_path, "--rows", "no-such-row", "--out", str(tmp_path / "v"))
    assert done.returncode != 0
    assert "no row no-such-row" in done.stderr
