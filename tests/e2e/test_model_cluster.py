"""`collbench model` at cluster scale (docs/model.md): in-network reduction (CollNet) as an
all-reduce candidate where the profile enables it, and `--set KEY=VALUE` on any profile key."""
import json

import pytest

from conftest import run


def model_json(*args):
    p = run(["model", "allreduce", "-b", "1G", "-e", "1G", "--format", "json"] + list(args))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["rows"]


def test_sharp_profile_and_set_give_the_collnet_bound():
    # 64 HGX B200 GPUs (8 x 8), 1 GiB: the ring's NICs allow busbw 8 x 50 = 400 GB/s; with SHARP
    # each NIC sends and receives S/8 once: T = 2^30 / 8 / 50e9 s, busbw 400 x 2 x 63/64 = 787.5.
    # (auto predicts NVLS-tree: the ring pays NCCL's Simple/LL128 latencies since issue 35; the bound
    # is still the ring's.)
    plain = model_json("--system", "b200-hgx", "--ranks", "64")[0]
    assert plain["algo_modelled"] == "nvlstree" and plain["bound_busbw_gbps"] == pytest.approx(400.0)
    sharp = model_json("--system", "b200-hgx-sharp", "--ranks", "64")[0]
    assert sharp["algo_modelled"] == "nvls-collnet"
    assert sharp["bound_time_us"] == pytest.approx(2**30 / 8 / 50e9 * 1e6, rel=1e-12)
    assert sharp["bound_busbw_gbps"] == pytest.approx(787.5)
    on = model_json("--system", "b200-hgx", "--ranks", "64",
                    "--set", "scale_out.in_network_reduction.supported=true",
                    "--set", "scale_out.in_network_reduction.dtypes=[int32, int64, float16, bfloat16, float32, float64]",
                    "--set", "scale_out.in_network_reduction.latency=31us")[0]
    for key in ("algo_modelled", "bound_time_us", "expected_time_us"):
        assert on[key] == sharp[key], key


def test_set_is_validated_like_the_file():
    p = run(["model", "allreduce", "--system", "h800-hgx", "--set", "scale_out.in_network_reduction.supported=yes"])
    assert p.returncode == 2
    assert "key 'scale_out.in_network_reduction.supported'" in p.stderr
    p = run(["model", "allreduce", "--set", "scale_out.oversubscription=2"])
    assert p.returncode == 2 and "--set needs --system" in p.stderr


def test_collnet_is_nccls_direct_or_chain_and_the_b200_sharp_range_fits():
    # NCCL_ALGO=CollNet on 8 x 8 B200 with SHARP: NCCL's tuner picks Direct or Chain; the model's
    # chain: max(2 S / 742.5 GB/s, S/8 / 48 GB/s) + 70.2 + 6.6 us = 2969.0 us at 1 GiB.
    rows = model_json("--system", "b200-hgx-sharp", "--ranks", "64", "--algo", "collnet,collnet-direct,nvls-collnet")
    assert [r["algo_modelled"] for r in rows] == ["collnet-chain", "collnet-direct", "nvls-collnet"]
    assert rows[0]["expected_time_us"] == pytest.approx(2969.0, abs=0.05)
    assert rows[1]["expected_time_us"] == pytest.approx(3340.25, abs=0.01)
    # The published runs (533-548 GB/s busbw, 16-368 GPUs, docs/model.md) under the bound and
    # within 35% of the collnet expected value at every end of the range.
    for n in (16, 368):
        p = run(["model", "allreduce", "--system", "b200-hgx-sharp", "--ranks", str(n), "--algo", "collnet",
                 "-b", "8G", "-e", "8G", "--format", "json"])
        assert p.returncode == 0, p.stderr
        row = json.loads(p.stdout)["rows"][0]
        for measured in (533.0, 548.0):
            assert measured < row["bound_busbw_gbps"]
            assert abs(measured / row["expected_busbw_gbps"] - 1) <= 0.35


def test_model_output_states_the_validated_range():
    p = run(["model", "allreduce", "--system", "gb200-nvl72", "--ranks", "256", "--ranks-per-domain", "64",
             "-b", "1G", "-e", "1G"])
    assert p.returncode == 0, p.stderr
    line = [l for l in p.stdout.splitlines() if l.startswith("validated range: ")]
    assert line == [
        "validated range: gb200-nvl72 allreduce: published points up to 1440 GPUs; the expected value held "
        "(>= 0.8 of expected) up to 72 GPUs (256 GPUs is beyond); nearest to 256 GPUs: "
        + line[0].split("nearest to 256 GPUs: ", 1)[1]]
    assert "72 GPUs (72) at 4GiB: 839.2 GB/s busbw" in line[0]
    assert "1440 GPUs (20x72) at 2GiB: 286.5 GB/s busbw" in line[0]
    j = run(["model", "allreduce", "--system", "gb200-nvl72", "--ranks", "256", "--format", "json"])
    assert json.loads(j.stdout)["checked_range"][0].startswith("gb200-nvl72 allreduce: published points up to 1440")
    p = run(["model", "allreduce", "--system", "gb300-nvl72", "--ranks", "144"])
    assert "validated range: gb300-nvl72 allreduce: not checked against any published measurement" in p.stdout


def test_published_points_against_the_model():
    p = run(["model", "allreduce", "--system", "gb200-nvl72", "--published"])
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("published allreduce points on gb200-nvl72 (") and lines[0].endswith(
        "profiles/published/gb200-nvl72.yaml)")
    assert lines[1].split() == ["GPUs", "packing", "bytes", "measured", "bound", "expected", "meas/exp", "meas/bnd",
                                "modelled", "source"]
    assert [l.split()[:4] for l in lines[2:]] == [["72", "72", "4GiB", "839.16"], ["72", "72", "8GiB", "834.57"],
                                                  ["1440", "20x72", "2GiB", "286.50"],
                                                  ["1440", "20x72", "4GiB", "346.40"]]
