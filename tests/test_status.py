"""`web.py status`: the budget split, stop rules, retryable picks and the next step, read from the ledger."""

import json
import re

import pytest
from standins import Reply, captured_reply, make_hit, page_body

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
    assert (facts["round"], facts["searched"], facts["scraped"], facts["limit"], facts["stop"]) == (1, 0, False, 3, [])


def test_a_searched_round_waits_for_its_scrape_and_its_limit_does_not_change():
    facts = web.run_facts(events(("search", 1, {"new": 5, "pages": 1})))
    assert (facts["round"], facts["scraped"], facts["limit"]) == (1, False, 3)


def test_after_a_scrape_the_next_round_gets_an_even_share_of_what_is_left():
    facts = web.run_facts(events(("search", 1, {"new": 5, "pages": 2}), saved(1, "a"), saved(1, "b"),
                                 ("scrape", 1, {"outcome": "failed", "kind": "timeout", "url": "https://slow.org/"}),
                                 ("scrape", 1, {"outcome": "failed", "kind": "target-status", "url": "https://x.org/"})))
    assert (facts["round"], facts["scraped"], facts["limit"]) == (1, True, 2)   # (6 - 2) over rounds 2 and 3
    assert facts["retry"] == [["https://slow.org/", "timeout", None]]                 # a 404 is final; a timeout is not
    assert facts["requests"] == {"search": 2, "queries": 1, "scrape": 4} and facts["words"] == 200


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
    fire.set_articles("https://a.org/1")
    run("init", "how do tide pools work", "--topic", "t", "--max-sources", "2", "--deep", "--max-rounds", "2")
    assert status_of(run, "--json").json["next"].startswith("search round 1: write 4–8 queries")
    searx.set_results("q", [make_hit("https://a.org/1"), make_hit("https://b.org/2")])
    run("search", "q", "--topic", "t")
    picks = web.display_path(md_root / "t" / "web" / "_picks-1.1.json")
    assert status_of(run, "--json").json["next"] == (
        f"rank round 1's hits, write {picks}, then run: python3 web.py scrape --topic t --from {picks} --limit 1 --json")
    fire.set_page("https://b.org/2", captured_reply("timeout.json"))
    run("scrape", "https://b.org/2", "https://a.org/1", "--topic", "t", "--limit", "1")
    answer = status_of(run, "--json").json
    assert answer["next"].startswith("round 1 is done; deep round 2 is open") and answer["limit"] == 1
    assert answer["retry"] == [{"url": "https://b.org/2", "kind": "timeout", "title": "Title of https://b.org/2"}]
    human = status_of(run).out.splitlines()
    assert human[1] == "round 1 of 2, scraped · 1 of 2 pages saved · next --limit 1"
    run("manifest", "--topic", "t")
    assert "| 2 pages, ≤ 2 rounds | 1 | 1 |" in (md_root / "t" / "web" / "_manifest.md").read_text("utf-8")
    assert "may retry: https://b.org/2 (timeout) — Title of https://b.org/2" in human
    assert human[-2] == f"date: {web.now_utc():%Y-%m-%d}"
    searx.set_results("q2", [make_hit("https://c.org/3")])
    searched = run("search", "q2", "--topic", "t", "--json").json         # the next round opens with its search
    assert searched["picks"] == web.display_path(md_root / "t" / "web" / "_picks-1.2.json")   # as status names it
    picks = web.display_path(md_root / "t" / "web" / "_picks-1.2.json")
    assert status_of(run, "--json").json["next"] == (
        f"rank round 2's hits, write {picks}, then run: python3 web.py scrape --topic t --from {picks} --limit 1 --json")
    fire.set_articles("https://b.org/2")
    run("scrape", "https://b.org/2", "--topic", "t", "--limit", "1")      # the retry, in round 2
    answer = status_of(run, "--json").json
    assert (answer["round"], answer["scraped"], answer["saved"], answer["stop"]) == (2, True, 2, ["budget spent",
                                                                                                 "max rounds"])
    assert answer["next"].startswith("checkpoint: run python3 web.py manifest --topic t")


def test_status_and_manifest_refuse_a_topic_that_does_not_exist_and_create_nothing(run, md_root):
    run("init", "goal", "--topic", "real")
    for command in ("status", "manifest"):
        before = snapshot(md_root)
        r = run(command, "--topic", "typo")
        assert r.code == web.EXIT_USAGE and r.err == (
            f"web.py: usage: there is no topic 'typo' in {web.display_path(md_root)} — topics: real, t; a new topic "
            f"starts with web.py init \"goal\" --topic typo\n")
        assert snapshot(md_root) == before


