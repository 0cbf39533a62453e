"""Input the binary refuses before it allocates or writes anything (issue 20 items 1 and 5, issue 21
item 4): buffers larger than a node's memory, broadcast roots out of range, sizes that round down
to 0 B, directories given as files, negative and NaN times in results, YAML keys given twice.
Exact messages and exit codes; nothing half-written."""
import json
import os
import subprocess

from conftest import BIN, FAST, MPIEXEC, SOURCE_DIR, read_jsonl, run

COMPLETE = SOURCE_DIR / "tests" / "data" / "bad-input" / "results-complete.jsonl"
MEM = "COLLBENCH_TEST_MEM_AVAILABLE"


def error_line(p):
    lines = [line for line in p.stderr.splitlines() if line.startswith("collbench: error")]
    assert len(lines) == 1, p.stderr
    return lines[0]


# ---- memory (issue 20 item 1) ------------------------------------------------------------------


def test_buffers_larger_than_the_node_are_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "big.jsonl"
    p = run(["run", "allreduce", "-b", "1M", "-e", "4M", "-f", "2", "--out", out] + FAST, np=2,
            env={MEM: "12M"})
    assert p.returncode == 2, p.stderr
    assert error_line(p).endswith(
        "error: not enough memory for allreduce 4MiB float32 out of place: its buffers need 8MiB per rank, 16MiB on "
        "host '" + os.uname().nodename + "' (2 rank(s) x 8MiB), and 12MiB is available there "
        "(COLLBENCH_TEST_MEM_AVAILABLE, a test override); use smaller sizes (-b/-e, --tokens) or fewer ranks per node"), \
        p.stderr
    assert not out.exists()  # refused before the results file is opened
    # The same sweep fits in 16 MiB: per node, 2 ranks x 8 MiB.
    assert run(["run", "allreduce", "-b", "1M", "-e", "4M", "-f", "2", "--format", "none"] + FAST, np=2,
               env={MEM: "16M"}).returncode == 0


