"""`collbench sweep --dry-run`: the time estimate follows the stopping rule of docs/measurement.md
step 6 (budget, --max-iters, --max-time), per case and in total, with values worked out by hand."""
from conftest import run

SWEEP = """name: estimate
cases:
  - {collective: allreduce, bytes: 1K}
  - {collective: allreduce, bytes: 2K, budget: 0, max_time: 1s}
  - {collective: allreduce, bytes: 4K, iters: 20, budget: 50ms}
  - {collective: allreduce, bytes: 8K, min_iters: 400, budget: 20ms, max_time: 300ms}
"""


def dry_run(tmp_path, *flags):
    (tmp_path / "s.yaml").write_text(SWEEP)
    p = run(["sweep", "--dry-run", tmp_path / "s.yaml", *flags])
    assert p.returncode == 0, p.stderr
    rows = [l for l in p.stdout.splitlines() if not l.startswith("#")]
    total = next(l for l in p.stdout.splitlines() if l.startswith("# estimated run time"))
    return [r.split()[-1] for r in rows], total


def test_estimate_per_case_follows_budget_max_iters_and_max_time(tmp_path):
    per_case, total = dry_run(tmp_path)
    # 1. defaults: the 10 ms budget (100 iterations of at most 10 ms / 100 fit in it)
    # 2. budget 0: nothing but --max-iters or --max-time stops it: 1 s
    # 3. -n 20 stops it before the budget's 100 iterations: 20 x 50 ms / 100 = 10 ms
    # 4. the budget waits for min_iters 400: 400 x 20 ms / 400 = 20 ms
    assert per_case == ["0.01", "1", "0.01", "0.02"]
    # at most: every case to its --max-time, 2 + 1 + 2 + 0.3 s
    assert total == "# estimated run time: about 1.04 s, at most 5.3 s"


def test_repeats_and_command_line_budget_change_the_estimate(tmp_path):
    assert dry_run(tmp_path, "--repeats", "2")[1] == "# estimated run time: about 2.08 s, at most 10.6 s"
    # --budget 0 replaces every case's budget: each runs to its --max-iters or --max-time
    per_case, total = dry_run(tmp_path, "--budget", "0")
    assert per_case == ["2", "1", "2", "0.3"]
    assert total == "# estimated run time: about 5.3 s, at most 5.3 s"
