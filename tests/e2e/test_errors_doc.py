"""docs/errors.md stays true: every example in it is run and must print exactly the documented
message on standard error with the documented exit code. Regenerate the expected text after an
intended change of a message with

    COLLBENCH_UPDATE_ERRORS_DOC=1 python3 -m pytest -q tests/e2e/test_errors_doc.py

(then read the diff of docs/errors.md: each message must still name file, line, key and the
accepted values). Examples run from the repository root, with no calibrated cpu-local profile
and without COLLBENCH_FAULT unless the command sets it; the source tree prints as <src> and the
user config folder as <config>, the host name as <host>."""
import os
import re
import subprocess

import pytest

from conftest import BIN, MPIEXEC, SOURCE_DIR, _EMPTY_CONFIG

DOC = SOURCE_DIR / "docs" / "errors.md"
BLOCK = re.compile(r"```console\n\$ (?P<cmd>[^\n]*)\n(?P<out>.*?)# exit (?P<code>\d+)\n```", re.S)
# Input classes that must each have at least one example (issue 7: every user input path).
REQUIRED_SECTIONS = ["Command line", "Sweep files", "System profiles", "Workload profiles", "Acceptance profiles",
                     "Results files",
                     "nccl-tests logs", "Gate policies", "Environment", "Output files"]


def examples(text):
    return list(BLOCK.finditer(text))


def shell_command(cmd):
    # `collbench` and `mpiexec` as command words mean the binaries under test.
    cmd = re.sub(r"(^|[\s;&|])collbench(?=\s)", lambda m: m.group(1) + BIN, cmd)
    return re.sub(r"(^|[\s;&|])mpiexec(?=\s)", lambda m: m.group(1) + MPIEXEC, cmd)


def run_example(cmd):
    env = dict(os.environ)
    env.pop("COLLBENCH_FAULT", None)
    env["XDG_CONFIG_HOME"] = _EMPTY_CONFIG
    env["COLUMNS"] = "100"
    p = subprocess.run(["bash", "-c", shell_command(cmd)], capture_output=True, text=True, timeout=300,
                       cwd=SOURCE_DIR, env=env)
    # Machine-specific paths print as placeholders: <src> for the source tree, <config> for
    # the (empty) user config folder.
    text = p.stderr.replace(str(SOURCE_DIR), "<src>").replace(_EMPTY_CONFIG, "<config>")
    # ... and the host name as <host>.
    text = re.sub(r"\(host [^,()]+, local rank", "(host <host>, local rank", text)
    text = re.sub(r"on host '[^']+'", "on host '<host>'", text)
    stderr = "\n".join(line.rstrip() for line in text.splitlines())
    return p.returncode, stderr.strip("\n") + "\n" if stderr.strip() else ""


def built_with_nccl():
    out = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout
    return "nccl" in out.splitlines()[0]  # "collbench X (git Y; backends: mpi nccl)"


def test_every_input_class_has_an_example():
    text = DOC.read_text()
    found = examples(text)
    assert len(found) >= len(REQUIRED_SECTIONS)
    headings = [m.group(1) for m in re.finditer(r"^## (.+)$", text, re.M)]
    for name in REQUIRED_SECTIONS:
        section = next((h for h in headings if h.startswith(name)), None)
        assert section is not None, f"docs/errors.md has no section '{name}'"
        body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
        assert BLOCK.search(body), f"section '{section}' has no example"


def test_update_mode_or_skip():
    if os.environ.get("COLLBENCH_UPDATE_ERRORS_DOC") != "1":
        pytest.skip("set COLLBENCH_UPDATE_ERRORS_DOC=1 to rewrite docs/errors.md from real runs")
    text = DOC.read_text()

    def replace(m):
        code, stderr = run_example(m.group("cmd"))
        return f"```console\n$ {m.group('cmd')}\n{stderr}# exit {code}\n```"

    DOC.write_text(BLOCK.sub(replace, text))


@pytest.mark.parametrize("example", examples(DOC.read_text()), ids=lambda m: m.group("cmd")[:80])
def test_documented_example_prints_what_the_doc_says(example):
    if os.environ.get("COLLBENCH_UPDATE_ERRORS_DOC") == "1":
        pytest.skip("updating")
    if "--backend nccl" in example.group("cmd") and not built_with_nccl():
        pytest.skip("the documented nccl example is the CUDA build's message; this binary has no nccl backend")
    code, stderr = run_example(example.group("cmd"))
    assert code == int(example.group("code")), f"$ {example.group('cmd')}: exit {code}, documented {example.group('code')}"
    assert stderr == example.group("out"), f"$ {example.group('cmd')}\n--- documented\n{example.group('out')}--- actual\n{stderr}"
    assert code == int(example.group("code"))
