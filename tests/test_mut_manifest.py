"""The manifest and the run checkpoint, and doctor's checks, where the mutation run found them unpinned: the
numbers of pages placed by hand, the current version only under Saved sources, the order and outcome of other
candidates, the blank line before the last refresh, the ledger event of the manifest (README: every event has
run, time, command and round); doctor's exit code for each passing check and an md root that takes no bytes."""

import json
import os
import signal
import subprocess
import sys

import pytest

import web
from conftest import ROOT, read_ledger
from standins import make_hit
from test_history import PAGES, TODAY, article, refresh_topic


def manifest_text(md_root, topic="t"):
    return (md_root / topic / "web" / "_manifest.md").read_text("utf-8")


def candidates_table(md_root, topic="t"):
    """The rows of the manifest's Other candidates table."""
    head = "| round | rank | title | found by | outcome |\n| --- | --- | --- | --- | --- |\n"
    return manifest_text(md_root, topic).split(head)[1].split("\n\n")[0].splitlines()


# --- doctor -------------------------------------------------------------------------------------------------

def test_doctor_json_gives_every_passing_check_exit_code_0_and_no_fix(run, doctor_box):
    r = run("doctor", "--json")
    assert r.code == 0
    assert [(c["name"], c["ok"], c["code"], c["fix"]) for c in r.json["checks"]] == [
        ("proxy", True, 0, ""), ("searxng", True, 0, ""), ("firecrawl", True, 0, ""), ("md-root", True, 0, "")]


def _no_bytes_to_files():
    """In the child: every regular file may hold 0 bytes (a disk or quota with no room), and going past that
    is the error EFBIG, not a signal."""
    import resource
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


@pytest.mark.skipif(os.name != "posix", reason="a file-size limit is POSIX's setrlimit")
def test_doctor_writes_real_bytes_so_an_md_root_with_no_room_is_not_writable(md_root):
    proc = subprocess.run([sys.executable, "-B", os.path.join(ROOT, "web.py"), "doctor", "--json"],
                          capture_output=True, env=dict(os.environ), timeout=30, preexec_fn=_no_bytes_to_files)
    check = next(c for c in json.loads(proc.stdout)["checks"] if c["name"] == "md-root")
    assert check == {"name": "md-root", "ok": False, "detail": f"{web.display_path(md_root)}: File too large",
                     "code": web.EXIT_CONFIG, "fix": "make it writable or set WEB_MD_ROOT"}


# --- the manifest -------------------------------------------------------------------------------------------

def test_an_unused_pick_may_be_picked_again_while_the_run_can_scrape_and_not_once_its_budget_is_spent(run, fire,
                                                                                                   md_root):
    urls = ["https://a.org/1", "https://b.org/2", "https://c.org/3"]
    fire.set_articles(*urls)
    run("init", "g", "--topic", "t", "--max-sources", "2", "--deep")
    run("scrape", *urls[:2], "--topic", "t", "--limit", "1", "--workers", "2")
    run("manifest", "--topic", "t")
    row = "| 1 | – | [https://b.org/2](https://b.org/2) | – | unused{}: not needed: --limit 1 was met |"
    assert candidates_table(md_root) == [row.format(" (may pick again)")]
    run("scrape", urls[2], "--topic", "t")                       # the second page of two: the budget is spent
    run("manifest", "--topic", "t")
    assert candidates_table(md_root) == [row.format("")]


def test_a_page_no_search_found_comes_after_every_ranked_hit_of_its_round_however_many(run, searx, fire, md_root):
    hits = [make_hit(f"https://h{i}.org/x", f"Hit {i}") for i in range(1, 66)]
    searx.set_results("stars", hits)
    run("init", "g", "--topic", "t")
    run("search", "stars", "--topic", "t", "--max", "100")
    run("scrape", "https://by-hand.org/x", "--topic", "t")          # a page nobody found: Firecrawl answers 404
    run("manifest", "--topic", "t")
    rows = candidates_table(md_root)
    assert [row.split(" | ")[1] for row in rows] == [str(rank) for rank in range(1, 66)] + ["–"]
    assert rows[-1].startswith("| 1 | – | [https://by-hand.org/x](https://by-hand.org/x) | – | failed: ")


def saved_sources(md_root, topic="t"):
    """The rows of the manifest's Saved sources table."""
    head = "| # | title | words | note | flags | source |\n| --- | --- | --- | --- | --- | --- |\n"
    return manifest_text(md_root, topic).split(head)[1].split("\n\n")[0].splitlines()


def test_a_page_file_put_in_the_topic_by_hand_gets_the_next_number(run, fire, md_root):
    fire.set_articles("https://a.org/1", "https://b.org/2")
    run("scrape", "https://a.org/1", "--topic", "t")
    (md_root / "u").mkdir()
    run("scrape", "https://b.org/2", "--topic", "u")
    (md_root / "t" / "web" / "b-org-2.md").write_bytes((md_root / "u" / "web" / "b-org-2.md").read_bytes())
    answer = run("manifest", "--topic", "t", "--json").json
    assert [(s["n"], s["url"]) for s in answer["saved"]] == [(1, "https://a.org/1"), (2, "https://b.org/2")]
    assert saved_sources(md_root) == [
        "| 1 | [Understanding Tide Pools \\| Coastal Notes](a-org-1.md) | 262 | – | – | https://a.org/1 |",
        "| 2 | [Understanding Tide Pools \\| Coastal Notes](b-org-2.md) | 262 | – | – | https://b.org/2 |"]


def test_the_manifest_lists_a_refreshed_pages_current_version_and_ends_with_the_refresh_after_a_blank_line(
        run, fire, md_root):
    refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:2]))
    fire.set_page("https://changes.org/b", article("https://changes.org/b", "Sea stars regrow arms. 2"))
    run("refresh", "--topic", "s")
    run("manifest", "--topic", "s")
    assert saved_sources(md_root, "s") == ["| 1 | [Sea stars](same-org-a.md) | 51 | – | short | https://same.org/a |",
                                           "| 2 | [Sea stars](changes-org-b.v2.md) | 48 | – | short | https://changes.org/b |"]
    assert manifest_text(md_root, "s").endswith(
        f" (latest) — run 1, {TODAY} · passed cite-check on {TODAY}\n\n"
        f"refreshed {TODAY}: 2 cited pages, 1 changed ([2]) · 1 quote and 0 numbers no longer on the live page\n"
        "<!-- web.py:end -->\n")


def test_the_ledger_records_the_manifest_with_the_run_and_the_round_gathering_ended_at(run, fire, md_root):
    fire.set_articles("https://a.org/1")
    run_id = run("init", "g", "--topic", "t", "--json").json["run"]
    run("scrape", "https://a.org/1", "--topic", "t")
    run("manifest", "--topic", "t")
    event = read_ledger(md_root / "t" / "web" / "_ledger.jsonl")[-1]
    assert event == {"run": run_id, "time": event["time"], "command": "manifest", "round": 1}
    assert event["time"].startswith(f"{web.now_utc():%Y-%m-%d}T")