def test_status_without_a_run_says_how_to_start_one(run, fire, md_root):
    run("scrape", "https://a.org/x", "--topic", "t")
    r = run("status", "--topic", "t", "--json")
    assert r.code == web.EXIT_USAGE and 'start one: python3 web.py init "goal" --topic t' in r.err
    assert json.loads(r.out)["ok"] is False


def test_manifest_json_is_the_checkpoint_of_the_latest_run(run, searx, fire, md_root):
    from standins import captured_reply
    fire.set_page("https://b.org/2", captured_reply("timeout.json"))
    fire.set_articles("https://old.org/0", "https://a.org/1")
    run("scrape", "https://old.org/0", "--topic", "t")                          # saved before the run
    run("init", "goal", "--topic", "t", "--max-sources", "3")
    run("scrape", "https://a.org/1", "https://b.org/2", "https://old.org/0", "--topic", "t", "--workers", "1")
    answer = run("manifest", "--topic", "t", "--json").json
    assert answer == {
        "schema": "web.manifest/3", "ok": True, "path": web.display_path(md_root / "t" / "web" / "_manifest.md"),
        "run": answer["run"], "round": 1, "budget": {"max": 3, "saved": 1},   # a scrape with no search: round 1
        "saved": [{"n": 1, "title": "Understanding Tide Pools | Coastal Notes", "url": "https://old.org/0",
                   "words": 262, "earlier": True},
                  {"n": 2, "title": "Understanding Tide Pools | Coastal Notes", "url": "https://a.org/1", "words": 262}],
        "failed": [{"url": "https://b.org/2", "kind": "timeout", "error": "Firecrawl: Scrape timed out"}],   # 1 round
        "syntheses": []}
    lines = run("manifest", "--topic", "t").out.splitlines()
    assert lines[0] == f"t · run {answer['run']} · round 1 of 1 · 1 of 3 pages saved"
    assert "  [1] Understanding Tide Pools | Coastal Notes — 262 words — saved in an earlier run" in lines
    assert "  timeout  https://b.org/2 — Firecrawl: Scrape timed out" in lines
    assert lines[-1] == f"wrote {answer['path']} · notes: {web.display_path(md_root / 't' / 'web' / '_notes.md')} " \
                        f"(not written yet)"


# --- the whole manifest, for a topic that uses every part of it --------------------------------------

def manifest_scenario(run, searx, fire, md_root):
    fire.set_articles("https://a.org/1")
    (md_root / "m").mkdir(parents=True)
    (md_root / "m" / "sources.txt").write_text("block bad.org spam farm\nprefer good.org the field station\n", "utf-8")
    (md_root / "m" / "notes-from-the-lab.md").write_text("# Lab notes\n", "utf-8")
    run("init", "first goal", "--topic", "m", "--max-sources", "2", "--with-corpus", "--deep", "--max-rounds", "2")
    searx.set_results("q1", [make_hit("https://a.org/1", "Page A | one"), make_hit("https://bad.org/x"),
                             make_hit("https://good.org/y", "Good [page]"), make_hit("https://c.org/3")])
    run("search", "q1", "--topic", "m")
    fire.set_page("https://c.org/3", captured_reply("timeout.json"))
    picks = md_root / "m" / "web" / "_picks-1.1.json"
    picks.write_text(json.dumps([{"url": "https://c.org/3"}, {"url": "https://a.org/1"}, {"url": "https://good.org/y"}]))
    run("scrape", "--topic", "m", "--from", picks, "--limit", "1", "--workers", "1")
    searx.fail_next(Reply(400, {"error": "bad query"}))
    run("search", "q broken", "--topic", "m")
    run("init", "second goal", "--topic", "m", "--max-sources", "3")
    searx.set_results("q3", [make_hit("https://a.org/1"), make_hit("https://d.org/4")])
    run("search", "q3", "--topic", "m")
    (md_root / "m" / f"first-goal-{web.now_utc():%Y-%m-%d}-synthesis.md").write_text("# x\n", "utf-8")
    run("manifest", "--topic", "m")
    return (md_root / "m" / "web" / "_manifest.md").read_text("utf-8")



