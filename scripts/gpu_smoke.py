#!/usr/bin/env python3
"""scripts/gpu-smoke's planning and record checks (python3, standard library only).

  plan LIST_JSON --ranks N [--max-bytes B] [--tokens T]
      one line per collective of the registry (`collbench run --list-json`):
      NAME<TAB>EXPECT<TAB>FLAGS, where FLAGS are the `collbench run` flags that family takes
      (-b/-e or --tokens, -o where it reduces, --in-place where it has that form, a placement
      where it needs several domains) and EXPECT is `ok` where the family runs on N ranks
      (domains_needed: its own waiver asked by the binary) and `waived` where it cannot. The list
      must cover N ranks (`run --list-json --list-ranks N`; exit 2 otherwise).
  records FILE --expect ok|waived|any --ranks N
      every case verified ok or waived with a reason; `ok`: at least one ok case, `waived`: every
      case waived, `any`: either (a tool's records: locate, accept); the run header names N ranks
      (one GPU each: distinct GPU UUIDs where recorded).
  nvls FILE --ranks N --machine nvswitch|standalone
      the NVLS harness: each requested algorithm ran (algo_used names it where collbench knows it)
      or was waived for a reason this machine is expected to give (expected_waivers: a node whose
      GPUs share an NVSwitch must not pass with "multicast unsupported"; a lone PCIe GPU may);
      prints the verdicts.
  machine [--smi-query FILE] [--nvswitch-devices N]
      prints nvswitch or standalone (machine_kind), from /dev/nvidia-nvswitch* and `nvidia-smi -q`.

Every check fails (exit 1) on a step that tested nothing: no case records, or no ok case where
one is expected. Tested by tests/e2e/test_gpu_smoke.py.
"""
import argparse
import collections
import glob
import json
import os
import subprocess
import sys

# Waiver reasons of the NVLS harness (the rules of src/collbench/backend/nccl/nvls_host.hpp that
# depend on the hardware, not on a bug), by what this machine is expected to give
# (expected_waivers). ring, tree and symmetric must run everywhere (symmetric: NCCL picks its
# kernels, algo_used unknown).
_NO_MULTICAST = ("multicast unsupported", "multicast support unknown", "multicast needs sm_90")
_ONE_NODE = {"nvls": (), "nvlstree": ("NCCL disables NVLSTree on a single node",), "cb-multimem": ()}
IN_SWITCH = ("nvls", "nvlstree", "cb-multimem")
MACHINES = ("nvswitch", "standalone")


def expected_waivers(algo, machine, ranks, nvls_off=False):
    """The waiver reasons (substrings) that `algo` may give on `ranks` GPUs of one node of `machine`:
    nvswitch: GPUs that share a third-generation or newer NVSwitch (HGX H100/H200/B200, an NVL72
    rack): multicast must work, so only what one node and the rank count explain (one GPU: domain too
    small; one node: no NVLSTree; above 32 GPUs: NCCL skips NVLS reduce-scatter/all-gather);
    standalone: no NVSwitch (a lone or PCIe GPU, directly linked GPUs): no multicast either.
    NCCL_NVLS_ENABLE=0 in the environment (nvls_off) explains any in-switch waiver."""
    if algo not in IN_SWITCH:
        return ()
    reasons = _ONE_NODE[algo] + (("NCCL_NVLS_ENABLE=0",) if nvls_off else ())
    if machine == "standalone":
        return reasons + _NO_MULTICAST + ("domain too small", "NCCL skips NVLS", "LSA team")
    if ranks == 1:
        reasons += ("domain too small",)
    if algo == "nvls" and ranks > 32:
        reasons += ("NCCL skips NVLS",)
    return reasons


def machine_kind(smi_query, nvswitch_devices):
    """nvswitch where this host sees NVSwitch devices (/dev/nvidia-nvswitch*: HGX boards) or
    `nvidia-smi -q` (smi_query) shows a GPU registered in an NVLink fabric (Fabric State: Completed,
    as on an NVL72 rack, whose switches sit in other trays); standalone otherwise."""
    if nvswitch_devices > 0:
        return "nvswitch"
    in_fabric = False
    for line in smi_query.splitlines():
        key, _, value = (part.strip() for part in line.partition(":"))
        if not value:
            in_fabric = key == "Fabric"
        elif in_fabric and key == "State" and value.lower() == "completed":
            return "nvswitch"
    return "standalone"


# Algorithms whose record says what ran (algo_used); symmetric leaves it unknown (null).
CLAIMS_ALGO_USED = {"nvls", "nvlstree", "cb-multimem", "ring", "tree"}