def test_a_terabyte_is_refused_from_meminfo_not_by_the_oom_killer():
    # The examples of issue 20 on a 24 GiB machine: -e 1T ran until the OOM killer ended it. 1 TiB
    # is checked against this machine's MemAvailable; 64 GiB against 24 GiB (a machine with more
    # than 256 GiB available would run it).
    p = run(["run", "allreduce", "-b", "1K", "-e", "1T"], np=2, timeout=60)
    assert p.returncode == 2, p.stderr
    line = error_line(p)
    assert "allreduce 1TiB float32 out of place: its buffers need 2TiB per rank, 4TiB on host" in line, line
    assert "is available there (MemAvailable in /proc/meminfo); use smaller sizes" in line, line
    p = run(["run", "allreduce", "-b", "64G", "-e", "64G"], np=2, env={MEM: "24G"}, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "allreduce 64GiB float32 out of place: its buffers need 128GiB per rank, 256GiB on host" in error_line(p)


def test_moe_buffers_sized_by_tokens_are_checked_too():
    p = run(["run", "moe-dispatch", "--tokens", "1000000"] + FAST, env={MEM: "8G"}, timeout=120)
    assert p.returncode == 2, p.stderr
    line = error_line(p)
    assert line.startswith("collbench: error: not enough memory for moe-dispatch "), line
    assert "(deepseek-v3:T1000000:" in line and "and 8GiB is available there" in line, line


def test_one_rank_short_of_memory_stops_every_rank_alike():
    # MPMD launch: only rank 1 sees 1 MiB available. Every rank exits 2 with rank 1's verdict.
    args = ["run", "allreduce", "-b", "1M", "-e", "1M"] + FAST
    p = subprocess.run([MPIEXEC, "-n", "1", BIN] + args + [":", "-n", "1", "-env", MEM, "1M", BIN] + args,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr
    assert "2MiB per rank, 4MiB on host" in error_line(p)
    assert "and 1MiB is available there (COLLBENCH_TEST_MEM_AVAILABLE, a test override)" in p.stderr, p.stderr


# ---- broadcast roots, sizes that round to 0 B (issue 20 item 5, issue 21 item 4) --------------


def test_a_broadcast_root_out_of_range_is_bad_input_not_an_mpi_abort():
    for root in ("2", "-1"):
        p = run(["run", "broadcast", "-b", "8", "-e", "8", "-r", root] + FAST, np=2)
        assert p.returncode == 2, p.stderr
        assert error_line(p) == (f"collbench: error: -r/--root {root} is not a rank of the broadcast communicator "
                                 "of 2 ranks; accepted: 0 to 1")
    assert run(["run", "broadcast", "-b", "8", "-e", "8", "-r", "1", "--format", "none"] + FAST, np=2).returncode == 0


def test_an_alltoall_size_that_rounds_to_nothing_is_refused(tmp_path):
    out = tmp_path / "a.jsonl"
    p = run(["run", "alltoall", "-b", "4", "-e", "4", "--out", out] + FAST, np=2)
    assert p.returncode == 2, p.stderr
    assert error_line(p) == (
        "collbench: error: alltoall: 4 B of float32 on 2 ranks rounds down to 0 B (bytes = per-rank send total "
        "(n x per-peer block), rounded down as nccl-tests does); nothing to measure: the smallest accepted size is "
        "32 B")
    assert not out.exists()


def test_a_sweep_skips_the_sizes_that_round_to_nothing_with_a_note(tmp_path, validator):
    out = tmp_path / "s.jsonl"
    p = run(["run", "allgather", "-b", "8", "-e", "128", "-f", "2", "--out", out, "--format", "none"] + FAST, np=4)
    assert p.returncode == 0, p.stderr
    assert ("collbench: note: allgather: 8 B, 16 B and 32 B of float32 on 4 ranks round down to 0 B (bytes = total "
            "output per rank (n x chunk), rounded down as nccl-tests does): skipped; the smallest size that measures "
            "something is 64 B") in p.stderr, p.stderr
    records = read_jsonl(out)
    for r in records:
        validator.validate(r)
    assert [r["bytes"] for r in records if r["kind"] == "case"] == [64, 128]
    assert [c["bytes"] for c in records[0]["config"]["cases"]] == [64, 128]  # the header says what ran


# ---- directories where a file is expected -------------------------------------------------------


def test_a_directory_for_report_or_gate_inputs_is_bad_input(tmp_path):
    p = run(["report", tmp_path])
    assert p.returncode == 2, p.stderr
    assert error_line(p) == f"collbench: error: results file '{tmp_path}' is a directory; give a JSONL file"
    p = run(["gate", "--baseline", COMPLETE, "--current", COMPLETE, "--policy", tmp_path])
    assert p.returncode == 2, p.stderr
    assert error_line(p) == f"collbench: error: policy file '{tmp_path}' is a directory; give a file"
    p = run(["sweep", "--dry-run", tmp_path])
    assert p.returncode == 2, p.stderr
    assert error_line(p) == f"collbench: error: sweep file '{tmp_path}' is a directory; give a YAML file"


# ---- negative and NaN times in results --------------------------------------------------------------


def write_with(tmp_path, name, edit):
    lines = COMPLETE.read_text().splitlines()
    record = json.loads(lines[2])
    edit(record)
    lines[2] = json.dumps(record)  # Python writes NaN as the bare literal NaN
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_negative_or_nan_times_are_bad_input_naming_file_line_and_key(tmp_path):
    neg = write_with(tmp_path, "neg.jsonl", lambda r: r["time_us"].update(p50=-3.5))
    nan = write_with(tmp_path, "nan.jsonl", lambda r: r["samples_us"].__setitem__(1, float("nan")))
    for args in (["report", neg], ["gate", "--baseline", COMPLETE, "--current", neg]):
        p = run(args)
        assert p.returncode == 2, (args, p.stderr)
        assert error_line(p) == (f"collbench: error: {neg}:3: key 'time_us.p50': -3.5 is negative; times and rates "
                                 "are numbers >= 0")
    for args in (["report", nan], ["export-gbench", nan]):
        p = run(args)
        assert p.returncode == 2, (args, p.stderr)
        assert error_line(p) == (f"collbench: error: {nan}:3: key 'samples_us[1]': NaN is not a JSON number; times "
                                 "and rates are finite numbers >= 0")


# ---- YAML keys given twice ---------------------------------------------------------------------------


def test_a_yaml_key_given_twice_is_bad_input_naming_file_line_and_key(tmp_path):
    sweep = tmp_path / "dup.yaml"
    sweep.write_text("name: dup\ncases:\n  - collective: allreduce\n    bytes: 8\n    bytes: 16\n")
    p = run(["sweep", "--dry-run", sweep])
    assert p.returncode == 2, p.stderr
    assert error_line(p) == (f"collbench: error: {sweep}:5: key 'cases[0].bytes': given twice (first on line 4); "
                             "keep one")
    policy = tmp_path / "policy.yaml"
    policy.write_text("alpha: 0.05\nmin_effect: 0.05\nalpha: 0.1\n")
    p = run(["gate", "--baseline", COMPLETE, "--current", COMPLETE, "--policy", policy])
    assert p.returncode == 2, p.stderr
    assert error_line(p) == f"collbench: error: {policy}:3: key 'alpha': given twice (first on line 1); keep one"
    profile = (SOURCE_DIR / "profiles" / "workloads" / "deepseek-v3.yaml").read_text()
    workload = tmp_path / "wl.yaml"
    workload.write_text(profile.replace("name: deepseek-v3\n", "name: wl\n").replace("  top_k: 8\n",
                                                                                       "  top_k: 8\n  top_k: 4\n"))
    p = run(["model", "moe-dispatch", "--system", "gb300-nvl72", "--workload", workload])
    assert p.returncode == 2, p.stderr
    line_no = workload.read_text().splitlines().index("  top_k: 4") + 1
    assert error_line(p) == (f"collbench: error: {workload}:{line_no}: key 'model.top_k': given twice (first on "
                             f"line {line_no - 1}); keep one")
