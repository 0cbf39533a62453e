"""The command line's own documentation, generated from the CLI11 tree: --help examples on every
(sub)command, suggestions for unknown commands and options, the bash completion script, the man
page, and --version."""
import re
import shutil
import subprocess

import pytest

from conftest import SOURCE_DIR, run

# Every command, nested ones included, as `collbench man` lists them (.SS "collbench run ...").
def commands():
    man = run(["man"])
    assert man.returncode == 0, man.stderr
    paths = []
    for line in man.stdout.splitlines():
        m = re.match(r'\.SS "(collbench(?: [a-z][a-z0-9-]*)+)', line.replace("\\-", "-"))
        if m:
            paths.append(m.group(1).split()[1:])
    return paths


def test_man_lists_the_known_commands():
    names = {" ".join(p) for p in commands()}
    for expected in ["run", "sweep", "model", "report", "report weak-scaling", "gate", "accept", "locate",
                     "import", "calibrate", "completion", "man"]:
        assert expected in names, f"{expected} missing from the man page: {sorted(names)}"


def test_every_help_ends_with_examples():
    for path in commands() + [[]]:
        res = run(path + ["--help"])
        assert res.returncode == 0, (path, res.stderr)
        text = res.stdout.rstrip()
        # The last block (after the last line that starts a section) is the examples section.
        idx = text.rfind("\nExample")
        assert idx >= 0, f"'collbench {' '.join(path)} --help' has no Examples section:\n{text[-600:]}"
        tail = text[idx + 1:].splitlines()
        assert len(tail) >= 2 and all(line.startswith("  ") for line in tail[1:]), (
            f"'collbench {' '.join(path)} --help' does not end with examples:\n{text[idx:]}")
        assert any("collbench" in line for line in tail[1:]), path


def test_unknown_command_suggests_the_closest():
    res = run(["swep", "x.yaml"])
    assert res.returncode == 2
    assert "unknown command 'swep'" in res.stderr and "did you mean 'sweep'" in res.stderr, res.stderr


@pytest.mark.parametrize("args,bad,path,guess", [
    (["model", "allreduce", "--sytem", "gb300-nvl72"], "--sytem", "collbench model", "--system"),
    (["run", "allreduce", "--itres", "5"], "--itres", "collbench run", "--iters"),
    (["report", "weak-scaling", "a.jsonl", "--no-plot"], "--no-plot", "collbench report weak-scaling", "--no-plots"),
    (["gate", "--baselin=x.jsonl"], "--baselin", "collbench gate", "--baseline"),
])
def test_unknown_option_suggests_the_closest(args, bad, path, guess):
    res = run(args)
    assert res.returncode == 2, res
    assert f"unknown option '{bad}' for '{path}'" in res.stderr, res.stderr
    assert f"did you mean '{guess}'" in res.stderr, res.stderr
    assert f"'{path} --help'" in res.stderr


def test_unknown_option_without_a_close_one_names_it_only():
    res = run(["model", "allreduce", "--zzzzzzzzzz"])
    assert res.returncode == 2
    assert "unknown option '--zzzzzzzzzz' for 'collbench model'" in res.stderr
    assert "did you mean" not in res.stderr


def test_completion_script_is_valid_bash_and_completes(tmp_path):
    res = run(["completion", "bash"])
    assert res.returncode == 0, res.stderr
    script = tmp_path / "collbench.bash"
    script.write_text(res.stdout)
    syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr

    def complete(*words):
        line = " ".join(["collbench", *words])
        prog = (f"source {script}\nCOMP_WORDS=(collbench {' '.join(repr(w) for w in words)})\n"
                f"COMP_CWORD={len(words)}\nCOMP_LINE={line!r}\n_collbench\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
        out = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        return set(out.stdout.split())

    top = complete("")
    for name in ["run", "sweep", "model", "report", "gate", "accept", "locate", "completion", "man"]:
        assert name in top, top
    assert complete("sw") == {"sweep"}
    assert "--iters" in complete("run", "allreduce", "--it")
    assert "weak-scaling" in complete("report", "")
    assert "--no-plots" in complete("report", "weak-scaling", "--no-")
    # an option that takes a value completes file names
    (tmp_path / "profile-x.yaml").write_text("x")
    assert "profile-x.yaml" in complete("model", "allreduce", "--system", "prof")


def test_completion_rejects_unknown_shell():
    res = run(["completion", "fish"])
    assert res.returncode == 2
    assert "unknown shell 'fish'; accepted: bash" in res.stderr


def test_man_page_documents_every_option_of_every_command():
    man = run(["man"]).stdout
    assert man.startswith(".\\\"") and ".TH COLLBENCH 1" in man
    for path in commands():
        # the options that --help prints for this command
        help_text = run(path + ["--help"]).stdout
        opts = set(re.findall(r"^\s+(?:-\w,\s?)?(--[a-z][a-z0-9_-]*)", help_text, flags=re.M))
        assert opts, path
        title = f'.SS "collbench {" ".join(path)}'.replace("-", "\\-")
        section = man.split(title + " ", 1)[1].split("\n.SS ", 1)[0]
        for opt in opts:
            assert "\\fB" + opt.replace("-", "\\-") + "\\fR" in section, f"{opt} of {path} missing from the man page"
    if shutil.which("groff"):
        rendered = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=man, capture_output=True, text=True)
        assert rendered.returncode == 0 and not rendered.stderr.strip(), rendered.stderr


def test_version_names_version_sha_and_backends():
    res = run(["--version"])
    assert res.returncode == 0, res.stderr
    out = res.stdout
    first = out.splitlines()[0]
    assert re.fullmatch(r"collbench \d+\.\d+\.\d+ \(git ([0-9a-f]{7,}(-dirty)?|unknown); backends: mpi( nccl)?\)", first), first
    # the sha of the commit the binary was built from (refreshed at build time, not at configure)
    head = subprocess.run(["git", "-C", str(SOURCE_DIR), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode == 0 and "unknown" not in first:
        assert f"(git {head.stdout.strip()}" in first, (first, head.stdout)
    # the MPI library that is loaded, asked at run time, and the wrapper it was built with
    mpi_line = next(line for line in out.splitlines() if line.strip().startswith("mpi "))
    assert re.search(r"MPICH|Open MPI|Intel|MVAPICH|Cray", mpi_line), mpi_line
    assert "built with the" in mpi_line and ("mpich" in mpi_line or "openmpi" in mpi_line or "other" in mpi_line)
    nccl_line = next(line for line in out.splitlines() if line.strip().startswith("nccl "))
    assert "not built" in nccl_line or re.search(r"NCCL \d+\.\d+\.\d+, CUDA toolkit \d+", nccl_line), nccl_line
    assert "profiles:" in out