GOLDEN_MANIFEST = """<!-- web.py:begin -->
<!-- generated by web.py manifest on DATE; edits inside these markers are replaced: Claude's notes go in _notes.md -->
# Research manifest: m

Notes: none yet (_notes.md) · picks: [_picks-1.1.json](_picks-1.1.json) · the topic: 1 pages saved, 262 words ≈ 341 tokens to read

## Runs

| run | started | goal | budget | rounds | saved | requests | words |
| --- | --- | --- | --- | --- | --- | --- | --- |
| 1: RUN | DATE | first goal | 2 pages, ≤ 2 rounds, corpus | 2 | 1 | 2 search requests for 2 queries, 2 scrapes | 262 |
| 2: RUN | DATE | second goal | 3 pages, 1 round | 1 | 0 | 2 search requests for 1 query (pages 2–5 when needed), 0 scrapes | 0 |

## Queries

| # | round | query | hits | new | error |
| --- | --- | --- | --- | --- | --- |
| 1 | 1.1 | q1 | 3 | 3 | – |
| 2 | 1.2 | q broken | 0 | 0 | SearXNG: refused the query 'q broken': bad query — check the query and the --categories/--language/--time-range values |
| 3 | 2.1 | q3 | 2 | 1 | – |

## Saved sources

| # | title | words | note | flags | source |
| --- | --- | --- | --- | --- | --- |
| 1 | [Understanding Tide Pools \\| Coastal Notes](a-org-1.md) | 262 | – | – | https://a.org/1 |

## Other candidates

Found by the searches or picked, not saved: the title links the page.

| round | rank | title | found by | outcome |
| --- | --- | --- | --- | --- |
| 1.1 | 2 | [Good (page)](https://good.org/y) | 1 | picked, not reached |
| 1.1 | 3 | [Title of https://c.org/3](https://c.org/3) | 1 | failed (may retry): timeout: Firecrawl: Scrape timed out |
| 2.1 | 2 | [Title of https://d.org/4](https://d.org/4) | 3 | not picked |

## Source scope

- `sources.txt` line 1: block bad.org — spam farm (dropped 1 hit)
- `sources.txt` line 2: prefer good.org — the field station (1 hit marked)

| dropped hit | why | times |
| --- | --- | --- |
| https://bad.org/x | blocked by POLICY:1 (spam farm) | 1 |

## Syntheses

Each run writes its own; the newest first, the latest of each goal in bold.

- **[first-goal-DATE-synthesis.md](../first-goal-DATE-synthesis.md)** (latest) — run 1, DATE · not checked yet: run cite-check
<!-- web.py:end -->
"""


def test_the_whole_manifest_of_a_topic_with_two_runs_a_policy_and_failures(run, searx, fire, md_root):
    text = manifest_scenario(run, searx, fire, md_root)
    text = re.sub(r"\d{8}T\d{6}Z-[0-9a-f]{4}", "RUN", text)
    text = re.sub(r"\d{4}-\d{2}-\d{2}", "DATE", text)
    assert text.replace(web.display_path(md_root / "m" / "sources.txt"), "POLICY") == GOLDEN_MANIFEST


