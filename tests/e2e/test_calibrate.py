"""`collbench calibrate`: what it prints and writes on 2 ranks (the figures are measurements, so
their form and ranges are checked, not their values), and its refusals."""
import re

import yaml

from conftest import run

NUMBER = r"[0-9]+(?:\.[0-9]+)?"


def test_two_ranks_print_the_figures_and_write_the_profile(tmp_path):
    out = tmp_path / "sub" / "cal.yaml"
    p = run(["calibrate", "--repetitions", "2", "--out", out], np=2, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 6, p.stdout  # rank 0 alone prints
    assert re.fullmatch(r"collbench calibrate: host \S+, 2 local ranks, 2 repetitions \(best kept\)", lines[0])
    assert re.fullmatch(rf"  memory copy +{NUMBER} GB/s per rank \(all ranks copying 64 MiB at once\)", lines[1])
    assert re.fullmatch(rf"  p2p latency +{NUMBER} us one-way \(8 B ping-pong\)", lines[2])
    m = re.fullmatch(rf"  p2p bandwidth +{NUMBER} GB/s per direction \(best at (\S+)\)", lines[3])
    assert m and m.group(1) in ("64KiB", "1MiB", "4MiB", "16MiB"), lines[3]
    assert re.fullmatch(rf"  margin +{NUMBER} \(best vs median repetition\)", lines[4])
    assert lines[5] == f"wrote {out} (use it with --system {out})"

    profile = yaml.safe_load(out.read_text())
    assert profile["name"] == "cpu-local" and profile["kind"] == "cpu"
    assert profile["calibrated"]["ranks"] == 2 and profile["calibrated"]["repetitions"] == 2
    assert 0.0 <= profile["calibrated"]["margin"] <= 10.0
    bw = profile["scale_up"]["bandwidth"]
    assert bw == profile["scale_out"]["nic_bandwidth"] and re.fullmatch(rf"{NUMBER}(?:e[+-]?\d+)?GB/s per-direction", bw)
    lat = profile["scale_up"]["hop_latency"]
    assert lat == profile["scale_out"]["hop_latency"] and float(lat.removesuffix("us")) > 0.0

    # The written profile is one every reader accepts.
    p = run(["model", "allreduce", "--system", out, "-b", "1M", "-e", "1M"])
    assert p.returncode == 0, p.stderr


def test_one_rank_is_refused():
    p = run(["calibrate", "--repetitions", "1", "--out", "/nonexistent/never-written.yaml"], np=1)
    assert p.returncode == 2, p
    assert "calibrate needs at least 2 MPI ranks on this host: mpiexec -n 2 collbench calibrate" in p.stderr


def test_repetitions_below_one_are_refused(tmp_path):
    out = tmp_path / "cal.yaml"
    p = run(["calibrate", "--repetitions", "0", "--out", out], np=2)
    assert p.returncode == 2, p
    assert "--repetitions 0: must be at least 1" in p.stderr
    assert not out.exists()
