"""Flags declared once for every subcommand that has them (src/cli/common_options.cpp): the size
axes -b/-e/-f/-i of run and model read, default and fail alike, and --system is named the same way
wherever a system profile is taken."""
import re

import pytest

from conftest import run

SYSTEM_COMMANDS = [["run"], ["model"], ["accept"], ["step"], ["simulate", "platform"], ["report"], ["report", "weak-scaling"],
                   ["import"]]
SIZE_COMMANDS = [["run"], ["model"]]


def help_lines(path, prefix):
    p = run(path + ["--help"])
    assert p.returncode == 0, p.stderr
    return [line for line in p.stdout.splitlines() if line.lstrip().startswith(prefix)]


@pytest.mark.parametrize("path", SYSTEM_COMMANDS, ids=" ".join)
def test_system_names_a_profile_the_same_way(path):
    p = run(path + ["--help"])
    assert p.returncode == 0, p.stderr
    # The option line may wrap after the name (step's default makes it long); join the two lines.
    text = re.sub(r"\n {20,}", " ", p.stdout)
    line = next(line for line in text.splitlines() if line.lstrip().startswith("--system "))
    assert line.lstrip().startswith("--system NAME|FILE"), line
    assert line.endswith("(a name from collbench model --list-systems, or a YAML file)"), line


def test_size_flags_have_one_help():
    flags = ("-b,", "-e,", "-f,", "-i,")
    lines = {" ".join(path): [l for f in flags for l in help_lines(path, f)] for path in SIZE_COMMANDS}
    assert len(lines["run"]) == 4, lines
    assert lines["run"] == lines["model"]
    assert lines["run"][0].split()[:2] == ["-b,--minbytes", "TEXT=32M"]


@pytest.mark.parametrize("args,message", [
    (["-b", "64M", "-e", "1M"], "minimum size 67108864 (-b) is larger than maximum size 1048576 (-e)"),
    (["-f", "nan"], "size factor (-f) nan must be a finite number"),
    (["-b", "abc"], "invalid size 'abc'"),
    (["-b", "8", "-e", "1G", "-i", "1"], "size series 8..1073741824 in steps of 1 has more than"),
])
def test_size_flags_fail_alike(args, message):
    for cmd in (["model", "allreduce", "--system", "gb300-nvl72"], ["run", "allreduce"]):
        p = run(cmd + args)
        assert p.returncode == 2, (cmd, p.stderr)
        assert message in p.stderr, (cmd, p.stderr)
