"""`web.py status`: the budget split, stop rules, retryable picks and the next step, read from the ledger."""

import json

import pytest
from standins import captured_reply, make_hit

import web
from test_hardening import snapshot


@pytest.mark.parametrize("total, deep, rounds, saved_before, round_no, share", [
    (12, False, 1, 0, 1, 12),                           # one round spends it all
    (12, False, 1, 5, 1, 7),
    (12, False, 1, 0, 2, 0),                            # no second round without --deep
    (12, True, 3, 0, 1, 6), (8, True, 2, 0, 1, 4), (7, True, 3, 0, 1, 4),   # round 1: half, rounded up
    (1, True, 3, 0, 1, 1), (2, True, 3, 0, 1, 1),
    (12, True, 3, 6, 2, 3), (12, True, 3, 9, 3, 3),      # later rounds: an even share of what is left
    (12, True, 3, 4, 2, 4), (12, True, 3, 5, 3, 7),
    (8, True, 2, 4, 2, 4), (8, True, 2, 8, 2, 0),        # budget spent
    (8, True, 2, 3, 3, 0),                               # past max rounds
])
def test_the_budget_split(total, deep, rounds, saved_before, round_no, share):
    options = {"max_sources": total, "deep": deep, "max_rounds": rounds}
    assert web.round_share(options, saved_before, round_no) == share


def events(*rows, deep=True, max_sources=6, max_rounds=3):
    ledger = [{"run": "r1", "command": "init", "goal": "g", "options": {
        "max_sources": max_sources, "deep": deep, "max_rounds": max_rounds}, "synthesis": "g-synthesis.md"}]
    for command, round_no, fields in rows:
        ledger.append(dict({"run": "r1", "command": command, "round": round_no}, **fields))
    return ledger


def saved(round_no, name):
    return ("scrape", round_no, {"outcome": "saved", "path": f"md/t/web/{name}.md", "url": f"https://{name}.org/",
                                 "words": 100})


def test_a_fresh_run_waits_for_round_1():
    facts = web.run_facts(events())
    assert (facts["round"], facts["scraped"], facts["limit"], facts["stop"]) == (0, False, 3, [])


def test_a_searched_round_waits_for_its_scrape_and_its_limit_does_not_change():
    facts = web.run_facts(events(("search", 1, {"new": 5, "pages": 1})))
    assert (facts["round"], facts["scraped"], facts["limit"]) == (1, False, 3)


def test_after_a_scrape_the_next_round_gets_an_even_share_of_what_is_left():
    facts = web.run_facts(events(("search", 1, {"new": 5, "pages": 2}), saved(1, "a"), saved(1, "b"),
                                 ("scrape", 1, {"outcome": "failed", "kind": "timeout", "url": "https://slow.org/"}),
                                 ("scrape", 1, {"outcome": "failed", "kind": "target-status", "url": "https://x.org/"})))
    assert (facts["round"], facts["scraped"], facts["limit"]) == (1, True, 2)   # (6 - 2) over rounds 2 and 3
    assert facts["retry"] == [["https://slow.org/", "timeout"]]                 # a 404 is final; a timeout is not
    assert facts["requests"] == {"search": 2, "scrape": 4} and facts["words"] == 200


@pytest.mark.parametrize("rows, stop", [
    ([("search", 1, {"new": 0})], ["no new hits"]),
    ([("search", 1, {"new": 3})] + [saved(1, c) for c in "abcdef"], ["budget spent"]),
    ([("search", r, {"new": 1}) for r in (1, 2, 3)] + [saved(3, "a")], ["max rounds"]),
    ([("search", r, {"new": 1}) for r in (1, 2, 3)], []),      # round 3 searched, not scraped yet
])
def test_stop_rules(rows, stop):
    assert web.run_facts(events(*rows))["stop"] == stop


def test_a_retried_pick_that_was_saved_is_no_longer_listed():
    facts = web.run_facts(events(("scrape", 1, {"outcome": "failed", "kind": "abandoned", "url": "https://a.org/"}),
                                 saved(2, "a")))
    assert facts["retry"] == []