def plan(args):
    registry = json.load(open(args.list_json))
    listed = min(len(c["domains_needed"]) for c in registry["collectives"])
    if not 1 <= args.ranks <= listed:
        sys.stderr.write("plan: %s lists 1..%d ranks, not %d: write it with `collbench run --list-json --list-ranks %d`\n"
                         % (args.list_json, listed, args.ranks, max(args.ranks, 1)))
        return 2
    for c in registry["collectives"]:
        flags = []
        if c["sizes"] == "tokens":
            flags += ["--tokens", args.tokens]
        else:
            flags += ["-b", "1K", "-e", args.max_bytes, "-f", "64"]
            if c.get("uses_levels"):
                flags += ["-d", "float32,bfloat16"]
            else:
                flags += ["-d", "all"]
                if c["has_redop"]:
                    flags += ["-o", "sum,prod,min,max"]
                if c["in_place"]:
                    flags += ["--in-place", "both"]
        domains = c["domains_needed"][args.ranks - 1]  # what the family's own waiver says about N ranks
        runs = domains > 0
        if domains > 1:
            flags += ["--ranks-per-domain", str(args.ranks // domains)]
        print("%s\t%s\t%s" % (c["name"], "ok" if runs else "waived", " ".join(flags)))
    return 0


def read(path):
    header, cases = None, []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("kind") == "case":
                cases.append(r)
            elif header is None and "hosts" in r:
                header = r
    return header, cases


def check_world(header, ranks, path):
    """The run header names `ranks` ranks, each on its own GPU where GPUs are recorded."""
    problems = []
    hosts = (header or {}).get("hosts") or []
    if len(hosts) != ranks:
        problems.append("%s: the run had %d rank(s), expected %d (is mpiexec the build's?)" % (path, len(hosts), ranks))
    uuids = [h.get("gpu_uuid") for h in hosts if h.get("gpu_uuid")]
    if len(set(uuids)) != len(uuids):
        problems.append("%s: several ranks ran on one GPU: %s" % (path, sorted(uuids)))
    return problems


def good(r):
    return r["status"] == "ok" and r.get("checked") and r["wrong"]["total"] == 0


def records(args):
    header, cases = read(args.file)
    problems = check_world(header, args.ranks, args.file)
    ok = waived = 0
    for r in cases:
        if r["status"] == "waived" and r.get("reason"):
            waived += 1
        elif good(r):
            ok += 1
        else:
            problems.append("bad case: %s %s %s" % (r["case_key"], r["status"], r.get("reason")))
    if not cases:
        problems.append("%s: no case records: the step tested nothing" % args.file)
    elif args.expect == "ok" and ok == 0:
        problems.append("%s: no case ran (all %d waived: %s)" % (args.file, waived, cases[0].get("reason")))
    elif args.expect == "waived" and ok:
        problems.append("%s: %d case(s) ran where every case should be waived on %d rank(s)" %
                        (args.file, ok, args.ranks))
    print("%s: %d ok, %d waived, %d problem(s) (expected %s on %d rank(s))" %
          (args.file, ok, waived, len(problems), args.expect, args.ranks))
    if args.expect == "waived" and waived:
        print("  waived because: %s" % cases[0]["reason"])
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


def nvls_verdict(r, machine, ranks, nvls_off):
    """(verdict text, problem or None) of one NVLS-harness record on `ranks` GPUs of `machine`."""
    algo = r["algo_requested"]
    if r["status"] == "waived" and r.get("reason"):
        reason = r["reason"]
        if not any(expected in reason for expected in expected_waivers(algo, machine, ranks, nvls_off)):
            return "waived: " + reason, "%s waived for a reason a healthy %s machine does not give on %d GPU(s): %s" % (
                algo, machine, ranks, reason)
        return "waived: " + reason, None
    if not good(r):
        return "bad", "bad case: %s %s %s" % (r["case_key"], r["status"], r.get("reason"))
    used = r.get("algo_used")
    if algo in CLAIMS_ALGO_USED and used != algo:
        return "ok (algo_used %s)" % used, "%s ran but algo_used is %s: the forced algorithm is not shown to have run" % (
            algo, used)
    return "ok (algo_used %s)" % (used if used else "null"), None


def nvls(args):
    header, cases = read(args.file)
    problems = check_world(header, args.ranks, args.file)
    verdicts = collections.OrderedDict()
    ok = 0
    nvls_off = os.environ.get("NCCL_NVLS_ENABLE") == "0"
    for r in cases:
        text, problem = nvls_verdict(r, args.machine, args.ranks, nvls_off)
        verdicts.setdefault((r["algo_requested"], r["collective"]), set()).add(text)
        ok += text.startswith("ok")
        if problem and problem not in problems:
            problems.append(problem)
    requested = set()
    for case in ((header or {}).get("config") or {}).get("cases", []):
        requested.add(case.get("algo"))
    for algo in sorted(a for a in requested if a):
        if not any(key[0] == algo for key in verdicts):
            problems.append("%s: no record: the step tested nothing for it" % algo)
    if not cases:
        problems.append("%s: no case records: the step tested nothing" % args.file)
    elif ok == 0:
        problems.append("%s: no case ran (every algorithm waived)" % args.file)
    for (algo, coll), texts in verdicts.items():
        for text in sorted(texts):
            print("%12s %-14s %s" % (algo, coll, text))
    print("%s: %d ok of %d on %d rank(s) of a %s machine, %d problem(s)" % (args.file, ok, len(cases), args.ranks,
                                                                          args.machine, len(problems)))
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


def machine(args):
    if args.smi_query:
        text = open(args.smi_query).read()
    else:
        try:
            text = subprocess.run(["nvidia-smi", "-q"], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            text = ""
    devices = args.nvswitch_devices
    if devices is None:
        devices = len(glob.glob("/dev/nvidia-nvswitch[0-9]*"))
    print(machine_kind(text, devices))
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("plan")
    a.add_argument("list_json")
    a.add_argument("--ranks", type=int, required=True)
    a.add_argument("--max-bytes", default="16M")
    a.add_argument("--tokens", default="128,4096")
    a = sub.add_parser("records")
    a.add_argument("file")
    a.add_argument("--expect", choices=["ok", "waived", "any"], default="ok")
    a.add_argument("--ranks", type=int, required=True)
    a = sub.add_parser("nvls")
    a.add_argument("file")
    a.add_argument("--ranks", type=int, required=True)
    a.add_argument("--machine", choices=MACHINES, required=True)
    a = sub.add_parser("machine")
    a.add_argument("--smi-query", help="a file with `nvidia-smi -q` output (default: run it)")
    a.add_argument("--nvswitch-devices", type=int, help="how many /dev/nvidia-nvswitch* (default: count them)")
    args = p.parse_args(argv)
    return {"plan": plan, "records": records, "nvls": nvls, "machine": machine}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
