"""A topic kept for years stays light: what status and init print names the latest earlier synthesis and
how many there are, the manifest lists the last runs in full and earlier ones a line each, the scope table
appears only with a scope, and never-cited speaks of this run's pages (tests/bench.py grows one to 300 runs)."""

import web
from standins import make_hit
from test_history import TODAY, write

GOAL = "how do the reefs fare"


def runs_of_one_goal(run, md_root, count):
    """`count` runs of one goal on topic t, each with a search and a synthesis written; the run ids."""
    ids = []
    for i in range(1, count + 1):
        answer = run("init", GOAL, "--topic", "t", "--json").json
        run("search", f"reefs {i}", "--topic", "t")
        write(md_root / "t" / answer["synthesis"].rsplit("/", 1)[1], f"# Reefs {i}\n")
        ids.append(answer["run"])
    return ids


def test_status_and_init_name_the_latest_earlier_synthesis_and_how_many_there_are(run, searx, md_root):
    runs_of_one_goal(run, md_root, 4)
    status = run("status", "--topic", "t", "--json").json
    latest = web.display_path(md_root / "t" / f"how-do-the-reefs-fare-{TODAY}-3-synthesis.md")
    assert status["earlier"]["path"] == latest and status["earlier_count"] == 3
    assert run("status", "--topic", "t").out.count("earlier synthesis") == 1
    init = run("init", GOAL, "--topic", "t").out.splitlines()
    fourth = web.display_path(md_root / "t" / f"how-do-the-reefs-fare-{TODAY}-4-synthesis.md")
    assert [line for line in init if "earlier synthesis" in line] == [
        f"  earlier synthesis of this goal: {fourth} — {TODAY} · not checked yet: run cite-check · the latest of 4 "
        "(the manifest lists them all)"]


def test_the_manifest_lists_the_last_three_runs_in_full_and_the_syntheses_of_all(run, searx, md_root):
    for i in range(1, 6):
        searx.set_results(f"reefs {i}", [make_hit(f"https://reef{i}.org/a")])
    runs_of_one_goal(run, md_root, 5)
    for index in range(1, 6):
        (md_root / "t" / "web" / f"_picks-{index}.1.json").write_text("[]", encoding="utf-8")
    run("manifest", "--topic", "t")
    text = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8")
    queries = text.split("## Queries\n\n")[1].split("\n## ")[0]
    assert queries.startswith("Runs 3–5, the last 3; those of runs 1–2 are in [_ledger.jsonl](_ledger.jsonl).\n")
    assert [line.split(" | ")[2] for line in queries.splitlines() if line.startswith("| ") and "---" not in line][1:] \
        == ["reefs 3", "reefs 4", "reefs 5"]
    candidates = text.split("## Other candidates\n\n")[1].split("\n## ")[0]
    assert "reef5.org" in candidates and "reef2.org" not in candidates
    assert "picks: [_picks-3.1.json](_picks-3.1.json), [_picks-4.1.json](_picks-4.1.json), [_picks-5.1.json]" in text
    rows = text.count("\n| ") - text.count("\n| ---")   # each table's header, then: 5 runs, 3 queries, 3 candidates
    assert text.count("-synthesis.md](../") == 5 and rows == (1 + 5) + (1 + 3) + 1 + (1 + 3)


def test_the_scope_table_appears_only_with_a_scope_and_counts_each_dropped_hit_once(run, searx, md_root):
    run("init", GOAL, "--topic", "t")
    searx.set_results("reefs", [make_hit("ftp://reef.org/a"), make_hit("https://spam.org/a"), make_hit("https://reef.org/b")])
    run("search", "reefs", "--topic", "t")
    run("manifest", "--topic", "t")
    assert "## Source scope" not in (md_root / "t" / "web" / "_manifest.md").read_text("utf-8")   # not http: no scope
    (md_root / "t" / "sources.txt").write_text("block spam.org\n", encoding="utf-8")
    run("search", "reefs", "--topic", "t")
    run("search", "reefs", "--topic", "t")
    out = run("manifest", "--topic", "t").out
    text = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8")
    policy = web.display_path(md_root / "t" / "sources.txt")
    assert text.split("## Source scope\n\n")[1].split("\n## ")[0].splitlines() == [
        "- `sources.txt` line 1: block spam.org (dropped 2 hits)", "", "| dropped hit | why | times |",
        "| --- | --- | --- |", f"| https://spam.org/a | blocked by {policy}:1 | 2 |"]
    assert "dropped by the source scope in this run: 2 hits (see the manifest)" in out
