"""`collbench step` against NVIDIA's published runs (docs/step.md): each system's published layout is
its default, the output shows where the EP groups sit and the published figures beside the
prediction, EP phases carry the same estimate `collbench model moe-dispatch` prints, and bad
workload or layout files exit 2 naming the file, key and value."""
import json

import pytest

from conftest import run

GB300 = ["step", "--workload", "deepseek-v3", "--system", "gb300-nvl72", "--gpus", "256,1024"]


def step_json(args):
    r = run(args + ["--format", "json"])
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_published_layout_is_the_default_and_the_output_shows_placement_and_published():
    r = run(GB300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert ("# step: workload deepseek-v3, layout deepseek-v3-gb300-mxfp8 (tp 1 ep 32 pp 2 vpp 8, micro-batch 1, "
            "fp8 GEMMs), system gb300-nvl72") in out
    assert ("# placement: 8 EP32 groups (ep-aligned) in 4 domains of 64 of 72 GPUs, 8 idle per domain, every EP "
            "group inside one domain") in out
    assert ("# placement: 32 EP32 groups (ep-aligned) in 16 domains of 64 of 72 GPUs, 8 idle per domain, every EP "
            "group inside one domain") in out
    assert "# published 26.06 at 256 GPUs: 1648 TFLOP/s/GPU, 6338 tokens/s/GPU (its FLOPs count MTP); model " in out
    assert "# published 26.08 at 256 GPUs: 1635 TFLOP/s/GPU, 6288 tokens/s/GPU" in out
    gb200 = run(["step", "--system", "gb200-nvl72", "--gpus", "256"])
    assert gb200.returncode == 0, gb200.stderr
    assert "layout deepseek-v3-gb200-mxfp8 (tp 1 ep 64 pp 4 vpp 4" in gb200.stdout
    assert "4 EP64 groups (ep-aligned) in 4 domains of 64 of 72 GPUs" in gb200.stdout


def test_json_published_figures_and_tokens_per_gpu():
    out = step_json(GB300)
    assert out["flops_per_token"] == pytest.approx(260641652736.0, rel=1e-12)
    assert out["mtp_flops_per_token"] == pytest.approx(10191765504.0, rel=1e-12)
    first = out["points"][0]
    assert [p["release"] for p in first["published"]] == ["26.06", "26.06.01", "26.08"]
    assert first["published"][0]["tflops_per_gpu"] == 1648 and first["published"][0]["counts_mtp"] is True
    assert out["points"][1]["published"] == []
    for p in out["points"]:
        assert p["placement"]["straddling_ep_groups"] == 0 and p["placement"]["gpus_per_domain"] == 64
        assert p["tokens_per_s_per_gpu"] == pytest.approx(p["tokens_per_step"] / p["step_time_s"] / p["gpus"])
        assert p["delivered_tflops_per_gpu"] == pytest.approx(
            p["tokens_per_s_per_gpu"] * out["flops_per_token"] / 1e12)


def test_ep_phases_carry_the_model_moe_dispatch_estimate():
    """The EP dispatch of DeepSeek-V3 (BF16 rows) in EP32 on gb300-nvl72 takes the expected time that
    `collbench model moe-dispatch --ep-size 32` prints for the same rows, and on gb200-nvl72 EP64 with
    its ep_kernel terms; not the plain all-to-all."""
    for system, ep in (("gb300-nvl72", 32), ("gb200-nvl72", 64)):
        point = step_json(["step", "--workload", "deepseek-v3-bf16", "--system", system, "--gpus", "256"])["points"][0]
        phase = next(p for p in point["phases"] if p["name"] == "EP dispatch")
        r = run(["model", "moe-dispatch", "--workload", "deepseek-v3-bf16", "--system", system, "--ep-size", str(ep),
                 "--format", "json"])
        assert r.returncode == 0, r.stderr
        model = json.loads(r.stdout)["table"][0]["model"]
        assert phase["time_us"] == pytest.approx(model["expected_time_us"], rel=1e-9), system
        assert phase["bound_us"] == pytest.approx(model["bound_time_us"], rel=1e-9), system
        assert "MoE dispatch/combine estimate on {}".format(ep) in phase["source_detail"]
    assert "ep_kernel: 32 SMs" in phase["source_detail"]


def test_rack_major_packing_straddles_and_shows_the_cost():
    aligned = step_json(GB300[:-2] + ["--gpus", "256"])["points"][0]
    packed = step_json(GB300[:-2] + ["--gpus", "256", "--packing", "rack-major"])["points"][0]
    assert packed["placement"]["straddling_ep_groups"] == 3
    assert "3 of 8 EP groups straddle two domains" in packed["placement"]["text"]
    inside = next(p for p in aligned["phases"] if p["name"] == "EP dispatch")
    cut = next(p for p in packed["phases"] if p["name"] == "EP dispatch")
    assert cut["scale_out"] is True and inside["scale_out"] is False
    assert cut["inside_one_domain_us"] == pytest.approx(inside["time_us"], rel=1e-12)
    assert cut["time_us"] > 2 * inside["time_us"]
    assert packed["delivered_tflops_per_gpu"] < aligned["delivered_tflops_per_gpu"]
    table = run(GB300[:-2] + ["--gpus", "256", "--packing", "rack-major"]).stdout
    assert f"[inside one domain: {inside['time_us']:.1f} us]" in table


def test_gqa_workloads_run_on_their_published_layouts():
    for workload, system, gpus, layout in (("gpt-oss-120b", "gb300-nvl72", 64, "gpt-oss-120b-gb300-mxfp8"),
                                           ("qwen3-30b-a3b", "gb200-nvl72", 8, "qwen3-30b-a3b-gb200-mxfp8")):
        out = step_json(["step", "--workload", workload, "--system", system, "--gpus", str(gpus)])
        assert out["layout"] == layout
        assert out["mtp_flops_per_token"] == 0
        assert out["points"][0]["published"][0]["counts_mtp"] is False
        kinds = {layer["kind"]: layer["count"] for layer in out["points"][0]["layers"]}
        assert kinds["dense"] == 0 and kinds["mtp"] == 0


@pytest.mark.parametrize("edit, expected", [
    (("num_key_value_heads: 8", "num_kv_heads: 8"), "key 'model.num_kv_heads'"),
    (("num_key_value_heads: 8", "num_key_value_heads: 0"), "model.num_key_value_heads"),
    (("head_dim: 64", "head_dim: 64\n  kv_lora_rank: 512"),
     "model.kv_lora_rank 512 (MLA) and model.num_key_value_heads 8 / model.head_dim 64 (GQA) exclude each other"),
    (("num_sliding_window_layers: 18", "num_sliding_window_layers: 40"), "model.num_sliding_window_layers 40"),
])
def test_bad_workload_files_exit_2_naming_file_key_value(tmp_path, edit, expected):
    from conftest import SOURCE_DIR
    text = (SOURCE_DIR / "profiles" / "workloads" / "gpt-oss-120b.yaml").read_text()
    assert edit[0] in text
    path = tmp_path / "gpt-oss-120b.yaml"
    path.write_text(text.replace(edit[0], edit[1], 1))
    r = run(["step", "--workload", path, "--system", "gb300-nvl72", "--layout", "gpt-oss-120b-gb300-mxfp8",
             "--gpus", "64"])
    assert r.returncode == 2, r.stdout
    assert expected in r.stderr
    assert "gpt-oss-120b" in r.stderr


def test_layout_and_placement_errors_exit_2(tmp_path):
    r = run(["step", "--workload", "deepseek-v3", "--system", "h100-hgx"])
    assert r.returncode == 2
    assert "no single default layout for workload 'deepseek-v3' on system 'h100-hgx'" in r.stderr
    assert "pass --layout NAME" in r.stderr
    r = run(GB300 + ["--packing", "even"])
    assert r.returncode == 2
    assert "--packing 'even': accepted: ep-aligned, rack-major" in r.stderr
    bad = tmp_path / "bad-layout.yaml"
    bad.write_text("name: bad-layout\nglobal_batch: 8\ngpus: 8\npublished:\n"
                   "  - {release: \"26.06\", gpus: 8, tokens_per_s_per_gpu: -1, tflops_per_gpu: 5, counts_mtp: true,"
                   " source: x}\n")
    r = run(["step", "--workload", "qwen3-30b-a3b", "--system", "gb300-nvl72", "--layout", bad, "--gpus", "8"])
    assert r.returncode == 2
    assert str(bad) in r.stderr and "published[0].tokens_per_s_per_gpu" in r.stderr
