"""scripts/gpu-check on the CPU (docs/gpu-validation.md, "CUDA 12 build and the GPU window script"):
fake collbench, bench_gpu_kernels, ctest, all_reduce_perf and gpu-smoke stand in for the GPU
commands, with known times, so each step's summary line, the targets, the refusal of -G, the
missing all_reduce_perf, the per-step timeouts and the exit codes are checked exactly."""

import json
import os
import re
import stat
import subprocess
import time
from pathlib import Path

import pytest
from conftest import SOURCE_DIR

SCRIPT = SOURCE_DIR / "scripts" / "gpu-check"

# The fake all-reduce: out-of-place time per size; isolated = 1.02 x -G, nccl-tests -G = 0.95 x -G.
GRAPH_US = {8: 1.0, 8 << 20: 6.0, 32 << 20: 18.0, 128 << 20: 64.0}

FAKE_COLLBENCH = r"""#!/usr/bin/env python3
import json, os, sys, time
a = sys.argv[1:]
if a[:1] == ["--version"]:
    print("collbench 0.1.0 (fake; backends: mpi nccl)"); sys.exit(0)
graph = "-G" in a
out = a[a.index("--out") + 1]
top = a[a.index("-e") + 1]
if graph and os.environ.get("FAKE_GRAPH") == "refuse":
    print("collbench: error: -G/--graph: not supported by this build (fake)", file=sys.stderr); sys.exit(2)
if top == "256M":
    time.sleep(float(os.environ.get("FAKE_SWEEP_S", "0.6")))
times = %s
with open(out, "w") as f:
    f.write(json.dumps({"kind": "run_header"}) + "\n")
    b = 8
    while b <= (128 << 20):
        t = times.get(str(b), 2.0) * (1.0 if graph else 1.02)
        f.write(json.dumps({"kind": "case", "status": "ok", "bytes": b, "time_us": {"mean": t}}) + "\n")
        b *= 4
print("# allreduce  backend nccl  (fake)")
""" % json.dumps({str(k): v for k, v in GRAPH_US.items()})

FAKE_BENCH = r"""#!/usr/bin/env python3
import json, sys
out = [x.split("=", 1)[1] for x in sys.argv[1:] if x.startswith("--benchmark_out=")][0]
rows = [("BM_DeviceCopy", 3.8e12), ("BM_FillReduceInput/float32", 1.9e12), ("BM_CheckReduceExpected/float32", 3.8e10)]
bench = [{"name": f"{n}/1073741824/manual_time", "run_type": "iteration", "bytes_per_second": bw} for n, bw in rows]
json.dump({"context": {}, "benchmarks": bench}, open(out, "w"))
"""

FAKE_NT = r"""#!/usr/bin/env python3
import sys, time
a = sys.argv[1:]
if "-G" not in a:
    time.sleep(0.2)
print("#       size         count      type   redop    root     time   algbw   busbw  #wrong")
b = 8
times = %s
while b <= (256 << 20 if "256M" in a else 128 << 20):
    t = times.get(str(b), 2.0) * 0.95
    print(f"{b:12d} {b // 4:13d}     float     sum      -1 {t:8.2f}    1.00    0.00       0 {t:8.2f}   1.00   0.00  0")
    b *= 4
""" % json.dumps({str(k): v for k, v in GRAPH_US.items()})

FAKE_CTEST = """#!/bin/sh
sleep "${FAKE_CTEST_S:-0}"
echo "100% tests passed, 0 tests failed out of 21"
"""

FAKE_SMOKE = """#!/bin/sh
echo "gpu-smoke: fake, SKIP_BUILD=$SKIP_BUILD SMOKE_SKIP_CTEST=$SMOKE_SKIP_CTEST SMOKE_OUT=$SMOKE_OUT"
test "$SKIP_BUILD" = 1
"""


