"""The root column: `run`/`sweep`'s console table and `report`'s table, Markdown and CSV show a
broadcast's root (docs/results-format.md); tables print it only when some record has a root other
than 0, so a root-0 run prints the table it always did."""
from conftest import run

FAST = ["-n", "3", "-w", "1"]


def broadcast(tmp_path, name, root):
    out = tmp_path / f"{name}.jsonl"
    p = run(["run", "broadcast", "-b", "1K", "-e", "1K", "--root", str(root), "--out", out] + FAST, np=2)
    assert p.returncode == 0, p.stderr
    return out, p.stdout


def header_line(text):
    return next(line for line in text.splitlines() if line.startswith("#") and "redop" in line)


def test_root_zero_keeps_the_tables_and_an_empty_column_only_in_csv(tmp_path):
    out, console = broadcast(tmp_path, "r0", 0)
    assert header_line(console).split()[1:6] == ["size", "count", "type", "redop", "algo"]
    report = run(["report", out])
    assert report.returncode == 0 and header_line(report.stdout).split()[4:6] == ["redop", "algo"]
    md = run(["report", out, "--format", "markdown"]).stdout
    assert "| redop | algo |" in md and "| root |" not in md
    csv = run(["report", out, "--format", "csv"]).stdout.splitlines()
    assert csv[0].endswith(",overlap_efficiency,root") and csv[1].endswith(",0")


def test_a_non_zero_root_shows_in_every_format(tmp_path):
    out, console = broadcast(tmp_path, "r1", 1)
    head = header_line(console).split()
    assert head[4:7] == ["redop", "root", "algo"]
    row = next(line for line in console.splitlines() if line.strip().startswith("1024")).split()
    assert row[3:5] == ["-", "1"]  # redop, root
    report = run(["report", out])
    assert header_line(report.stdout).split()[4:7] == ["redop", "root", "algo"]
    md = run(["report", out, "--format", "markdown"]).stdout
    assert "| redop | root | algo |" in md and "| float32 | – | 1 | auto |" in md
    csv = run(["report", out, "--format", "csv"]).stdout.splitlines()
    assert csv[1].endswith("@root=1|2|2,,,,,,1")
