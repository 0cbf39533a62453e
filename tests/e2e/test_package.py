"""The packages (issue 20 item 15): CPack's .deb, its -dbgsym .ddeb and the .tar.gz. The .deb
holds a stripped binary whose debug symbols are in the .ddeb under its build id, a compressed man
page, the copyright file and changelog, a real maintainer, and passes lintian without an error;
the bash completion offers collective, system and acceptance-profile names."""
import gzip
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import BIN, SOURCE_DIR

BUILD_DIR = Path(BIN).resolve().parents[1]
MAINTAINER = "Seed d9df135f maintainers <maintainers@users.noreply.a-seed-d9df135f.example>"


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb not installed")
    out = tmp_path_factory.mktemp("cpack")
    res = subprocess.run(["cpack", "--config", str(BUILD_DIR / "CPackConfig.cmake"), "-B", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    found = {kind: sorted(out.glob(pattern)) for kind, pattern in
             (("deb", "collbench_*.deb"), ("ddeb", "collbench-dbgsym_*.ddeb"), ("tgz", "collbench-*.tar.gz"))}
    assert all(len(v) == 1 for v in found.values()), list(out.iterdir())
    deb_root = out / "deb"
    subprocess.run(["dpkg-deb", "-x", str(found["deb"][0]), str(deb_root)], check=True)
    ddeb_root = out / "ddeb"
    subprocess.run(["dpkg-deb", "-x", str(found["ddeb"][0]), str(ddeb_root)], check=True)
    return {k: v[0] for k, v in found.items()} | {"deb_root": deb_root, "ddeb_root": ddeb_root}


def field(deb, name):
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True).stdout.strip()


def build_id(path):
    notes = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)


def sections(path):
    return subprocess.run(["readelf", "-S", "-W", str(path)], capture_output=True, text=True).stdout


def test_deb_layout_and_fields(packages):
    root = packages["deb_root"]
    for rel in ["usr/bin/collbench", "usr/share/collbench/profiles/systems/gb300-nvl72.yaml",
                "usr/share/bash-completion/completions/collbench", "usr/share/doc/collbench/copyright",
                "usr/share/doc/collbench/CHANGELOG.md"]:
        assert (root / rel).is_file(), rel
    assert not (root / "usr/share/man/man1/collbench.1").exists()
    man = gzip.decompress((root / "usr/share/man/man1/collbench.1.gz").read_bytes()).decode()
    assert man.startswith(".TH COLLBENCH 1") or ".TH COLLBENCH 1" in man
    changelog = gzip.decompress((root / "usr/share/doc/collbench/changelog.gz").read_bytes()).decode()
    version = field(packages["deb"], "Version")
    assert changelog.startswith(f"collbench ({version}) unstable; urgency=medium\n")
    assert f" -- {MAINTAINER}  " in changelog
    assert field(packages["deb"], "Maintainer") == MAINTAINER
    copyright_text = (root / "usr/share/doc/collbench/copyright").read_text()
    assert copyright_text.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n")
    assert "License: Apache-2.0" in copyright_text and "/usr/share/common-licenses/Apache-2.0" in copyright_text
    depends = field(packages["deb"], "Depends")
    assert "libyaml-cpp" in depends and ("mpich" in depends or "openmpi" in depends), depends
    # LICENSE is the Apache-2.0 text itself
    assert (SOURCE_DIR / "LICENSE").read_text().split()[:4] == ["Apache", "License", "Version", "2.0,"]


def test_stripped_binary_and_its_debug_symbols(packages):
    binary = packages["deb_root"] / "usr/bin/collbench"
    assert ".debug_info" not in sections(binary) and ".symtab" not in sections(binary)
    bid = build_id(binary)
    debug = packages["ddeb_root"] / "usr/lib/debug/.build-id" / bid[:2] / f"{bid[2:]}.debug"
    assert debug.is_file()
    assert ".debug_info" in sections(debug)
    assert build_id(debug) == bid
    assert field(packages["ddeb"], "Depends") == f"collbench (= {field(packages['deb'], 'Version')})"
    with tarfile.open(packages["tgz"]) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/bin/collbench"))
        names = tar.getnames()
        assert any(n.endswith("share/collbench/schema/collbench.result-1.schema.json") for n in names)
        data = tar.extractfile(member).read()
    tgz_binary = packages["deb_root"].parent / "tgz-collbench"
    tgz_binary.write_bytes(data)
    assert ".debug_info" not in sections(tgz_binary)


def test_lintian_reports_no_error(packages):
    if shutil.which("lintian") is None:
        pytest.skip("lintian not installed (apt-get install -y lintian)")
    for pkg in (packages["deb"], packages["ddeb"]):
        res = subprocess.run(["lintian", "--fail-on", "error", str(pkg)], capture_output=True, text=True, timeout=300)
        errors = [l for l in res.stdout.splitlines() if l.startswith("E: ")]
        assert res.returncode == 0 and not errors, res.stdout + res.stderr


# ---- bash completion -------------------------------------------------------------------------

def complete(words):
    """COMPREPLY of the generated completion script for a command line ending in words[-1]."""
    script = subprocess.run([BIN, "completion", "bash"], capture_output=True, text=True, check=True).stdout
    line = " ".join(words)
    snippet = (f"{script}\nCOMP_WORDS=({' '.join(repr(w) for w in [str(Path(BIN).resolve()), *words])})\n"
               f"COMP_CWORD={len(words)}\nCOMP_LINE={line!r}\n_collbench_names\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    res = subprocess.run(["bash", "-c", snippet], capture_output=True, text=True, cwd="/", timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


def test_completion_offers_collectives_systems_and_profiles():
    assert complete(["run", "all"]) == ["allreduce", "allgather", "alltoall", "alltoallv"]
    assert "alltoallv" in complete(["model", "allto"])
    assert complete(["run", "-b", "8", "--system", "gb3"]) == ["gb300-nvl72"]
    assert complete(["accept", "cpu-"]) == ["cpu-local"]
    assert "gate" in complete(["ga"])  # subcommands as before
    assert "--system" in complete(["run", "--sys"])
    names = subprocess.run([BIN, "completion", "--names", "systems"], capture_output=True, text=True)
    assert names.returncode == 0 and "gb300-nvl72" in names.stdout.split()
    bad = subprocess.run([BIN, "completion", "--names", "rack"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr == ("collbench: error: unknown --names kind 'rack'; accepted: collectives, systems, workloads, "
                          "acceptance\n")
