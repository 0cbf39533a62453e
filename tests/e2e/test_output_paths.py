"""Where an output path leads decides how it is written (issue 37 items 1 and 9): every writer
renames only over a regular file, follows a symlink to its target (the link stays), and writes a
character device or a FIFO in place instead of replacing it; a write that fails (a full disk,
a file-size limit) leaves no empty or partial file behind. One test per kind, for every writer."""
import os
import resource
import signal
import stat
import subprocess
import threading

import pytest

from conftest import BIN, SOURCE_DIR, run

RESULTS = SOURCE_DIR / "tests" / "data" / "bad-input" / "results-complete.jsonl"
PROFILE = """\
name: paths
defaults:
  backend: mpi
  dtype: float32
  repetitions: 1
  warmup: 1
  max_time: 100ms
checks:
  - name: latency-ok
    collective: allreduce
    bytes: 8
    threshold:
      max_time_us: 10000000
"""


@pytest.fixture(scope="module")
def accept_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("accept")
    (d / "paths.yaml").write_text(PROFILE)
    p = run(["accept", d / "paths.yaml", "--out-dir", d / "out", "--format", "none"], timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return d / "out"


# Each writer: (name, the arguments with {out} for the path under test, the file's first bytes).
WRITERS = [
    ("report --html", ["report", RESULTS, "--html", "{out}"], "<!DOCTYPE html>"),
    ("report weak-scaling --html", ["report", "weak-scaling", RESULTS, "--no-plots", "--out", "{dir}/ws",
                                    "--html", "{out}"], "<!DOCTYPE html>"),
    ("report accept --html", ["report", "accept", "{accept}", "--format", "none", "--html", "{out}"],
     "<!DOCTYPE html>"),
    ("simulate platform --out", ["simulate", "platform", "--system", "gb300-nvl72", "--gpus", "4", "--out", "{out}",
                                 "--hostfile", "{dir}/hosts", "--force"], "<?xml"),
    ("simulate platform --hostfile", ["simulate", "platform", "--system", "gb300-nvl72", "--gpus", "4", "--out",
                                      "{dir}/p.xml", "--hostfile", "{out}", "--force"], "gpu-0\n"),
    ("export-gbench --out", ["export-gbench", RESULTS, "--out", "{out}"], "{\n"),
    ("gate --json", ["gate", "--baseline", RESULTS, "--current", RESULTS, "--json", "{out}"],
     "{\n"),
    ("gate --junit", ["gate", "--baseline", RESULTS, "--current", RESULTS, "--junit", "{out}"],
     "<?xml"),
]
IDS = [w[0] for w in WRITERS]


def args_for(writer, out, tmp_path, accept):
    return [str(a).format(out=out, dir=tmp_path, accept=accept) for a in writer[1]]


def needs_accept(writer):
    return any("{accept}" in str(a) for a in writer[1])


def run_writer(writer, out, tmp_path, request):
    accept = request.getfixturevalue("accept_dir") if needs_accept(writer) else ""
    p = run(args_for(writer, out, tmp_path, accept))
    assert p.returncode == 0, (writer[0], p.returncode, p.stderr)
    return p


def no_temporaries(folder):
    left = [p.name for p in folder.iterdir() if ".tmp" in p.name]
    assert not left, f"temporary files left behind: {left}"


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_a_regular_file_is_replaced_whole_and_keeps_its_mode(writer, tmp_path, request):
    out = tmp_path / "out"
    out.write_text("old contents\n")
    out.chmod(0o600)
    run_writer(writer, out, tmp_path, request)
    assert stat.S_ISREG(os.lstat(out).st_mode)
    assert stat.S_IMODE(os.lstat(out).st_mode) == 0o600
    assert out.read_text().startswith(writer[2])
    no_temporaries(tmp_path)


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_a_symlink_stays_and_its_target_gets_the_text(writer, tmp_path, request):
    target = tmp_path / "real" / "target"
    target.parent.mkdir()
    target.write_text("old contents\n")
    link = tmp_path / "link"
    link.symlink_to(os.path.relpath(target, tmp_path))  # relative: resolved against the link's folder
    run_writer(writer, link, tmp_path, request)
    assert os.path.islink(link) and os.readlink(link) == "real/target"
    assert target.read_text().startswith(writer[2])
    no_temporaries(tmp_path)
    no_temporaries(target.parent)


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_a_character_device_is_written_in_place_not_replaced(writer, tmp_path, request):
    if os.geteuid() == 0:
        node = tmp_path / "null"
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the kernel's /dev/null
    else:
        node = "/dev/null"
    before = os.stat(node)
    run_writer(writer, node, tmp_path, request)
    after = os.lstat(node)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino and after.st_rdev == before.st_rdev


@pytest.mark.parametrize("writer", WRITERS, ids=IDS)
def test_a_fifo_is_written_in_place_to_its_reader(writer, tmp_path, request):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    run_writer(writer, fifo, tmp_path, request)
    reader.join(timeout=30)
    assert got and got[0].decode().startswith(writer[2]), got
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    no_temporaries(tmp_path)


def limit_file_size():
    # Writes past 64 bytes fail with EFBIG (SIGXFSZ ignored), as a full disk fails with ENOSPC.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))


@pytest.mark.parametrize("writer", [w for w in WRITERS if w[0] in ("report --html", "report weak-scaling --html",
                                                                    "export-gbench --out")], ids=lambda w: w[0])
def test_a_failed_write_leaves_no_empty_file(writer, tmp_path, request):
    out = tmp_path / "out"
    p = subprocess.run([BIN] + args_for(writer, out, tmp_path, ""), capture_output=True, text=True, timeout=120,
                       preexec_fn=limit_file_size)
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert f"writing '{out}' failed: File too large" in p.stderr or "failed: File too large" in p.stderr, p.stderr
    assert not out.exists()
    no_temporaries(tmp_path)


def test_weak_scaling_on_a_full_disk_leaves_no_empty_report(tmp_path):
    # Issue 37 item 9 as filed: ENOSPC on report.json left a 0-byte file. /dev/full is a
    # character device, written in place: its ENOSPC is exit 3 naming the path.
    out = tmp_path / "ws"
    out.mkdir()
    (out / "report.json").symlink_to("/dev/full")
    p = run(["report", "weak-scaling", RESULTS, "--no-plots", "--out", out])
    assert p.returncode == 3, p.stderr
    assert f"writing '{out}/report.json' failed: No space left on device" in p.stderr, p.stderr
    assert not (out / "report.md").exists()
    no_temporaries(out)


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs filled to the last block (root only: mount(8) needs it; skipped elsewhere)."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root and mount(8) for a small tmpfs; the RLIMIT_FSIZE test covers the same path")
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_enospc_on_report_weak_scaling_and_export_gbench_leaves_no_empty_file(full_disk):
    # Issue 37 item 9 as filed: both exited 3 but left a 0-byte file.
    p = run(["export-gbench", RESULTS, "--out", full_disk / "g.json"])
    assert p.returncode == 3, p.stderr
    assert f"writing --out '{full_disk}/g.json' failed: No space left on device" in p.stderr, p.stderr
    p = run(["report", "weak-scaling", RESULTS, "--no-plots", "--out", full_disk / "ws"])
    assert p.returncode == 3, p.stderr
    assert "No space left on device" in p.stderr, p.stderr
    left = sorted(str(q.relative_to(full_disk)) for q in full_disk.rglob("*"))
    assert left in (["filler"], ["filler", "ws"]), left  # the folder perhaps; never an empty or partial file
