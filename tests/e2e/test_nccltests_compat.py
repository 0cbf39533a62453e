"""nccl-tests compatibility (issue 20 item 13): `--layout nccl-tests` prints nccl-tests' table
(root column, out-of-place and in-place side by side, pipelined timing), which collbench's own
importer reads back to the printed precision; nccl-tests' -g -t -N -a -I -z -m -T -R -J are mapped
or accepted with their one supported value, and refused otherwise with exit 2. Also the
command-line checks of item 5 (-f with -i, -n with --min-iters/--max-iters, --out '') and item
6 for imports (repeated rows are dropped, so gate reads the file)."""
import re

import pytest

from conftest import FAST, SOURCE_DIR, read_jsonl, run

QUICK = ["-n", "5", "-w", "1"]


def number(value, width):
    """nccl-tests' cell: %.2f, else %.1f, else %.0f, else %.1e, whichever fits the width."""
    for decimals in (2, 1, 0):
        s = f"{value:>{width}.{decimals}f}"
        if len(s) <= width:
            return s
    return f"{value:>{width}.{1 if width >= 7 else 0}e}"


def tolerance(cell):
    """Half a unit in the last printed digit of a cell (2.00 -> 0.005, 15863.3 -> 0.05)."""
    mantissa, _, exponent = cell.strip().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10 ** (int(exponent or 0) - decimals) + 1e-9


def expected_row(out_rec, in_rec, per_iter=False):
    r = out_rec or in_rec
    text = f"{r['bytes']:>12}  {r['count']:>12}  {'float':>8}  {r['redop'] or 'none':>6}  {-1:>6}"
    for rec in (out_rec, in_rec):
        if rec is None:  # a group the table does not have
            continue
        t = rec["time_us"]
        text += f"  {number(t['p50'], 7)}  {number(rec['algbw_gbps'], 6)}  {number(rec['busbw_gbps'], 6)}"
        text += f"  {rec['wrong']['total']:>6}"
        if per_iter:
            text += "".join(f"  {number(v, 7)}" for v in (t["min"], t["max"], t["p99"], 100 * t["cv"]))
    return text


def cases(path):
    return [r for r in read_jsonl(path) if r["kind"] == "case"]


@pytest.fixture(scope="module")
def layout_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("layout")
    res = run(["run", "allreduce", "-b", "1K", "-e", "64K", "-f", "8", *QUICK, "--layout", "nccl-tests",
               "--out", d / "run.jsonl"], np=2)
    assert res.returncode == 0, res.stderr
    (d / "run.log").write_text(res.stdout)
    return d, res.stdout, cases(d / "run.jsonl")


def test_layout_measures_as_nccl_tests_does(layout_run):
    _, stdout, recs = layout_run
    assert {r["timing"] for r in recs} == {"pipelined"}  # back-to-back batches, averaged
    assert sorted((r["bytes"], r["in_place"]) for r in recs) == [
        (1024, False), (1024, True), (8192, False), (8192, True), (65536, False), (65536, True)]
    lines = stdout.splitlines()
    assert "# Collective test starting: all_reduce_perf" in lines
    assert re.search(r"^# nThread 1 nGpus 1 minBytes 1024 maxBytes 65536 warmup iters: 1 iters: 5 agg iters: 20 "
                     r"validation: 1 graph: 0$", stdout, re.M), stdout
    assert len([l for l in lines if re.match(r"^#  Rank  [01] Group  0 Pid", l)]) == 2
    assert re.search(r"^#\s+size\s+count\s+type\s+redop\s+root\s+time\s+algbw\s+busbw\s+#wrong\s+time\s+algbw"
                     r"\s+busbw\s+#wrong$", stdout, re.M), stdout
    assert lines[-5].startswith("# Out of bounds values : 0 OK")
    assert "# Collective test concluded: all_reduce_perf" in lines


def test_layout_rows_are_the_records_side_by_side(layout_run):
    _, stdout, recs = layout_run
    by = {(r["bytes"], r["in_place"]): r for r in recs}
    rows = [l for l in stdout.splitlines() if not l.startswith("#")]
    assert rows == [expected_row(by[(b, False)], by[(b, True)]) for b in (1024, 8192, 65536)]
    avg = sum(r["busbw_gbps"] for r in recs) / len(recs)
    assert f"# Avg bus bandwidth    : {float(f'{avg:.6g}'):g} " in stdout.splitlines()


