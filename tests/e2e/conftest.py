"""Shared helpers for the end-to-end tests: the built binary, mpiexec, schema validation."""
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

BIN = os.environ.get("COLLBENCH_BIN", str(Path(__file__).resolve().parents[2] / "build" / "src" / "collbench"))
SOURCE_DIR = Path(os.environ.get("COLLBENCH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec")
SCHEMA_PATH = SOURCE_DIR / "results" / "schema" / "collbench.result-1.schema.json"


def quick_accept_profile(name, description):
    """An acceptance profile of two quick all-reduce checks (latency, bandwidth) on the MPI backend."""
    return f"""\
name: {name}
description: {description}
progress: yield
defaults:
  backend: mpi
  dtype: float32
  repetitions: 1
  warmup: 1
  max_time: 50ms
checks:
  - name: latency
    collective: allreduce
    bytes: 8
    threshold:
      max_time_us: 1000000
  - name: bandwidth
    collective: allreduce
    bytes: 64K
    threshold:
      fraction_of_expected: 0.05
      min_busbw_gbps: 0.000001
"""


_EMPTY_CONFIG = tempfile.mkdtemp(prefix="collbench-test-config-")


def run(args, np=None, env=None, timeout=600, cwd=None):
    """Runs collbench (under mpiexec -n NP when np is given); returns CompletedProcess."""
    cmd = ([MPIEXEC, "-n", str(np)] if np else []) + [BIN] + [str(a) for a in args]
    full_env = dict(os.environ)
    full_env.pop("COLLBENCH_FAULT", None)
    for name in ("COLLBENCH_PROFILE_PATH", "COLLBENCH_PROFILE_DIR"):  # only the source tree's profiles
        full_env.pop(name, None)
    # Hermetic: a cpu-local profile calibrated on this machine must not change test outcomes.
    full_env["XDG_CONFIG_HOME"] = _EMPTY_CONFIG
    if env:
        full_env.update(env)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=cwd)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def validator():
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# Fast stopping rule for tests: correctness, not timing.
FAST = ["--max-time", "100ms", "--min-time", "0", "--max-iters", "20", "-w", "1"]