def executable(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fakes(tmp_path):
    build = tmp_path / "build"
    bin_dir = tmp_path / "bin"
    executable(build / "src" / "collbench", FAKE_COLLBENCH)
    executable(build / "bench" / "bench_gpu_kernels", FAKE_BENCH)
    executable(bin_dir / "ctest", FAKE_CTEST)
    executable(bin_dir / "all_reduce_perf", FAKE_NT)
    executable(tmp_path / "smoke", FAKE_SMOKE)
    return tmp_path


def gpu_check(root, *args, env=None, nt=True):
    full = dict(os.environ)
    path = [str(root / "bin")] if nt else [str(root / "bin-no-nt")]
    if not nt:
        (root / "bin-no-nt").mkdir(exist_ok=True)
        (root / "bin-no-nt" / "ctest").symlink_to(root / "bin" / "ctest")
    full["PATH"] = os.pathsep.join(path + ["/usr/bin", "/bin"])
    full.update({"BUILD_DIR": str(root / "build"), "GPU_CHECK_SMOKE": str(root / "smoke")})
    full.update(env or {})
    start = time.monotonic()
    p = subprocess.run([str(SCRIPT), "--out", str(root / "out"), *args], capture_output=True, text=True,
                       env=full, timeout=120)
    return p, time.monotonic() - start


def lines(root):
    text = (root / "out" / "summary.md").read_text()
    return text, [ln[2:] for ln in text.splitlines() if ln.startswith("- ")]


def test_five_lines_with_the_targets(fakes):
    p, _ = gpu_check(fakes)
    assert p.returncode == 0, p.stderr
    text, ls = lines(fakes)
    assert len(ls) == 5, text
    assert re.fullmatch(r"1\. ctest -L gpu: ok \(\d+\.\d s\) 100% tests passed, 0 tests failed out of 21", ls[0])
    assert re.fullmatch(r"2\. kernel ratios at 1 GiB: missed \(\d+\.\d s\) 1/2 kernels >= 50% of copy at 1 GiB; "
                        r"lowest BM_CheckReduceExpected/float32 0\.010", ls[1]), ls[1]
    assert re.fullmatch(r"3\. isolated vs -G 20 vs nccl-tests -G 20: ok \(\d+\.\d s\) isolated / -G 20 \(target "
                        r"within 3% at >= 8 MiB\): 8 MiB 1\.020, 32 MiB 1\.020, 128 MiB 1\.020", ls[2]), ls[2]
    m = re.fullmatch(r"4\. default sweep vs all_reduce_perf: missed \(\d+\.\d s\) default sweep (\d+\.\d) s vs "
                     r"all_reduce_perf (\d+\.\d) s: (\d+\.\d\d)x \(target <= 1\.5x\)", ls[3])
    assert m, ls[3]
    cb, nt, ratio = map(float, m.groups())
    assert cb >= 0.6 and nt >= 0.2 and ratio > 1.5
    assert re.fullmatch(r"5\. gpu-smoke: ok \(\d+\.\d s\) all smoke steps ok \(smoke/smoke\.log\)", ls[4])
    # The step tables: the nccl-tests column is 0.95 x -G, the ratio 1.02.
    assert "| 8 MiB | 6.12 | 6.00 | 1.020 | 5.70 |" in text
    assert "| 128 MiB | 65.28 | 64.00 | 1.020 | 60.80 |" in text
    assert "| BM_FillReduceInput/float32 | 0.500 |" in text
    assert text.startswith("# gpu-check ") and "(ok, targets missed," in text.splitlines()[0]
    # The raw logs beside the summary; gpu-smoke ran without building.
    out = fakes / "out"
    for name in ("step1-ctest.log", "step2-kernels.json", "step3-isolated.jsonl", "step3-graph.jsonl",
                 "step3-nccl-tests-graph.txt", "step4-default.jsonl", "step4-nccl-tests.log", "step5-smoke.log",
                 "machine.txt"):
        assert (out / name).is_file(), name
    assert "SKIP_BUILD=1 SMOKE_SKIP_CTEST=1" in (out / "step5-smoke.log").read_text()  # ctest is step 1
    # --strict: a missed target fails the check.
    strict, _ = gpu_check(fakes, "--strict")
    assert strict.returncode == 1, strict.stderr


def test_refused_graph_and_no_nccl_tests(fakes):
    p, _ = gpu_check(fakes, env={"FAKE_GRAPH": "refuse"}, nt=False)
    assert p.returncode == 0, p.stderr  # unsupported is not a failure without --strict
    _, ls = lines(fakes)
    assert re.fullmatch(r"3\. isolated vs -G 20 vs nccl-tests -G 20: unsupported \(\d+\.\d s\) -G 20 not supported "
                        r"by this build: collbench: error: -G/--graph: not supported by this build \(fake\); "
                        r"nccl-tests: all_reduce_perf not on PATH", ls[2]), ls[2]
    assert re.fullmatch(r"4\. default sweep vs all_reduce_perf: ok \(\d+\.\d s\) collbench default sweep \d+\.\d s; "
                        r"all_reduce_perf not on PATH: no comparison", ls[3]), ls[3]
    assert "all_reduce_perf: not on PATH" in (fakes / "out" / "machine.txt").read_text()


def test_each_step_has_its_own_timeout(fakes):
    p, wall = gpu_check(fakes, env={"FAKE_CTEST_S": "30", "FAKE_SWEEP_S": "30",
                                    "GPU_CHECK_TIMEOUTS": "1 20 20 2 20"})
    assert p.returncode == 1, p.stderr
    _, ls = lines(fakes)
    assert re.fullmatch(r"1\. ctest -L gpu: timeout \(1\.\d s\) stopped after the step's 1 s limit; see "
                        r"step1-ctest\.log", ls[0]), ls[0]
    assert re.fullmatch(r"4\. default sweep vs all_reduce_perf: timeout \(2\.\d s\) stopped after the step's 2 s "
                        r"limit; see step4-collbench\.log", ls[3]), ls[3]
    assert ls[2].startswith("3. isolated vs -G 20 vs nccl-tests -G 20: ok ")  # the others still ran
    assert ls[4].startswith("5. gpu-smoke: ok ")
    assert wall < 25, wall  # 1 s + 2 s of limits, not 60 s of sleeping


FAKE_GTESTS = """#!/bin/sh
case "$1" in
  --gtest_filter=-NcclAbort.*) echo "[  PASSED  ] 15 tests." ;;
  --gtest_filter=NcclAbort.*) echo "[  PASSED  ] 1 test." ;;
  *) echo "unexpected $1"; exit 1 ;;
esac
"""


def test_gpu_tests_run_directly_where_the_builds_mpiexec_is_absent(fakes):
    # The lent GPU machine has no MPI: the build's mpiexec is not there, the test binary runs alone.
    build = fakes / "build"
    (build / "CMakeCache.txt").write_text("MPIEXEC_EXECUTABLE:FILEPATH=/nonexistent/mpiexec.mpich\n")
    executable(build / "tests" / "gpu" / "collbench_gpu_tests", FAKE_GTESTS)
    p, _ = gpu_check(fakes, env={"PATH": "/usr/bin:/bin"})  # no ctest on PATH either
    _, ls = lines(fakes)
    assert re.fullmatch(r"1\. ctest -L gpu: ok \(\d+\.\d s\) no /nonexistent/mpiexec\.mpich here: "
                        r"collbench_gpu_tests run directly on 1 rank, 15 \+ 1 tests passed", ls[0]), ls[0]
    assert (fakes / "out" / "step1-abort.log").is_file()


def test_bad_arguments_and_missing_binary(fakes, tmp_path):
    p, _ = gpu_check(fakes, "--bogus")
    assert p.returncode == 2 and "unknown argument '--bogus'" in p.stderr
    p, _ = gpu_check(fakes, env={"GPU_CHECK_TIMEOUTS": "1 2"})
    assert p.returncode == 2 and "expected 5 numbers" in p.stderr
    p, _ = gpu_check(fakes, env={"BUILD_DIR": str(tmp_path / "nowhere")})
    assert p.returncode == 2 and "no collbench at" in p.stderr


def test_parser_reads_a_benchmark_ratio_counter_first(tmp_path):
    # A bench_gpu_kernels that prints its own ratio to copy: that counter is taken as printed.
    doc = {"benchmarks": [
        {"name": "BM_DeviceCopy/1073741824/manual_time", "run_type": "iteration", "bytes_per_second": 4e12},
        {"name": "BM_CheckMove/float32/1073741824/manual_time", "run_type": "iteration",
         "bytes_per_second": 1e12, "ratio_to_copy": 0.61},
        {"name": "BM_CheckMove/float32/1073741824/manual_time_mean", "run_type": "aggregate",
         "bytes_per_second": 1e9},
        {"name": "BM_CheckMove/float32/1048576/manual_time", "run_type": "iteration", "bytes_per_second": 1e9}]}
    path = tmp_path / "k.json"
    path.write_text("some log line\n" + json.dumps(doc))
    p = subprocess.run(["python3", str(SOURCE_DIR / "scripts" / "gpu_check.py"), "kernels", str(path)],
                       capture_output=True, text=True)
    assert p.returncode == 0
    assert p.stdout.splitlines()[0] == "ok\t1/1 kernels >= 50% of copy at 1 GiB; lowest BM_CheckMove/float32 0.610"
    Path(path).write_text("not json")
    p = subprocess.run(["python3", str(SOURCE_DIR / "scripts" / "gpu_check.py"), "kernels", str(path)],
                       capture_output=True, text=True)
    assert p.stdout.startswith("failed\tno benchmark JSON")
