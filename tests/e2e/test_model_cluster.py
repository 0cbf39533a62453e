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
    plain = model_json("--system", "b200-hgx", "--ranks", "64")[0]
    assert plain["algo_modelled"] == "ring" and plain["bound_busbw_gbps"] == pytest.approx(400.0)
    sharp = model_json("--system", "b200-hgx-sharp", "--ranks", "64")[0]
    assert sharp["algo_modelled"] == "collnet"
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