def test_layout_round_trips_through_import(layout_run, validator):
    d, _, recs = layout_run
    res = run(["import", d / "run.log", "--out", d / "imported.jsonl"])
    assert res.returncode == 0, res.stderr
    assert "warning" not in res.stderr, res.stderr  # nothing guessed, nothing inconsistent
    assert "# imported 6 case(s) from 1 log(s)" in res.stdout
    imported = read_jsonl(d / "imported.jsonl")
    for r in imported:
        validator.validate(r)
    by_key = {(r["bytes"], r["in_place"]): r for r in imported if r["kind"] == "case"}
    assert set(by_key) == {(r["bytes"], r["in_place"]) for r in recs}
    for r in recs:
        i = by_key[(r["bytes"], r["in_place"])]
        assert (i["collective"], i["dtype"], i["redop"], i["count"], i["num_ranks"]) == (
            r["collective"], r["dtype"], r["redop"], r["count"], r["num_ranks"])
        assert i["wrong"]["total"] == r["wrong"]["total"] and i["checked"] is True
        assert i["iterations"] == r["iterations"] == 5
        # To the printed precision: half a unit of the last printed digit.
        for got, want, width in ((i["time_us"]["p50"], r["time_us"]["p50"], 7), (i["algbw_gbps"], r["algbw_gbps"], 6),
                                 (i["busbw_gbps"], r["busbw_gbps"], 6)):
            assert abs(got - want) <= tolerance(number(want, width)), (got, want)
        assert float(number(r["time_us"]["p50"], 7)) == i["time_us"]["p50"]


def test_collective_without_in_place_prints_one_group(tmp_path):
    res = run(["run", "alltoallv", "-b", "1K", "-e", "2K", *QUICK, "--layout", "nccl-tests", "--out",
               tmp_path / "a.jsonl"], np=2)
    assert res.returncode == 0, res.stderr
    assert {r["in_place"] for r in cases(tmp_path / "a.jsonl")} == {False}
    assert re.search(r"^#\s+out-of-place\s*$", res.stdout, re.M), res.stdout
    rows = [l for l in res.stdout.splitlines() if not l.startswith("#")]
    assert [l.split()[3:5] for l in rows] == [["none", "-1"], ["none", "-1"]]
    (tmp_path / "a.log").write_text(res.stdout)
    imp = run(["import", tmp_path / "a.log", "--out", tmp_path / "i.jsonl"])
    assert imp.returncode == 0 and "# imported 2 case(s)" in imp.stdout, imp.stderr


def test_per_iteration_columns_and_root(tmp_path):
    res = run(["run", "broadcast", "-b", "1K", "-e", "1K", *QUICK, "-r", "1", "-I", "1", "--in-place", "off",
               "--layout", "nccl-tests", "--out", tmp_path / "b.jsonl"], np=2)
    assert res.returncode == 0, res.stderr
    (rec,) = cases(tmp_path / "b.jsonl")
    assert re.search(r"#wrong\s+i_min\s+i_max\s+i_p99\s+i_cv%$", res.stdout, re.M), res.stdout
    (row,) = [l for l in res.stdout.splitlines() if not l.startswith("#")]
    assert row == expected_row(rec, None, per_iter=True).replace(f"{-1:>6}", f"{1:>6}", 1)
    (tmp_path / "b.log").write_text(res.stdout)
    imp = run(["import", tmp_path / "b.log", "--out", tmp_path / "i.jsonl"])
    assert imp.returncode == 0, imp.stderr
    (got,) = cases(tmp_path / "i.jsonl")
    assert got["time_us"]["p99"] == float(number(rec["time_us"]["p99"], 7))
    assert got["nccl_tests"]["root"] == 1 and got["nccl_tests"]["type"] == "float"