def status_of(run, *argv):
    r = run("status", "--topic", "t", *argv)
    assert r.code == 0, r
    return r


def test_status_tells_each_phase_what_to_do_next(run, searx, fire, md_root):
    run("init", "how do tide pools work", "--topic", "t", "--max-sources", "2", "--deep", "--max-rounds", "2")
    assert status_of(run, "--json").json["next"].startswith("search round 1: write 4–8 queries")
    searx.set_results("q", [make_hit("https://a.org/1"), make_hit("https://b.org/2")])
    run("search", "q", "--topic", "t")
    assert status_of(run, "--json").json["next"] == (
        "rank round 1's hits, write md/t/web/_picks-1.json, then run: python3 web.py scrape --topic t "
        "--from md/t/web/_picks-1.json --limit 1 --json")
    fire.set_page("https://b.org/2", captured_reply("timeout.json"))
    run("scrape", "https://b.org/2", "https://a.org/1", "--topic", "t", "--limit", "1")
    answer = status_of(run, "--json").json
    assert answer["next"].startswith("round 1 is done; deep round 2 is open") and answer["limit"] == 1
    assert answer["retry"] == [{"url": "https://b.org/2", "kind": "timeout"}]
    human = status_of(run).out.splitlines()
    assert human[1] == "round 1 of 2 (--deep), scraped · 1 of 2 pages saved · next --limit 1"
    assert "may retry: https://b.org/2 (timeout)" in human
    assert human[-2] == f"date: {web.now_utc():%Y-%m-%d}"


def test_status_and_manifest_refuse_a_topic_that_does_not_exist_and_create_nothing(run, md_root):
    run("init", "goal", "--topic", "real")
    for command in ("status", "manifest"):
        before = snapshot(md_root)
        r = run(command, "--topic", "typo")
        assert r.code == web.EXIT_USAGE and r.err == (
            f"web.py: usage: there is no topic 'typo' in {web.display_path(md_root)} — topics: real\n")
        assert snapshot(md_root) == before


def test_status_without_a_run_says_how_to_start_one(run, fire, md_root):
    run("scrape", "https://a.org/x", "--topic", "t")
    r = run("status", "--topic", "t", "--json")
    assert r.code == web.EXIT_USAGE and 'start one: python3 web.py init "goal" --topic t' in r.err
    assert json.loads(r.out)["ok"] is False


def test_manifest_json_is_the_checkpoint_of_the_latest_run(run, searx, fire, md_root):
    from standins import captured_reply
    fire.set_page("https://b.org/2", captured_reply("timeout.json"))
    run("scrape", "https://old.org/0", "--topic", "t")                          # saved before the run
    run("init", "goal", "--topic", "t", "--max-sources", "3")
    run("scrape", "https://a.org/1", "https://b.org/2", "https://old.org/0", "--topic", "t", "--workers", "1")
    answer = run("manifest", "--topic", "t", "--json").json
    assert answer == {
        "schema": "web.manifest/2", "ok": True, "path": web.display_path(md_root / "t" / "web" / "_manifest.md"),
        "run": answer["run"], "round": 0, "budget": {"max": 3, "saved": 1},
        "saved": [{"n": 1, "title": "Understanding Tide Pools | Coastal Notes", "url": "https://old.org/0",
                   "words": 262, "earlier": True},
                  {"n": 2, "title": "Understanding Tide Pools | Coastal Notes", "url": "https://a.org/1", "words": 262}],
        "failed": [{"url": "https://b.org/2", "kind": "timeout", "error": "Firecrawl: Scrape timed out", "retry": True}],
        "syntheses": []}
    lines = run("manifest", "--topic", "t").out.splitlines()
    assert lines[0] == f"t · run {answer['run']} · round 0 of 1 · 1 of 3 pages saved"
    assert "  [1] Understanding Tide Pools | Coastal Notes — 262 words — saved in an earlier run" in lines
    assert "  timeout (may retry)  https://b.org/2 — Firecrawl: Scrape timed out" in lines
    assert lines[-1] == f"wrote {answer['path']} · notes: {web.display_path(md_root / 't' / 'web' / '_notes.md')} " \
                        f"(not written yet)"
