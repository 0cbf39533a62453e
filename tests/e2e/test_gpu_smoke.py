"""scripts/gpu-smoke without a GPU: SMOKE_BACKEND=mpi runs its planning and every collective step
on the mpi backend on 1 and 2 ranks through the build's mpiexec (each family's flags and expected
verdict from `collbench run --list-json`, so the flags are proven accepted), and the record checks
of scripts/gpu_smoke.py are run on real records of the first H200 run (tests/data/gpu-runs/) and
on doctored copies, which must fail loudly when a step tested nothing."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN, SOURCE_DIR, run

SCRIPT = SOURCE_DIR / "scripts" / "gpu-smoke"
CHECKS = SOURCE_DIR / "scripts" / "gpu_smoke.py"
DATA = SOURCE_DIR / "tests" / "data" / "gpu-runs"


def checks(*args):
    return subprocess.run([sys.executable, str(CHECKS)] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=60)


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    res = run(["run", "--list-json"])
    assert res.returncode == 0, res.stderr
    path = tmp_path_factory.mktemp("registry") / "registry.json"
    path.write_text(res.stdout)
    return path


def plan(registry, ranks):
    res = checks("plan", registry, "--ranks", ranks, "--max-bytes", "64K", "--tokens", "16,64")
    assert res.returncode == 0, res.stderr
    rows = [line.split("\t") for line in res.stdout.splitlines()]
    return {name: (expect, flags.split()) for name, expect, flags in rows}


def test_list_json_describes_every_collective():
    listed = run(["run", "--list"]).stdout
    names = [line.split()[0] for line in listed.split("collectives:")[1].split("dtypes:")[0].splitlines() if line.strip()]
    doc = json.loads(run(["run", "--list-json"]).stdout)
    assert [c["name"] for c in doc["collectives"]] == names
    by_name = {c["name"]: c for c in doc["collectives"]}
    assert by_name["allreduce"]["sizes"] == "bytes" and by_name["allreduce"]["has_redop"]
    assert by_name["moe-dispatch"]["sizes"] == "tokens"
    assert (by_name["ep-dp-concurrent"]["min_ranks"], by_name["ep-dp-concurrent"]["min_domains"]) == (2, 2)
    # MoE's default workload (256 experts) does not split over 3 ranks: waived there.
    assert by_name["moe-combine"]["domains_needed"][:4] == [1, 1, 0, 1]
    assert "float32" in doc["dtypes"] and "pat" in doc["algorithms"]


def test_plan_gives_each_family_its_flags_and_verdict(registry):
    one, two, three = plan(registry, 1), plan(registry, 2), plan(registry, 3)
    for name in ("moe-dispatch", "moe-combine", "moe-roundtrip"):
        expect, flags = one[name]
        assert expect == "ok" and flags == ["--tokens", "16,64"], (name, flags)  # never -b/-e (refused, exit 2)
        assert three[name][0] == "waived"
    assert one["ep-dp-concurrent"][0] == "waived"  # one rank, one domain
    assert two["ep-dp-concurrent"] == ("ok", two["ep-dp-concurrent"][1])
    assert two["ep-dp-concurrent"][1][-2:] == ["--ranks-per-domain", "1"]
    assert "-o" in one["allreduce"][1] and "-o" not in one["allgather"][1]
    assert "--in-place" not in one["alltoallv"][1] and "--in-place" in one["broadcast"][1]


def test_plan_above_16_ranks_follows_each_familys_own_waiver(tmp_path, registry):
    """gpu-smoke on 24 GPUs (3 nodes of 8) or an NVL72 rack: the verdicts come from each family's
    own waiver at that rank count, asked by one process (`--list-ranks`), not from a guess."""
    res = run(["run", "--list-json", "--list-ranks", "72"])
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["list_ranks"] == 72 and {len(c["domains_needed"]) for c in doc["collectives"]} == {72}
    path = tmp_path / "registry-72.json"
    path.write_text(res.stdout)
    p16, p24, p72 = plan(path, 16), plan(path, 24), plan(path, 72)
    for name in ("moe-dispatch", "moe-combine", "moe-roundtrip"):
        # DeepSeek-V3's 256 experts split over 16 ranks, not over 24 or 72: waived there.
        assert p16[name][0] == "ok" and p24[name][0] == "waived" and p72[name][0] == "waived", name
    assert p24["allreduce"][0] == "ok" and "--ranks-per-domain" not in p24["allreduce"][1]
    # ep-dp-concurrent: its fewest equal domains, 2.
    assert p24["ep-dp-concurrent"][0] == "ok" and p24["ep-dp-concurrent"][1][-2:] == ["--ranks-per-domain", "12"]
    assert p72["ep-dp-concurrent"][0] == "ok" and p72["ep-dp-concurrent"][1][-2:] == ["--ranks-per-domain", "36"]
    # The default list covers 1..16 ranks: a plan beyond it is refused, naming the flag that covers it.
    beyond = checks("plan", registry, "--ranks", 24)
    assert beyond.returncode == 2 and beyond.stdout == ""
    assert "lists 1..16 ranks, not 24: write it with `collbench run --list-json --list-ranks 24`" in beyond.stderr
    for args in (["--list-json", "--list-ranks", "0"], ["--list-json", "--list-ranks", "4097"]):
        bad = run(["run"] + args)
        assert bad.returncode == 2 and "expected a rank count from 1 to 4096" in bad.stderr, bad.stderr
    alone = run(["run", "--list-ranks", "24"])
    assert alone.returncode == 2 and "--list-ranks applies only to --list-json" in alone.stderr


def test_smoke_script_runs_every_step_on_the_mpi_backend(tmp_path):
    env = dict(os.environ)
    env.update({"SMOKE_BACKEND": "mpi", "BUILD_DIR": str(Path(BIN).resolve().parents[1]), "SMOKE_OUT": str(tmp_path)})
    env.pop("SMOKE_RANKS", None)
    res = subprocess.run([str(SCRIPT)], capture_output=True, text=True, timeout=900, env=env)
    log = (tmp_path / "smoke.log").read_text()
    assert res.returncode == 0, res.stderr[-4000:]
    assert "all steps passed" in res.stderr
    doc = json.loads((tmp_path / "registry.json").read_text())
    for c in doc["collectives"]:
        for suffix, ranks in (("", 1), ("-np2", 2)):
            expect = "waived" if c["domains_needed"][ranks - 1] == 0 else "ok"
            assert f"== records {c['name']}{suffix} (expect {expect})" in res.stderr, (c["name"], ranks)
            assert f"expected {expect} on {ranks} rank(s)" in log
    assert "ep-dp-concurrent.jsonl: 0 ok, 4 waived" in res.stderr
    assert "ctest -L gpu: skipped" in res.stderr and "nvls harness: skipped (needs a GPU)" in res.stderr
    # Two ranks really ran (the build's mpiexec, not N singletons): the header names both.
    header = json.loads((tmp_path / "allreduce-np2.jsonl").read_text().splitlines()[0])
    assert len(header["hosts"]) == 2
    # Step 8: locate and accept ran on 2 ranks and every record they wrote was checked.
    for step, files in (("locate", ("records-pairwise.jsonl", "records-skew.jsonl")),
                        ("accept", ("records-default.jsonl", "records-ranks-per-domain-1.jsonl"))):
        assert f"== {step} records (2 ranks)" in res.stderr
        for name in files:
            line = next((x for x in res.stderr.splitlines() if f"{tmp_path}/{step}-np2/{name}: " in x), "")
            assert line.endswith("0 problem(s) (expected any on 2 rank(s))"), (name, line)


def test_records_check_any_accepts_waivers_and_refuses_failures(tmp_path):
    nvls = [json.loads(line) for line in (DATA / "h200-2026-12-04-nvls-1.jsonl").read_text().splitlines()]
    path = tmp_path / "tool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in nvls))
    mixed = checks("records", path, "--expect", "any", "--ranks", 1)
    assert mixed.returncode == 0, mixed.stdout
    cases = [r for r in nvls if r.get("kind") == "case"]
    assert {r["status"] for r in cases} == {"ok", "waived"}  # the data holds both kinds
    failed = next(r for r in cases if r["status"] == "ok")
    failed.update(status="failed", reason="1 wrong element(s) on rank 0")
    path.write_text("".join(json.dumps(r) + "\n" for r in nvls))
    bad = checks("records", path, "--expect", "any", "--ranks", 1)
    assert bad.returncode == 1 and "bad case: " + failed["case_key"] + " failed" in bad.stdout, bad.stdout


def test_records_check_on_the_h200_run(tmp_path):
    epdp = DATA / "h200-2026-12-04-ep-dp-concurrent.jsonl"
    res = checks("records", epdp, "--expect", "waived", "--ranks", 1)
    assert res.returncode == 0, res.stdout
    assert "waived because: ep-dp-concurrent needs at least 2 domains" in res.stdout
    # What the first run's script demanded (an ok case), and the wrong world size, fail.
    assert checks("records", epdp, "--expect", "ok", "--ranks", 1).returncode == 1
    wrong_world = checks("records", epdp, "--expect", "waived", "--ranks", 2)
    assert wrong_world.returncode == 1 and "the run had 1 rank(s), expected 2" in wrong_world.stdout
    # A step that wrote no case tested nothing.
    header_only = tmp_path / "header-only.jsonl"
    header_only.write_text(epdp.read_text().splitlines()[0] + "\n")
    empty = checks("records", header_only, "--expect", "waived", "--ranks", 1)
    assert empty.returncode == 1 and "tested nothing" in empty.stdout


def doctored(tmp_path, change):
    lines = [json.loads(line) for line in (DATA / "h200-2026-12-04-nvls-1.jsonl").read_text().splitlines()]
    lines = change(lines)
    path = tmp_path / "nvls.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_nvls_check_on_the_h200_run(tmp_path):
    # The lent H200 is one GPU of a VM with no NVSwitch in sight: "multicast unsupported" is its answer.
    res = checks("nvls", DATA / "h200-2026-12-04-nvls-1.jsonl", "--ranks", 1, "--machine", "standalone")
    assert res.returncode == 0, res.stdout
    assert "ring allreduce      ok (algo_used ring)" in res.stdout
    assert "nvls allreduce      waived: multicast unsupported" in res.stdout

    def waive_ring(lines):
        for r in lines:
            if r.get("algo_requested") == "ring" and r["collective"] == "allreduce":
                r.update(status="waived", reason="something unexpected")
        return lines

    res = checks("nvls", doctored(tmp_path, waive_ring), "--ranks", 1, "--machine", "standalone")
    assert res.returncode == 1 and "ring waived for a reason a healthy standalone machine does not give" in res.stdout

    def forget_algo_used(lines):
        for r in lines:
            if r.get("algo_requested") == "tree":
                r["algo_used"] = None
        return lines

    res = checks("nvls", doctored(tmp_path, forget_algo_used), "--ranks", 1, "--machine", "standalone")
    assert res.returncode == 1 and "tree ran but algo_used is None" in res.stdout

    res = checks("nvls", doctored(tmp_path, lambda ls: [r for r in ls if r.get("algo_requested") != "ring"]),
                 "--ranks", 1, "--machine", "standalone")
    assert res.returncode == 1 and "ring: no record: the step tested nothing" in res.stdout
    # Several GPUs asked for, one ran (a bare mpiexec of another MPI starts singletons).
    res = checks("nvls", DATA / "h200-2026-12-04-nvls-1.jsonl", "--ranks", 8, "--machine", "standalone")
    assert res.returncode == 1 and "expected 8" in res.stdout


def test_nvls_check_expects_multicast_behind_an_nvswitch(tmp_path):
    """The same records on a node whose GPUs share an NVSwitch: "multicast unsupported" is a false
    waiver there (the driver or fabric manager is broken), so the check fails on it."""
    res = checks("nvls", DATA / "h200-2026-12-04-nvls-1.jsonl", "--ranks", 1, "--machine", "nvswitch")
    assert res.returncode == 1, res.stdout
    assert ("nvls waived for a reason a healthy nvswitch machine does not give on 1 GPU(s): multicast unsupported"
            in res.stdout)
    assert "cb-multimem waived for a reason a healthy nvswitch machine" in res.stdout

    # One GPU of such a node reads multicast 1 and is waived as a domain of one: accepted.
    def one_gpu_of_a_switch(lines):
        for r in lines:
            if r.get("status") == "waived" and "multicast unsupported" in r.get("reason", ""):
                r["reason"] = ("domain too small: 1 GPU(s) of this communicator share an NVSwitch domain (1 rank(s) "
                               "in 1 domain(s), by NCCL's LSA team); in-switch reduction needs at least 2")
        return lines

    res = checks("nvls", doctored(tmp_path, one_gpu_of_a_switch), "--ranks", 1, "--machine", "nvswitch")
    assert res.returncode == 0, res.stdout
    assert res.stdout.rstrip().endswith("of a nvswitch machine, 0 problem(s)")


def smoke_module():
    spec = importlib.util.spec_from_file_location("gpu_smoke", CHECKS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_expected_waivers_by_machine_and_rank_count():
    m = smoke_module()
    # Behind an NVSwitch, 8 GPUs of one node: nvls and cb-multimem must run; NVLSTree is off on one node.
    assert m.expected_waivers("nvls", "nvswitch", 8) == ()
    assert m.expected_waivers("cb-multimem", "nvswitch", 8) == ()
    assert m.expected_waivers("nvlstree", "nvswitch", 8) == ("NCCL disables NVLSTree on a single node",)
    assert m.expected_waivers("nvls", "nvswitch", 1) == ("domain too small",)
    assert m.expected_waivers("nvls", "nvswitch", 72) == ("NCCL skips NVLS",)  # an NVL72 rack as one node
    assert m.expected_waivers("nvls", "nvswitch", 8, nvls_off=True) == ("NCCL_NVLS_ENABLE=0",)
    # No NVSwitch: no multicast, whatever the rank count.
    assert "multicast unsupported" in m.expected_waivers("nvls", "standalone", 2)
    assert "multicast unsupported" not in m.expected_waivers("nvls", "nvswitch", 2)
    for algo in ("ring", "tree", "symmetric"):
        assert m.expected_waivers(algo, "standalone", 1) == () and m.expected_waivers(algo, "nvswitch", 8) == ()


def test_machine_kind_from_nvswitch_devices_and_fabric_state(tmp_path):
    m = smoke_module()
    hgx = "GPU 00000000:18:00.0\n    Fabric\n        State                 : Completed\n        Status : Success\n"
    pcie = "GPU 00000000:00:06.0\n    Fabric\n        State                 : N/A\n        Status : N/A\n"
    assert m.machine_kind(hgx, 0) == "nvswitch"  # an NVL72 tray: the switches are elsewhere
    assert m.machine_kind(pcie, 4) == "nvswitch"  # an HGX board: /dev/nvidia-nvswitch0..3
    assert m.machine_kind(pcie, 0) == "standalone"
    assert m.machine_kind("    Fabric\n    Other : x\n        State : Completed\n", 0) == "nvswitch"
    assert m.machine_kind("    Clocks\n        State : Completed\n", 0) == "standalone"  # not the fabric's
    query = tmp_path / "smi.txt"
    query.write_text(hgx)
    res = checks("machine", "--smi-query", query, "--nvswitch-devices", 0)
    assert res.returncode == 0 and res.stdout == "nvswitch\n", res.stdout + res.stderr


def test_gpu_ctests_start_with_the_mpiexec_preflags(tmp_path):
    """tests/gpu/CMakeLists.txt puts COLLBENCH_MPIEXEC_PREFLAGS after `mpiexec -n N` like the mpi
    label does (Open MPI as root needs --allow-run-as-root): a configure with a marker flag shows it
    in every gpu test's command line."""
    env = dict(os.environ, COLLBENCH_GPU_TESTS="1", COLLBENCH_GPU_TEST_RANKS="1;2")
    cfg = subprocess.run(["cmake", "-S", str(SOURCE_DIR), "-B", str(tmp_path), "-G", "Ninja",
                          "-DCOLLBENCH_BUILD_BENCH=OFF", "-DCOLLBENCH_MPIEXEC_PREFLAGS=--collbench-marker"],
                         capture_output=True, text=True, timeout=600, env=env)
    assert cfg.returncode == 0, cfg.stdout[-3000:] + cfg.stderr[-3000:]
    if "GPU tests registered" not in cfg.stdout:
        pytest.skip("this machine builds no NCCL backend (no CUDA toolkit): no gpu tests to check")
    listed = subprocess.run(["ctest", "--test-dir", str(tmp_path), "-N", "-V", "-L", "gpu"], capture_output=True,
                            text=True, timeout=120)
    commands = [line for line in listed.stdout.splitlines() if "Test command:" in line]
    assert len(commands) == 4, listed.stdout[-3000:]
    for line in commands:
        assert '"-n"' in line and '"--collbench-marker"' in line, line
