"""`collbench locate` at 4 ranks on a 2-core host (correctness of the verdicts, with injected
effects of 20 ms or more so oversubscription noise cannot hide them): a delayed rank 2 is named
by the skew and by the bisection; a slowed pair (1,3) is named by the pairwise matrix; nothing
is flagged without injection, twice; a results file can be analysed offline.

The pairwise threshold is --slow-link 0.25 here (default 0.5): each round-robin round is measured
once, about a second apart, and on 4 ranks sharing 2 cores a load swing between two rounds can
halve a healthy link's rate (a healthy veth link measured 45% of the reference once in the test
bed). The injected effects are sized to land far below it: a 60 ms delay against a ~5-7 ms
exchange (~0.1 of the reference), a pair slowed 20x (~0.05)."""
import csv
import json
import os

from conftest import read_jsonl, run

DELAY_RANK_2 = {"COLLBENCH_FAULT": "delay:rank=2,us=60000"}
# slow-pair multiplies the pair's exchange time (~5-7 ms for 4 MiB here) by 20: +95 ms or more.
SLOW_PAIR_13 = {"COLLBENCH_FAULT": "slow-pair:a=1,b=3,factor=20"}
SLOW_LINK = ["--slow-link", "0.25"]


def report(out_dir):
    return json.loads((out_dir / "locate.json").read_text())


def suspects(rep):
    return sorted((s["kind"], s.get("rank", tuple(s.get("ranks", [])))) for s in rep["suspects"])


def test_delayed_rank_is_named_by_skew_bisection_and_pairwise(tmp_path, validator):
    out = tmp_path / "loc"
    p = run(["locate", "--out-dir", out] + SLOW_LINK, np=4, env=DELAY_RANK_2, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    rep = report(out)
    assert rep["schema"] == "collbench.locate/1"
    assert rep["fault"] == DELAY_RANK_2["COLLBENCH_FAULT"]
    assert suspects(rep) == [("rank", 2)]
    found_by = rep["suspects"][0]["found_by"].split(", ")
    assert "skew" in found_by and "bisection" in found_by and "pairwise" in found_by
    # Skew: rank 2 waits least inside the collective in every case.
    for case in rep["skew"]["cases"]:
        assert min(range(4), key=lambda r: case["wait_us"][r]) == 2
    assert [s["rank"] for s in rep["skew"]["stragglers"]] == [2]
    # Bisection: at most log2(4) = 2 runs, ending at rank 2.
    bis = rep["bisection"]
    assert len(bis["steps"]) == 2 and bis["rank"] == 2
    assert bis["steps"][0]["order"] == "second_slower"  # ranks 2-3 vs 0-1
    assert bis["steps"][1]["order"] == "first_slower"   # rank 2 vs rank 3
    # The matrix on disk, for plotting.
    rows = list(csv.reader((out / "pairwise-matrix.csv").open()))
    assert rows[0] == ["rank", "0", "1", "2", "3"] and len(rows) == 5
    assert rows[3][3] == ""  # the diagonal is not measured
    assert "SUSPECT rank 2" in p.stdout
    for name in ("records-skew.jsonl", "records-pairwise.jsonl", "records-bisect-1.jsonl", "records-bisect-2.jsonl"):
        for line in read_jsonl(out / name):
            validator.validate(line)
            if line["kind"] == "case":  # every exchange verified before timing
                assert line["checked"] and line["wrong"]["total"] == 0 and line["status"] == "ok"
    pairwise = read_jsonl(out / "records-pairwise.jsonl")[1:]
    assert [r["case_key"].split("|")[7] for r in pairwise] == [f"4194304@round-robin-round{i}" for i in range(3)]
    bisect2 = read_jsonl(out / "records-bisect-2.jsonl")[1]
    assert bisect2["domain_sizes"] == [2, 1, 1]
    assert [d["num_ranks"] for d in bisect2["per_domain"]] == [2, 1, 1]
    # The same records, analysed offline (no mpiexec), name rank 2 again.
    q = run(["locate", "--results", out / "records-skew.jsonl", "--results", out / "records-pairwise.jsonl",
             "--methods", "skew,pairwise", "--format", "json"] + SLOW_LINK)
    assert q.returncode == 1, q.stderr
    offline = json.loads(q.stdout)
    assert suspects(offline) == [("rank", 2)]
    assert offline["suspects"][0]["found_by"] == "skew, pairwise"


def test_slowed_pair_is_named_by_the_pairwise_matrix(tmp_path):
    out = tmp_path / "pair"
    p = run(["locate", "--methods", "pairwise", "--out-dir", out] + SLOW_LINK, np=4, env=SLOW_PAIR_13, timeout=300)
    assert p.returncode == 1, p.stdout + p.stderr
    rep = report(out)
    assert suspects(rep) == [("link", (1, 3))]
    pw = rep["pairwise"]
    assert [l["ranks"] for l in pw["slow_links"]] == [[1, 3]]
    assert pw["suspect_ranks"] == []
    gbps = pw["matrix_gbps"]
    others = [gbps[a][b] for a in range(4) for b in range(a + 1, 4) if (a, b) != (1, 3)]
    assert gbps[1][3] < 0.25 * min(others)
    assert "SUSPECT link 1-3" in p.stdout


def test_no_false_alarm_without_injection(tmp_path):
    for attempt in range(2):
        out = tmp_path / f"clean{attempt}"
        p = run(["locate", "--out-dir", out] + SLOW_LINK, np=4, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        rep = report(out)
        assert rep["suspects"] == [], rep["suspects"]
        assert rep["fault"] is None
        assert rep["skew"]["stragglers"] == []
        assert rep["pairwise"]["slow_links"] == []
        assert rep["bisection"]["found"] is False and len(rep["bisection"]["steps"]) == 1
        assert "none: nothing found" in p.stdout


def test_oversubscribed_host_is_noted_at_the_default_threshold(tmp_path):
    out = tmp_path / "note"
    p = run(["locate", "--methods", "pairwise", "--pair-bytes", "64K", "--out-dir", out], np=4, timeout=300)
    assert p.returncode in (0, 1), p.stdout + p.stderr  # a slow link may be flagged: only the note is checked
    notes = [n for n in report(out)["notes"] if "ranks share" in n]
    if len(os.sched_getaffinity(0)) < 4:  # 4 ranks outnumber the cores (this VM: 2)
        assert len(notes) == 1 and notes[0].startswith("4 ranks share ") and "--slow-link 0.25" in notes[0], notes
        assert f"# note: {notes[0]}" in p.stdout
    else:
        assert notes == []


def test_bad_input_exits_2(tmp_path):
    p = run(["locate", "--methods", "skew,bisekt"], np=2)
    assert p.returncode == 2 and "did you mean 'bisect'" in p.stderr
    p = run(["locate", "--results", tmp_path / "missing.jsonl"])
    assert p.returncode == 2
    p = run(["locate", "--pair-bytes", "4M,8M"], np=2)
    assert p.returncode == 2 and "one size" in p.stderr
