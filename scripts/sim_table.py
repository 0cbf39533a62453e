#!/usr/bin/env python3
"""Simulated time beside the model (docs/simulation.md): reads simulated collbench JSONL files and
prints a Markdown table of each case's simulated p50, the model's bound and expected time for the
algorithm the simulation ran (flat all-reduce -> SMPI's ring 'lr' -> model 'ring'; hierarchical ->
'hierarchical'; all-to-all -> 'auto', or 'linear' for collbench's posted schedule; MoE dispatch/combine -> the record's own traffic-matrix
model), and simulated / expected. Figures are SIMULATED.

  scripts/sim_table.py --collbench build/src/collbench results/simulated/*.jsonl
"""
import argparse
import json
import subprocess
import sys

MODEL_ALGO = {("allreduce", "flat"): "ring", ("allreduce", "hierarchical"): "hierarchical",
              ("alltoall", "auto"): "auto", ("alltoall", "flat"): "auto", ("alltoall", "linear"): "linear"}


def cases(paths):
    for path in paths:
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                if rec.get("kind") == "case":
                    if not rec.get("simulated"):
                        sys.exit(f"sim_table: {path}: a case that is not simulated; this table is for simulated runs only")
                    yield path, rec


def model_row(collbench, rec, algo):
    cmd = [collbench, "model", rec["collective"], "--system", "gb300-nvl72", "--ranks", str(rec["num_ranks"]),
           "--ranks-per-domain", str(rec["domain_sizes"][0]), "-b", str(rec["bytes"]), "-e", str(rec["bytes"]),
           "--algo", algo, "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["rows"][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collbench", required=True)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    rows = []
    for _, rec in cases(args.files):
        if rec["status"] != "ok":
            continue
        sim = rec["time_us"]["p50"]
        if rec["collective"].startswith("moe-"):
            # The record's model: the bound and expected time of its own routing's traffic matrix.
            m = rec.get("model") or {}
            if "bound_time_us" not in m:
                continue
            sizes = rec["domain_sizes"]
            packing = f"{len(sizes)}x{sizes[0]}" if len(sizes) > 1 else str(sizes[0])
            rows.append((rec["collective"], rec["algo_used"] or rec["algo_requested"], "traffic", rec["num_ranks"],
                         packing, rec["bytes"], sim, m["bound_time_us"], m["expected_time_us"]))
            continue
        algo = MODEL_ALGO.get((rec["collective"], rec["algo_requested"]))
        if algo is None:
            continue
        m = model_row(args.collbench, rec, algo)
        rows.append((rec["collective"], rec["algo_requested"], algo, rec["num_ranks"], m["packing"], rec["bytes"], sim,
                     m["bound_time_us"], m["expected_time_us"]))
    rows.sort(key=lambda r: (r[0], r[1], r[5], r[3]))
    print("| collective | run (model) | N | packing | bytes/rank | simulated p50 (us) | bound (us) | expected (us) "
          "| % bound | simulated / expected |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for coll, algo, malgo, n, packing, size, sim, bound, exp in rows:
        print(f"| {coll} | {algo} ({malgo}) | {n} | {packing} | {size} | {sim:.1f} | {bound:.2f} | {exp:.1f} "
              f"| {100 * bound / sim:.1f} | {sim / exp:.2f} |")


if __name__ == "__main__":
    main()