@pytest.mark.parametrize("flags,message", [
    (["-g", "8"], "-g/--ngpus 8: collbench accepts only -g/--ngpus 1 here: collbench runs one rank per GPU; start one "
                  "rank per GPU instead (mpiexec -n GPUS, srun --ntasks-per-node=GPUS_PER_NODE; docs/launching.md)"),
    (["-t", "2"], "-t/--nthreads 2: collbench accepts only -t/--nthreads 1 here: collbench runs one thread per rank "
                  "and one rank per GPU; start more ranks instead (mpiexec -n)"),
    (["-N", "0"], "-N/--run_cycles 0: must be at least 1 (-N K is --repeats K: every case measured K times); "
                  "collbench has no endless run (nccl-tests -N 0)"),
    (["-N", "2", "--repeats", "3"], "-N/--run_cycles 2 and --repeats 3 both set the number of repeats: pass one of "
                                    "them"),
    (["-a", "1"], "-a/--average 1: collbench accepts only -a/--average 3 here: each sample's time is its slowest "
                  "rank's (nccl-tests -a 3, the maximum over ranks); the average over ranks (-a 1), the minimum "
                  "(-a 2) and rank 0's time (-a 0) are not offered (each rank's own mean is in the JSONL records, "
                  "per_rank.mean_us)"),
    (["-I", "2"], "-I/--per_iter_timing 2: accepted: 0, 1"),
    (["-z", "2"], "-z/--blocking 2: accepted: 0 (--timing pipelined), 1 (--timing isolated), 3 (--timing "
                  "pipelined: a barrier before each batch, outside the time); collbench has no wait without a "
                  "barrier (-z 2)"),
    (["-z", "1", "--timing", "pipelined"],
     "-z/--blocking 1 and --timing pipelined both set the timing mode: pass one of them"),
    (["-m", "4", "--batch", "8"], "-m/--agg_iters 4 and --batch 8 both set the operations per timed sample: pass one "
                                  "of them"),
    (["-m", "4", "--timing", "isolated"],
     "-m/--agg_iters 4 times 4 operations back to back per sample, which needs --timing pipelined (the timing here "
     "is isolated: one operation per sample)"),
    (["-T", "0"], "-T 0: the watchdog cannot be turned off (nccl-tests -T 0); give seconds > 0, e.g. -T 60 "
                  "(--timeout 60s)"),
    (["-T", "30", "--timeout", "10s"], "-T 30 and --timeout 10s both set the watchdog's timeout: pass one of them"),
    (["-R", "3"], "-R/--local_register 3: accepted: 0 (the backend's default buffers), 1 (--buffers registered), 2 "
                  "(--buffers symmetric)"),
    (["-R", "1", "--buffers", "host"], "-R/--local_register 1 and --buffers host both set the buffer kind: pass one "
                                       "of them"),
    (["-J", "a.jsonl", "--out", "b.jsonl"], "-J/--output_file a.jsonl and --out b.jsonl both set the results file: "
                                            "pass one of them"),
    (["-f", "4", "-i", "1M"], "-f/--stepfactor 4 and -i/--stepbytes 1M exclude each other: sizes grow by a factor "
                              "or by an increment; pass one of them"),
    (["-n", "5", "--min-iters", "3"], "-n/--iters 5 fixes the number of timed iterations, so it excludes --min-iters "
                                      "(given: 3); pass one or the other"),
    (["-n", "5", "--max-iters", "9"], "-n/--iters 5 fixes the number of timed iterations, so it excludes --max-iters "
                                      "(given: 9); pass one or the other"),
    (["--out", ""], "--out '': expected a file name, e.g. --out results/run.jsonl (leave --out out to write no file)"),
    (["--layout", "nccl-tests", "--format", "csv"], "--layout nccl-tests applies to --format table, not --format csv"),
])
def test_bad_flags_are_exit_2_with_the_collbench_way(flags, message, tmp_path):
    res = run(["run", "allreduce", "-b", "8", "-e", "8", *flags], cwd=tmp_path)
    assert res.returncode == 2, res
    assert res.stderr == f"collbench: error: {message}\n"
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_sweep_iters_with_min_iters_names_its_flags():
    res = run(["sweep", SOURCE_DIR / "profiles" / "sweeps" / "cpu-smoke.yaml", "--iters", "5", "--min-iters", "3"])
    assert res.returncode == 2
    assert res.stderr.endswith("collbench: error: --iters 5 fixes the number of timed iterations, so it excludes "
                               "--min-iters (given: 3); pass one or the other\n"), res.stderr


def test_supported_values_are_accepted_and_mapped(tmp_path):
    res = run(["run", "allreduce", "-b", "8", "-e", "8", *FAST, "-g", "1", "-t", "1", "-N", "1", "-a", "3",
               "-I", "0", "-z", "0", "-m", "4", "-T", "30", "-R", "0", "-J", tmp_path / "j.jsonl"], np=2)
    assert res.returncode == 0, res.stderr
    header, rec = read_jsonl(tmp_path / "j.jsonl")  # -J FILE is --out FILE
    assert rec["timing"] == "pipelined" and rec["buffers"] == "host"
    assert header["config"]["cases"][0]["batch"] == 4 and header["config"]["cases"][0]["timing"] == "pipelined"
    res = run(["run", "allreduce", "-b", "8", "-e", "8", *FAST, "-z", "1", "--out", tmp_path / "z.jsonl"], np=2)
    assert res.returncode == 0, res.stderr
    assert read_jsonl(tmp_path / "z.jsonl")[1]["timing"] == "isolated"


def test_import_of_repeated_rows_gives_a_file_gate_reads(tmp_path):
    log = SOURCE_DIR / "tests" / "data" / "nccl-tests" / "all_reduce_8xH100.txt"
    res = run(["import", log, log, "--out", tmp_path / "twice.jsonl"])
    assert res.returncode == 0, res.stderr
    assert "# imported 28 case(s) from 2 log(s)" in res.stdout and "(28 repeated row(s) dropped" in res.stdout
    assert (f"collbench: warning: {log}:18: dropped: the same case as {log}:18 "
            f"(allreduce|sum|float32|nccl|auto|global|outofplace|8|8|8); a results file holds one record per case "
            f"key, the first is kept") in res.stderr.splitlines()
    keys = [r["case_key"] for r in cases(tmp_path / "twice.jsonl")]
    assert len(keys) == len(set(keys)) == 28
    gate = run(["gate", "--baseline", tmp_path / "twice.jsonl", "--current", tmp_path / "twice.jsonl"])
    assert gate.returncode != 2, gate.stderr
    assert "case key" not in gate.stderr, gate.stderr