@pytest.mark.parametrize("facts, synthesis, sentence", [
    ({"round": 1, "searched": False}, "unwritten", "search round 1: write 4–8 queries and run them in one python3 web.py "
                                                   "search … --topic t --json"),
    ({"round": 1, "searched": False, "refreshed": {"gone": [4], "changed": [2, 3]}}, "unwritten",
     "search round 1: write 4–8 queries and run them in one python3 web.py search … --topic t --json (refresh found "
     "[4] gone and [2–3] changed: search for what replaced them)"),
    ({"round": 2, "scraped": False, "limit": 3}, "unwritten",
     "rank round 2's hits, write md/t/web/_picks-1.2.json, then run: python3 web.py scrape --topic t --from "
     "md/t/web/_picks-1.2.json --limit 3 --json"),
    ({"round": 2, "scraped": False, "limit": 3, "stop": ["no new hits"]}, "unwritten",
     "round 2's searches found no new hits: search other queries, or pick seen hits never saved and retry URLs "
     "worth it into md/t/web/_picks-1.2.json and scrape it with --limit 3"),
    ({"round": 2, "scraped": True, "limit": 3, "deep": True}, "unwritten",
     "round 2 is done; deep round 3 is open: search new queries for the gaps and leads, then scrape with --limit 3 "
     "(or stop here if nothing new is worth scraping)"),
    ({"round": 2, "scraped": True, "limit": 3, "deep": True, "stop": ["no new hits"]}, "unwritten",
     "checkpoint: run python3 web.py manifest --topic t, show its summary to the user and wait for the go-ahead; "
     "then write the synthesis"),
    ({"round": 1, "scraped": True, "limit": 0, "deep": True}, "unwritten", "checkpoint: run python3 web.py manifest "
     "--topic t, show its summary to the user and wait for the go-ahead; then write the synthesis"),
    ({"round": 1, "scraped": False, "limit": 0}, "unwritten", "checkpoint: run python3 web.py manifest --topic t, "
     "show its summary to the user and wait for the go-ahead; then write the synthesis"),
    ({"round": 1, "scraped": True, "limit": 2, "deep": True, "need": [{"n": 3, "path": "md/t/web/a.md"}]}, "unwritten",
     'launch page-reader on each long page without a note — [3] md/t/web/a.md — one Agent call a page, all in one '
     'message, "run_in_background": false; then run status again'),
    ({"round": 1, "scraped": True, "limit": 0, "need": [{"n": 3, "path": "md/t/web/a.md"}]}, "passed",
     'the synthesis passed cite-check: launch the audit (Agent with subagent_type "citation-auditor", '
     '"run_in_background": false, prompt "Synthesis: md/t/x-synthesis.md"), fix every problem it names, run '
     'cite-check again'),
    ({"round": 1, "scraped": True, "limit": 0, "audit": {"problems": 2, "current": True}}, "passed",
     "the audit found 2 problems (md/t/x-audit.md): fix each one in the synthesis, then run cite-check on it again"),
    ({"round": 1, "scraped": True, "limit": 0, "audit": {"problems": 2, "current": False}}, "passed",
     "the synthesis passed cite-check and was audited: present it to the user"),    # fixed since, and checked
    ({"round": 1, "scraped": True, "limit": 0, "audit": {"problems": 0, "current": True}}, "passed",
     "the synthesis passed cite-check and was audited: present it to the user"),
    ({"round": 1, "scraped": True, "limit": 0}, "failing", "fix the synthesis's 4 cite-check errors, then run "
                                                            "cite-check again"),
    ({"round": 1, "scraped": True, "limit": 0}, "changed", "run cite-check on the synthesis (it changed since the "
                                                            "last check, or was never checked)"),
    ({"round": 1, "scraped": True, "limit": 0}, "unchecked", "run cite-check on the synthesis (it changed since the "
                                                              "last check, or was never checked)"),
])
def test_the_next_step_of_every_phase(facts, synthesis, sentence):
    facts = dict(facts)   # the parameter is shared by every run of this test in one process (mutmut runs it twice)
    facts = dict({"scraped": False, "limit": 0, "stop": [], "gathered": False, "picks": f"_picks-1.{facts['round']}.json",
                  "options": {"deep": facts.pop("deep", False)}, "web_dir": "md/t/web", "searched": True}, **facts)
    notes, audit = {"done": [], "need": facts.pop("need", [])}, facts.pop("audit", None)
    entry = {"status": synthesis, "errors": 4, "path": "md/t/x-synthesis.md", "audit": audit}
    assert web.next_step("t", facts, entry, notes) == sentence


def test_the_manifests_scrape_count_is_the_requests_firecrawl_received(run, fire, md_root):
    """A --force that came back unchanged and a body another URL already has were asked for; a URL saved,
    listed twice, blocked by the policy or private was not."""
    body = "Tide pools hold seawater when the tide goes out, and much lives in them. " * 4
    for url, ending in (("https://a.org/", "A."), ("https://b.org/", "B."), ("https://copy.org/", "A.")):
        fire.set_page(url, page_body(url, body + ending))
    run("init", "g", "--topic", "t", "--max-sources", "9")
    (md_root / "t" / "sources.txt").write_text("block blocked.org\n", encoding="utf-8")
    run("scrape", "https://a.org/", "https://b.org/", "https://gone.org/", "--topic", "t")   # 2 saved, a 404
    picks = md_root / "t" / "picks.json"
    picks.write_text(json.dumps([{"url": u} for u in ("https://a.org/", "https://a.org/", "https://blocked.org/",
                                                       "https://10.0.0.1/x")]), encoding="utf-8")
    report = run("scrape", "--from", str(picks), "--topic", "t", "--json").json
    assert [(e["reason"], e["url"]) for e in report["skipped"]] == [("already saved", "https://a.org/"),
                                                                    ("duplicate candidate", "https://a.org/")]
    assert [(e["kind"], e["url"]) for e in report["failed"]] == [("policy", "https://blocked.org/"),
                                                                 ("invalid-url", "https://10.0.0.1/x")]
    run("scrape", "https://a.org/", "--topic", "t", "--force")                                # unchanged
    assert run("scrape", "https://copy.org/", "--topic", "t", "--json").json["skipped"][0]["reason"] == "duplicate"
    asked = len(fire.scraped_urls())
    assert asked == 5
    assert re.search(r"requests: .*, (\d+) scrapes", run("manifest", "--topic", "t").out).group(1) == str(asked)
