"""collbench under SimGrid SMPI (label sim, docs/simulation.md): scripts/simulate runs the real
binary at 64 simulated ranks on a generated GB300 platform; the records are marked simulated,
verified, and never beat their analytic bound. Also the platform generator's bad input."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from conftest import BIN, SOURCE_DIR, read_jsonl, run, validator  # noqa: F401 (validator: a fixture)

SIMULATE = SOURCE_DIR / "scripts" / "simulate"
RANKS = int(os.environ.get("COLLBENCH_SIM_TEST_RANKS", "64"))


def simulate(tmp_path, collbench_args, extra=(), timeout=900):
    env = dict(os.environ)
    env["BUILD_DIR"] = str(Path(BIN).resolve().parents[1])
    cmd = [str(SIMULATE), "--ranks", str(RANKS), "--system", "gb300-nvl72", "--ranks-per-domain", "16",
           "--work-dir", str(tmp_path / "work"), *extra, "--", *collbench_args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def allreduce_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sim")
    out = tmp / "sim.jsonl"
    proc = simulate(tmp, ["run", "allreduce", "-b", "64K", "-e", "1M", "-f", "16", "--algo", "flat,hierarchical",
                          "-n", "5", "-w", "1", "--out", str(out)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return tmp, out, proc


def test_header_names_the_simulation(allreduce_run, validator):  # noqa: F811 (the fixture)
    tmp, out, proc = allreduce_run
    lines = read_jsonl(out)
    for line in lines:
        validator.validate(line)
    header = lines[0]
    sim = header["simulated"]
    assert sim["engine"] == "simgrid-smpi"
    assert sim["version"].startswith("3.")
    platform = tmp / "work" / "platform.xml"
    assert sim["platform"] == str(platform)
    assert sim["platform_sha256"] == hashlib.sha256(platform.read_bytes()).hexdigest()
    assert "network/model:CM02" in sim["config"] and "smpi/coll-selector:mpich" in sim["config"]
    assert sim["watchdog"].startswith("off")
    # Simulated host names, one per rank, rank r on gpu-r.
    assert [h["host"] for h in header["hosts"]] == [f"gpu-{r}" for r in range(RANKS)]
    assert "SIMULATED" in proc.stdout


def test_records_verified_marked_and_within_bound(allreduce_run):
    _, out, _ = allreduce_run
    cases = [l for l in read_jsonl(out) if l["kind"] == "case"]
    assert len(cases) == 4  # 64 KiB and 1 MiB, flat and hierarchical
    for c in cases:
        assert c["simulated"] is True
        assert c["progress"] == "spin"  # a simulation never yields (docs/simulation.md)
        assert c["status"] == "ok", c.get("reason")
        assert c["checked"] and c["wrong"]["total"] == 0
        assert c["num_ranks"] == RANKS and c["domain_sizes"] == [16] * (RANKS // 16)
        # Simulated times are deterministic: every sample of a case is the same (to the ns).
        assert max(c["samples_us"]) - min(c["samples_us"]) < 1e-3
        # Never faster than the analytic bound of its placement.
        assert c["model"]["system"] == "gb300-nvl72"
        assert c["model"]["efficiency"] <= 1.0 + 1e-9, c


def test_gate_refuses_simulated_against_measured(allreduce_run, tmp_path):
    _, out, _ = allreduce_run
    measured = tmp_path / "measured.jsonl"
    lines = read_jsonl(out)
    with open(measured, "w") as f:
        for line in lines:
            line.pop("simulated", None)
            f.write(json.dumps(line) + "\n")
    proc = run(["gate", "--baseline", measured, "--current", out])
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "current is simulated and baseline measured" in proc.stdout
    proc = run(["gate", "--baseline", measured, "--current", out, "--allow-simulated"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_in_switch_algorithms_are_waived_in_simulation(tmp_path):
    out = tmp_path / "nvls.jsonl"
    proc = simulate(tmp_path, ["run", "allreduce", "-b", "1M", "-e", "1M", "--algo", "nvls", "-n", "2", "-w", "0",
                               "--out", str(out)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (case,) = [l for l in read_jsonl(out) if l["kind"] == "case"]
    assert case["status"] == "waived"
    assert case["reason"].startswith("simulation: SMPI models no in-switch reduction")
    assert case["bytes"] == 1 << 20 or case["bytes"] == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--system", "no-such-system", "--gpus", "8"], "no-such-system"),
        (["--system", "gb300-nvl72", "--gpus", "256", "--ranks-per-domain", "80"],
         "--ranks-per-domain 80: system 'gb300-nvl72' has 72 GPUs per scale-up domain; accepted: 1 to 72"),
        (["--system", "gb300-nvl72", "--gpus", "8", "--degrade", "nic-99=0.5"],
         "--degrade nic-99: no such link; accepted: nvl-G or nic-G with G in 0..7, uplink-D with D in 0..0"),
        (["--system", "gb300-nvl72", "--gpus", "8", "--degrade", "nic-1=2"], "the factor is outside (0, 1]"),
    ],
)
def test_platform_bad_input(tmp_path, args, message):
    out = tmp_path / "p.xml"
    proc = run(["simulate", "platform", *args, "--out", out])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert not out.exists() and not Path(str(out) + ".hosts").exists()


def test_platform_refuses_to_overwrite(tmp_path):
    out = tmp_path / "p.xml"
    assert run(["simulate", "platform", "--system", "gb300-nvl72", "--gpus", "4", "--out", out]).returncode == 0
    before = out.read_text()
    proc = run(["simulate", "platform", "--system", "gb300-nvl72", "--gpus", "8", "--out", out])
    assert proc.returncode == 2 and "exists; pass --force" in proc.stderr
    assert out.read_text() == before


def test_front_page_figures_script_runs_at_reduced_size(tmp_path):
    """scripts/front-page-figures --reduced: the README figure's pipeline (simulated runs at 16, 32 and
    64 ranks, weak-scaling reports calibrated at 16, plots) still runs end to end."""
    env = dict(os.environ)
    env["BUILD_DIR"] = str(Path(BIN).resolve().parents[1])
    env["TMPDIR"] = str(tmp_path)
    env["KEEP"] = "1"  # leave the work folder, to look at what it wrote
    proc = subprocess.run([str(SOURCE_DIR / "scripts" / "front-page-figures"), "--reduced"], capture_output=True,
                          text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (work,) = tmp_path.glob("collbench-front.*")
    figures = ["step-model-vs-published.png", "published-gb200-nvl72-allreduce.png",
               "weak-scaling-sim-gb300-allreduce.png", "weak-scaling-sim-gb300-alltoall.png",
               "busbw-nccl-tests-2x8xH100.png"]
    for name in figures:
        assert name in proc.stdout
        assert (work / "img" / name).stat().st_size > 0, name
    # The simulated all-to-all ran collbench's posted schedule, and its records say so.
    for n in (16, 32, 64):
        lines = (work / "simulated" / f"alltoall-256K-{n}.jsonl").read_text().splitlines()
        header, cases = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
        for setting in ("smpi/send-is-detached-thresh:0", "maxmin/precision:1e-3"):
            assert setting in header["simulated"]["config"]
        assert [(c["algo_requested"], c["algo_used"], c["status"]) for c in cases] == [("linear", "linear", "ok")]
        assert cases[0]["simulated"] is True and cases[0]["wrong"]["total"] == 0


def test_an_input_error_on_every_simulated_rank_exits_2_with_one_message(tmp_path):
    # The ranks of an input error agree before they leave (run/session.cpp every_rank_arrives): in
    # a simulation the ranks are contexts of one thread, so that agreement must not run inside the
    # catch block, whose exception another rank's handling would free (before, several ranks
    # returned garbage such as 160 at 8 ranks), and it is a plain barrier (no host-time limit).
    env_fault = dict(os.environ, COLLBENCH_FAULT="bogus")
    env_fault["BUILD_DIR"] = str(Path(BIN).resolve().parents[1])
    cmd = [str(SIMULATE), "--ranks", str(RANKS), "--system", "gb300-nvl72", "--work-dir", str(tmp_path / "work"), "--",
           "run", "allreduce", "-b", "8", "-e", "8"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env_fault)
    assert proc.returncode == 2, proc.stderr[-3000:]
    returns = [line.rsplit(":", 1)[1].strip() for line in proc.stderr.splitlines() if "Return value :" in line]
    assert returns == ["2"] * RANKS, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("collbench: error")]
    assert errors == ["collbench: error: COLLBENCH_FAULT: unknown fault kind 'bogus'; accepted: corrupt, delay, slow, "
                      "slow-pair, hang"], proc.stderr[-3000:]
