"""The multi-host test bed (scripts/testbed, docs/testbed.md) for the `testbed` tests: each test
module brings up its own bed (network namespaces joined by veth links to a bridge, MPI over TCP
between them) under a name of its own, and always takes it down again.

Skipping: only where this machine refuses network namespaces (`unshare -n true` fails, e.g. not
root or a container without CAP_SYS_ADMIN). Where they are allowed, a bed that cannot be made
is a failure, not a skip."""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("COLLBENCH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("COLLBENCH_BIN", str(SOURCE_DIR / "build" / "src" / "collbench"))
TESTBED = SOURCE_DIR / "scripts" / "testbed"
STATE_ROOT = Path(os.environ.get("CBTB_STATE_DIR", "/run/collbench-testbed"))
SCHEMA_PATH = SOURCE_DIR / "results" / "schema" / "collbench.result-1.schema.json"
_EMPTY_CONFIG = tempfile.mkdtemp(prefix="collbench-testbed-config-")

# Correctness-first stopping rule; cases that time a degraded link set their own.
FAST = ["--max-time", "100ms", "--min-time", "0", "--max-iters", "20", "-w", "1"]
# Every bed host sees both cores of this machine, and the beds here run up to 4 ranks on 2 cores:
# busy-polling ranks would crawl (docs/interfaces.md section 7), so the tests ask for yielding progress.
YIELD = ["--progress", "yield"]


def namespaces_refused():
    """The reason network namespaces are refused here, or None when they are allowed."""
    try:
        p = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        return "`unshare` (util-linux) is not installed"
    if p.returncode != 0:
        return f"`unshare -n true` failed: {p.stderr.strip() or 'exit ' + str(p.returncode)}"
    return None


def testbed(*args, bed=None, timeout=120, check=True):
    """Runs scripts/testbed; returns CompletedProcess. check: fail the test on a non-zero exit."""
    cmd = [sys.executable, str(TESTBED)] + (["--bed", bed] if bed else []) + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check:
        assert p.returncode == 0, f"{shlex.join(cmd)} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def cases(records):
    return [r for r in records if r["kind"] == "case"]


def _reap_stale_beds():
    """Beds left by a test run that was killed (ctest timeout, SIGKILL) before its teardown: a
    test bed is named cbtbt<pid>x<n>, so one whose pid is gone is stale and is taken down."""
    if not STATE_ROOT.is_dir():
        return
    for d in STATE_ROOT.iterdir():
        m = re.fullmatch(r"cbtbt(\d+)x\d+", d.name)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            testbed("down", bed=d.name, check=False)


class Bed:
    """One bed, up for the life of a test module."""

    made = 0

    def __init__(self, hosts, per_host):
        Bed.made += 1
        self.name = f"cbtbt{os.getpid()}x{Bed.made}"
        self.hosts = hosts
        self.per_host = per_host
        self.host_names = [f"{self.name}-h{i}" for i in range(hosts)]

    def up(self):
        testbed("up", self.hosts, "--per-host", self.per_host, bed=self.name)

    def down(self):
        p = testbed("down", bed=self.name, check=False)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert p.returncode == 0, p.stderr
        assert self.name not in left, f"namespaces left behind:\n{left}"
        assert not (STATE_ROOT / self.name).exists()

    def degrade(self, host, rate):
        testbed("degrade", host, rate, bed=self.name)

    def cut(self, host):
        testbed("cut", host, bed=self.name)

    def restore(self, host="all"):
        testbed("restore", host, bed=self.name)

    def status(self):
        return json.loads(testbed("status", "--json", bed=self.name).stdout)

    def prefix(self, hosts=None, per_host=None):
        args = ["prefix"]
        if hosts is not None:
            args += ["--hosts", hosts]
        if per_host is not None:
            args += ["--per-host", per_host]
        return shlex.split(testbed(*args, bed=self.name).stdout.strip())

    def wait_idle(self, timeout=60):
        """Waits until no process runs inside the bed's hosts (after an aborted job the ranks of a
        cut-off host only learn of the abort once the link is back); then kills any left, by pid."""
        deadline = time.monotonic() + timeout
        pids = []
        while time.monotonic() < deadline:
            pids = [int(p) for h in self.host_names
                    for p in subprocess.run(["ip", "netns", "pids", h], capture_output=True, text=True).stdout.split()]
            if not pids:
                return True
            time.sleep(0.5)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return False

    def collbench(self, args, hosts=None, per_host=None, env=None, timeout=300):
        """collbench under the bed's mpiexec (all hosts unless hosts=M); returns CompletedProcess."""
        cmd = self.prefix(hosts, per_host) + [BIN] + [str(a) for a in args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=collbench_env(env))

    def popen(self, args, hosts=None, per_host=None, env=None):
        cmd = self.prefix(hosts, per_host) + [BIN] + [str(a) for a in args]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=collbench_env(env), start_new_session=True)


def collbench_env(extra=None):
    env = dict(os.environ)
    env.pop("COLLBENCH_FAULT", None)
    env["XDG_CONFIG_HOME"] = _EMPTY_CONFIG  # hermetic: no calibrated cpu-local profile
    if extra:
        env.update(extra)
    return env


@pytest.fixture(scope="session", autouse=True)
def _bed_allowed():
    reason = namespaces_refused()
    if reason is not None:
        pytest.skip(f"network namespaces are refused on this machine: {reason}")
    _reap_stale_beds()


def make_bed(hosts, per_host):
    """A module fixture body: yields an up bed and always takes it down (asserting nothing is left)."""
    bed = Bed(hosts, per_host)
    try:
        bed.up()
        yield bed
    finally:
        bed.down()


@pytest.fixture(scope="session")
def validator():
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    return jsonschema.Draft202012Validator(schema)
