"""`cmake --install`: the installed tree works on its own (CPack packages: test_package.py). The prefix is installed,
then copied elsewhere (a relocated install), and run from /tmp with an empty HOME and no
COLLBENCH_* variables, so nothing can come from the source or build tree: profiles, schema,
plotting package, man page and completion must all be inside the prefix."""
import gzip
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, FAST, MPIEXEC, SOURCE_DIR, read_jsonl

BUILD_DIR = Path(BIN).resolve().parents[1]


def installed_env(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLLBENCH_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    return env


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = tmp_path_factory.mktemp("install")
    staged = root / "staged"
    res = subprocess.run(["cmake", "--install", str(BUILD_DIR), "--prefix", str(staged)], capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    moved = root / "elsewhere" / "opt-collbench"
    shutil.copytree(staged, moved, symlinks=True)
    shutil.rmtree(staged)
    return moved


def run_installed(prefix, args, home, np=None):
    exe = str(prefix / "bin" / "collbench")
    cmd = ([MPIEXEC, "-n", str(np)] if np else []) + [exe] + [str(a) for a in args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd="/tmp", env=installed_env(home))


def test_layout(prefix):
    for rel in ["bin/collbench", "share/collbench/profiles/systems/gb300-nvl72.yaml",
                "share/collbench/profiles/workloads/deepseek-v3.yaml", "share/collbench/profiles/acceptance/cpu-local.yaml",
                "share/collbench/profiles/sweeps/cpu-smoke.yaml", "share/collbench/schema/collbench.result-1.schema.json",
                "share/collbench/plotting/collbench_plot/__main__.py", "share/man/man1/collbench.1.gz",
                "share/bash-completion/completions/collbench", "share/doc/collbench/README.md"]:
        assert (prefix / rel).is_file(), rel
    man = gzip.decompress((prefix / "share/man/man1/collbench.1.gz").read_bytes()).decode()
    assert ".TH COLLBENCH 1" in man and "collbench run" in man
    assert subprocess.run(["bash", "-n", str(prefix / "share/bash-completion/completions/collbench")]).returncode == 0


def test_installed_binary_finds_its_own_profiles(prefix, tmp_path):
    res = run_installed(prefix, ["model", "--list-systems"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "gb300-nvl72" in res.stdout
    assert str(prefix / "share/collbench/profiles") in res.stdout, res.stdout
    assert str(SOURCE_DIR) not in res.stdout + res.stderr
    res = run_installed(prefix, ["model", "alltoall", "--system", "gb300-nvl72", "--ranks", "256,1024",
                                 "--ranks-per-domain", "72", "-b", "1M", "-e", "1M"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "1024" in res.stdout
    version = run_installed(prefix, ["--version"], tmp_path)
    assert version.returncode == 0 and str(prefix / "share/collbench/profiles") in version.stdout, version.stdout
    # a user folder on COLLBENCH_PROFILE_PATH comes first
    mine = tmp_path / "mine" / "systems"
    mine.mkdir(parents=True)
    shutil.copy(prefix / "share/collbench/profiles/systems/gb300-nvl72.yaml", mine / "my-rack.yaml")
    text = (mine / "my-rack.yaml").read_text().replace("name: gb300-nvl72", "name: my-rack")
    (mine / "my-rack.yaml").write_text(text)
    env = installed_env(tmp_path)
    env["COLLBENCH_PROFILE_PATH"] = f"/nonexistent:{tmp_path / 'mine'}"
    res = subprocess.run([str(prefix / "bin/collbench"), "model", "--list-systems"], capture_output=True, text=True,
                         cwd="/tmp", env=env)
    assert res.returncode == 0 and "my-rack" in res.stdout, res.stdout + res.stderr


def test_installed_binary_runs_allreduce(prefix, tmp_path, validator):
    out = tmp_path / "ar.jsonl"
    res = run_installed(prefix, ["run", "allreduce", "-b", "8", "-e", "1K", "-f", "8", "--out", out, *FAST],
                        tmp_path, np=2)
    assert res.returncode == 0, res.stderr
    records = read_jsonl(out)
    for r in records:
        validator.validate(r)
    header = records[0]
    assert header["launcher"] == "mpiexec"
    assert header["mpi_library"]
    assert all(r["status"] == "ok" and r["wrong"]["total"] == 0 for r in records[1:])
