"""A /research run's bookkeeping, where the mutation run found it unpinned: the init event the ledger keeps, whole;
run ids that never repeat in a topic; --exclude-site's usage error; the synthesis name a new run takes beside a file
no run claimed; the earlier syntheses of a goal that init lists past another goal's, and past a stray audit file;
the earlier pages a second run refreshed and counts as its own in the checkpoint; and a pick an older ledger
recorded as abandoned, offered again as unused."""

import datetime
import json
import secrets

import web
from standins import captured_reply, make_hit
from test_history import GOAL, TODAY, A, B, PAGES, article, ledger, refresh_topic, start_run, write


def init_lines(run, goal, topic="s"):
    r = run("init", goal, "--topic", topic)
    assert r.code == 0, r
    return r.out.splitlines()


# --- init: the ledger's record and the run id ------------------------------------------------------------------

def test_init_records_its_run_goal_topic_options_and_synthesis_in_the_ledger(run, md_root):
    run_id, _ = start_run(run, topic="s", sources=5)
    [event] = ledger(md_root)
    assert event == {"run": run_id, "time": event["time"], "command": "init", "round": 0, "goal": GOAL, "topic": "s",
                     "options": {"max_sources": 5, "deep": False, "max_rounds": 1, "with_corpus": False},
                     "synthesis": f"how-do-sea-stars-fare-{TODAY}-synthesis.md"}
    assert event["time"].startswith(f"{TODAY}T")


def test_two_runs_started_in_the_same_second_with_the_same_random_digits_get_different_ids(
        run, fire, md_root, monkeypatch):
    second = datetime.datetime(2026, 12, 1, 9, 30, 5, tzinfo=datetime.timezone.utc)
    digits = iter(["beef", "beef", "cafe"])   # a run id's four random hex digits; a scrape batch's are eight
    monkeypatch.setattr(web, "now_utc", lambda: second)
    monkeypatch.setattr(secrets, "token_hex", lambda n: next(digits) if n == 2 else "0badcafe")
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    first, _ = start_run(run)
    run("scrape", A, "--topic", "s")
    later, _ = start_run(run)
    assert (first, later) == ("20261201T093005Z-beef", "20261201T093005Z-cafe")
    status = run("status", "--topic", "s", "--json").json
    assert (status["run"], status["saved"], status["limit"]) == (later, 0, 4)   # run 1's page is not run 2's


def test_a_bad_exclude_site_is_refused_naming_the_option_as_typed(run, md_root):
    r = run("init", "the goal", "--topic", "t", "--exclude-site", "not a domain")
    assert (r.code, r.out) == (web.EXIT_USAGE, "")
    assert r.err == ("web.py: usage: --exclude-site: 'not a domain' is not a domain — write a host name such as "
                     "example.org (its subdomains are included)\n")


# --- the synthesis a run writes, and the earlier ones of its goal --------------------------------------------------

def test_a_synthesis_file_no_run_claimed_is_not_taken_by_a_new_run(run, md_root):
    (md_root / "s").mkdir()
    drafted = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", "# A draft written by hand\n")
    shown = web.display_path(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-2-synthesis.md")
    assert f"  synthesis: {shown}" in init_lines(run, GOAL)
    assert drafted.read_text("utf-8") == "# A draft written by hand\n"


def test_init_lists_the_goals_earlier_synthesis_written_before_another_goals_run(run, md_root):
    first = md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md"
    start_run(run)
    write(first, "# Sea stars\n")
    start_run(run, goal="why are tide pools salty")
    write(md_root / "s" / f"why-are-tide-pools-salty-{TODAY}-synthesis.md", "# Tide pools\n")
    assert init_lines(run, GOAL)[4:5] == [
        f"  earlier synthesis of this goal: {web.display_path(first)} — {TODAY} · not checked yet: run cite-check"]


def test_an_audit_file_the_ledger_has_no_record_of_is_not_named_as_the_earlier_synthesis_audit(run, md_root):
    # the file web.py writes first, then records: a crash between the two leaves it unrecorded
    first = md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md"
    start_run(run)
    write(first, "# Sea stars\n")
    write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-audit.md", "Problems: 0\n")
    assert init_lines(run, GOAL)[4:5] == [
        f"  earlier synthesis of this goal: {web.display_path(first)} — {TODAY} · not checked yet: run cite-check"]


# --- the pages a run found saved before it ------------------------------------------------------------------------

def test_a_second_runs_checkpoint_holds_the_earlier_pages_it_refreshed_and_found_still_there(run, fire, md_root):
    pages = dict(list(PAGES.items())[:3])                  # same.org/a stays, changes.org/b changes, gone.org/c goes
    refresh_topic(run, fire, md_root, pages)
    start_run(run)
    fire.set_page("https://changes.org/b", article("https://changes.org/b", "Sea stars regrow arms. 2"))
    fire.set_page("https://gone.org/c", captured_reply("notfound.json"))
    refreshed = run("refresh", "--topic", "s", "--json").json["pages"]
    assert {e["url"]: e["outcome"] for e in refreshed} == dict(zip(pages, ["unchanged", "changed", "gone"]))
    answer = run("manifest", "--topic", "s", "--json").json
    assert answer["budget"] == {"max": 4, "saved": 0}
    assert answer["saved"] == [   # b by its new version, 3 words shorter; c, gone from the web, is not counted
        {"n": 1, "title": "Sea stars", "url": "https://same.org/a", "words": 51, "flags": ["short"], "earlier": True},
        {"n": 2, "title": "Sea stars", "url": "https://changes.org/b", "words": 48, "flags": ["short"],
         "earlier": True}]


# --- picks worth another try ----------------------------------------------------------------------------------------

def test_a_pick_an_older_ledger_recorded_as_abandoned_is_offered_again_as_unused(run, fire, searx, md_root):
    searx.set_results("sea stars", [make_hit(A, "Sea star census"), make_hit(B, "Tide pool survey")])
    first = run("init", GOAL, "--topic", "s", "--deep", "--max-sources", "4", "--json").json["run"]
    run("search", "sea stars", "--topic", "s")
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    run("scrape", A, "--topic", "s")
    old = {"run": first, "time": f"{TODAY}T09:00:00Z", "command": "scrape", "round": 1, "url": B, "query": None,
           "outcome": "failed", "kind": "abandoned", "error": "not needed: --limit 1 was met by higher picks"}
    with open(md_root / "s" / "web" / "_ledger.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(old) + "\n")
    status = run("status", "--topic", "s")
    assert f"may retry: {B} (unused) — Tide pool survey" in status.out.splitlines()
    assert run("status", "--topic", "s", "--json").json["retry"] == [
        {"url": B, "kind": "unused", "title": "Tide pool survey"}]
