"""The design's dry run, replayed against the stand-ins: init → search → picks → scrape → manifest →
synthesis → cite-check; a tampered synthesis; a second --deep round; manifest and ledger guarantees."""

import json
import os
import subprocess
import sys

from standins import captured_reply, make_hit, page_body

import web
from conftest import ROOT

GOAL = "find proof the demon hierarchy is real"
TOPIC = "demonology"
TODAY = f"{web.now_utc():%Y-%m-%d}"   # a run's synthesis is named by the day it started
QUERIES = ["demon hierarchy primary sources", "Pseudomonarchia Daemonum Weyer", "demon hierarchy skeptic"]

PAGES = {
    "https://www.proof-of-demons.example/hierarchy": None,   # the target answers 404: falls through
    "https://plato.example.edu/entries/angels-demons/": (
        "Angels and Demons in Medieval Thought", "# Angels and demons\n\n"
        "Pseudo-Dionysius arranged the angels into *nine choirs* in three hierarchies. The "
        "[Ars Goetia](https://example.org/goetia)\n lists 72 spirits by rank, from kings to knights. " + "Scholars "
        "read these lists as literary and theological constructions rather than observations. " * 12),
    "https://archive.example.org/details/pseudomonarchia": (
        "Pseudomonarchia Daemonum (1577)", "# Pseudomonarchia Daemonum\n\n"
        "Johann Weyer's appendix of 1577 catalogues 69 demons with their titles and legions. " * 1 +
        "Weyer himself wrote against the witch trials and doubted the powers claimed for demons. " * 12),
    "https://skeptics.example.org/demon-hierarchies": (
        "Why demon hierarchies disagree", "# Why demon hierarchies disagree\n\n"
        "No empirical evidence supports the existence of a demon hierarchy; the grimoires contradict "
        "each other on names, ranks and numbers. " + "Each list reflects its author's sources and era. " * 15),
    "https://forum.example.net/t/demons-are-real": (
        "Demons are real!!!", "# Demons are real\n\n" + "I saw them myself and everyone should believe. " * 30),
}


def setup_box(searx, fire):
    urls = list(PAGES)
    searx.set_results(QUERIES[0], [make_hit(urls[0]), make_hit(urls[1]), make_hit(urls[4])])
    searx.set_results(QUERIES[1], [make_hit(urls[2]), make_hit(urls[1])])
    searx.set_results(QUERIES[2], [make_hit(urls[3]), make_hit(urls[0])])
    for url, page in PAGES.items():
        fire.set_page(url, captured_reply("notfound.json") if page is None else page_body(url, page[1], title=page[0]))


def synthesis_text(numbers):
    """A synthesis in the documented format; `numbers` maps a URL to (n, web/<slug>.md)."""
    def cite(url):
        n, path = numbers[url]
        return f"[{n}]({path})"
    plato, weyer, skeptic = list(PAGES)[1:4]
    return f"""# Is the demon hierarchy real?

> goal: {GOAL}
> topic: {TOPIC} · run r1 · 2026-11-30
> sources: see web/_manifest.md

## Summary

Demon hierarchies are literary and theological constructions {cite(plato)}, and the lists disagree {cite(skeptic)}.

## Findings

- The best-known grimoire ranks its spirits: “The Ars Goetia lists 72 spirits by rank” {cite(plato)}.
- Weyer's 1577 list has 69 entries: "catalogues 69 demons with their titles" {cite(weyer)}.
- The sources contradict each other: "No empirical evidence supports the existence of a demon hierarchy; \
the grimoires contradict each other" {cite(skeptic)}.
- Angelic orders were arranged by Pseudo-Dionysius: "arranged the angels into nine choirs … three hierarchies"
  {cite(plato)}.

## Disagreements and gaps

- No source offers observations; all describe texts {cite(skeptic)}.

## Reliability

- The forum page was not used: a low-trust assertion without sources.

## Sources

1. Angels and Demons — {plato} — [web/x.md]({numbers[plato][1]})
"""


def write_picks(md_root, round_no, urls):
    """Claude's picks for a round: url and relevance; web.py fills in the query that found each."""
    path = md_root / TOPIC / "web" / f"_picks-{round_no}.json"
    path.write_text(json.dumps([{"url": u, "relevance": f"candidate {i}"} for i, u in enumerate(urls, 1)]),
                    encoding="utf-8")
    return path


def test_dry_run_end_to_end(run, searx, fire, md_root):
    setup_box(searx, fire)
    urls = list(PAGES)
    not_found, plato, weyer, skeptic, forum = urls

    # 1. init with the user's arguments passed straight through: a budget of 4 over 2 rounds
    init = run("init", GOAL, "--topic", TOPIC, "--max-sources", "4", "--deep", "--max-rounds", "2", "--json")
    assert init.code == 0, init
    started = init.json
    assert started["options"] == {"max_sources": 4, "deep": True, "max_rounds": 2, "with_corpus": False}
    assert started["limit"] == 2                                      # round 1 never spends the whole budget
    assert started["synthesis"].endswith(f"demonology/find-proof-the-demon-hierarchy-is-real-{TODAY}-synthesis.md")
    status = run("status", "--topic", TOPIC, "--json").json
    assert status["round"] == 1 and not status["scraped"] and status["next"].startswith("search round 1")

    # round 1: one search with all queries, picks in Claude's order (the 404 first), scrape with status's limit
    search = run("search", *QUERIES[:2], "--topic", TOPIC, "--json").json
    assert search["ok"] and search["queries"] == {"1": QUERIES[0], "2": QUERIES[1]} and "seen" not in search
    assert {h["url"] for h in search["results"]} == {not_found, plato, weyer, forum}
    status = run("status", "--topic", TOPIC, "--json").json
    assert status["round"] == 1 and not status["scraped"] and status["limit"] == 2
    assert "_picks-1.1.json --limit 2" in status["next"]
    picks = write_picks(md_root, 1, [not_found, plato, weyer, forum])
    scrape = run("scrape", "--topic", TOPIC, "--from", picks, "--limit", status["limit"], "--json")
    assert scrape.code == 0, scrape
    report = scrape.json
    assert [(e["n"], e["url"]) for e in report["saved"]] == [(1, plato), (2, weyer)]   # numbers by pick order
    assert [(f["url"], f["kind"]) for f in report["failed"]] == [(not_found, "target-status")]
    assert forum not in {e["url"] for e in report["saved"]}

    # round 2 (--deep): status opens it, a new query, a seen-but-unsaved hit is picked too
    status = run("status", "--topic", TOPIC, "--json").json
    assert status["round"] == 1 and status["scraped"] and status["limit"] == 2 and status.get("stop") is None
    assert status["next"].startswith("round 1 is done; deep round 2 is open")
    again = run("search", QUERIES[2], "--topic", TOPIC, "--json").json
    assert again["queries"] == {"3": QUERIES[2]} and [h["url"] for h in again["results"]] == [skeptic]
    assert again["seen"] == [{"rank": 2, "url": not_found, "title": f"Title of {not_found}",   # and what became of it
                              "outcome": "failed: target-status: the site answered 404 Not Found"}]
    picks = write_picks(md_root, 2, [skeptic, forum])
    second = run("scrape", "--topic", TOPIC, "--from", picks, "--limit", "2", "--json").json
    assert [(e["n"], e["url"]) for e in second["saved"]] == [(3, skeptic), (4, forum)]
    header = web.split_saved((md_root / TOPIC / "web" / "skeptics-example-org-demon-hierarchies.md").read_text())[0]
    assert header["query"] == QUERIES[2] and header["relevance"] == "candidate 1"
    status = run("status", "--topic", TOPIC, "--json").json
    assert status["stop"] == ["budget spent", "max rounds"] and status["next"].startswith("checkpoint")

    # checkpoint: the manifest's summary lists every saved source and failure; notes live in _notes.md
    summary = run("manifest", "--topic", TOPIC)
    assert summary.code == 0
    lines = summary.out.splitlines()
    assert lines[0].startswith(f"{TOPIC} · run {started['run']} · round 2 of 2 · 4 of 4 pages saved (budget spent)")
    for n, url in enumerate([plato, weyer, skeptic, forum], 1):
        assert f"      {url}" in lines and any(line.startswith(f"  [{n}] ") for line in lines)
    assert f"  target-status  {not_found} — the site answered 404" in summary.out
    manifest_path = md_root / TOPIC / "web" / "_manifest.md"
    text = manifest_path.read_text("utf-8")
    assert f"| 1 | 1 | {QUERIES[0]} | 3 | 3 | – |" in text and f"| 3 | 2 | {QUERIES[2]} | 2 | 1 | – |" in text
    assert "](plato-example-edu-entries-angels-demons.md)" in text and "](web/" not in text   # links from web/
    (md_root / TOPIC / "web" / "_notes.md").write_text("# Notes\n\n- The forum page is low trust.\n", "utf-8")
    notes = "\n## Notes (Claude)\n\n- older notes below the block are kept | byte for byte.\r\n\n"
    manifest_path.write_bytes(("Preface.\n\n" + text + notes).encode("utf-8"))
    assert "notes: " + web.display_path(md_root / TOPIC / "web" / "_notes.md") in run("manifest", "--topic", TOPIC).out
    regenerated = manifest_path.read_bytes().decode("utf-8")
    assert regenerated.startswith("Preface.\n\n<!-- web.py:begin -->") and regenerated.endswith(notes)
    assert "Notes: [_notes.md](_notes.md)" in regenerated

    # the synthesis in the documented format passes cite-check
    numbers = {e["url"]: (e["n"], "web/" + e["path"].rsplit("/", 1)[1]) for e in report["saved"] + second["saved"]}
    synthesis = md_root / TOPIC / f"find-proof-the-demon-hierarchy-is-real-{TODAY}-synthesis.md"
    synthesis.write_text(synthesis_text(numbers), encoding="utf-8")
    assert run("status", "--topic", TOPIC, "--json").json["synthesis"]["status"] == "unchecked"
    check = run("cite-check", synthesis, "--json")
    assert check.code == 0, check.out
    assert check.json["errors"] == [] and [w["message"] for w in check.json["warnings"]] == [
        "saved source web/forum-example-net-t-demons-are-real.md is never cited"]
    assert check.json["coverage"]["quotes"] == {"verified": 4, "not_found": 0, "no_citation": 0, "exempt": 0}
    assert run("status", "--topic", TOPIC, "--json").json["next"].startswith("the synthesis passed cite-check")

    # a tampered synthesis: a quote not in the source, a link to a missing page, a finding without citation
    tampered = synthesis_text(numbers).replace("The Ars Goetia lists 72 spirits by rank",
                                               "The Ars Goetia proves 72 spirits are real")
    tampered = tampered.replace("## Disagreements and gaps", """- Demons were seen in 2024 [1](web/no-such-page.md).
- Everyone agrees demons exist.

## Disagreements and gaps""")
    synthesis.write_text(tampered, encoding="utf-8")
    check = run("cite-check", synthesis)
    assert check.code == 1
    shown = web.display_path(synthesis)
    errors = [line for line in check.out.splitlines() if line.startswith(shown + ":") and ": warning: " not in line]
    assert errors == [
        f"{shown}:13: quote \"The Ars Goetia proves 72 spirits are real\" is not in web/plato-example-edu-entries-angels-demons.md",
        f"{shown}:19: citation [1](web/no-such-page.md) points to a file that does not exist",
        f"{shown}:20: finding has no citation to a saved source"], check.out
    assert check.out.splitlines()[-1] == "FAIL: 3 errors, 1 warning"
    assert run("status", "--topic", TOPIC, "--json").json["synthesis"] == {
        "path": shown, "status": "failing", "errors": 3, "checked": f"{web.now_utc():%Y-%m-%d}"}

    # the budget holds: once it is spent a scrape of a new page is refused, without a request or a ledger line;
    # pages already saved are still reported as such
    requests_before = len(fire.requests)
    again = run("scrape", "--topic", TOPIC, "--from", picks, "--json")
    assert again.code == 0 and {s["reason"] for s in again.json["skipped"]} <= {"already saved", "duplicate candidate"}
    ledger = (md_root / TOPIC / "web" / "_ledger.jsonl").read_bytes()
    third = run("scrape", "https://new.example.org/page", "--topic", TOPIC, "--json")
    assert third.code == web.EXIT_USAGE and third.err == ("web.py: usage: the run's budget is spent: 4 of 4 pages "
                                                          "saved — add --force to go past it\n")
    assert len(fire.requests) == requests_before and (md_root / TOPIC / "web" / "_ledger.jsonl").read_bytes() == ledger


def test_cite_check_numbers_are_the_manifest_numbers(run, fire, md_root):
    (md_root / TOPIC).mkdir()
    fire.set_articles("https://a.example.org/first", "https://b.example.org/second")
    for url in ("https://a.example.org/first", "https://b.example.org/second"):
        run("scrape", url, "--topic", TOPIC, "--workers", "1")
    synthesis = md_root / TOPIC / "s-synthesis.md"
    synthesis.write_text("## Findings\n\n- A claim [2](web/a-example-org-first.md).\n"
                         "- Another [2](web/b-example-org-second.md).\n", encoding="utf-8")
    out = run("cite-check", synthesis).out
    assert "should be [1]: web/a-example-org-first.md is source 1 in the manifest" in out
    assert out.splitlines()[-1] == "FAIL: 1 error, 0 warnings"   # one wrong label, one error


def test_cite_check_refuses_links_outside_the_topic(run, md_root, tmp_path):
    topic = md_root / TOPIC
    topic.mkdir(parents=True)
    (md_root / "other.md").write_text("secret", encoding="utf-8")
    synthesis = topic / "s-synthesis.md"
    synthesis.write_text("## Findings\n\n- Claim [1](../other.md).\n", encoding="utf-8")
    out = run("cite-check", synthesis).out
    assert "points outside the topic" in out


def test_init_validates_the_arguments(run, md_root):
    assert run("init", "--topic", "new").code == 2
    r = run("init", "a goal")
    assert r.code == 2 and "the following arguments are required: --topic" in r.err
    assert run("init", "goal", "--topic", "new", "--max-rounds", "2").code == 2
    assert run("init", "goal", "--topic", "../escape").code == 2
    assert run("init", "goal", "--topic", "new", "--max-sources", "0").code == 2
    assert not (md_root / "new").exists()
    deep = run("init", "unquoted", "goal", "words", "--topic", "new", "--deep", "--max-rounds", "2", "--json").json
    assert deep["goal"] == "unquoted goal words" and deep["options"]["max_rounds"] == 2


def test_init_with_corpus_lists_the_topic_files(run, md_root):
    topic = md_root / TOPIC
    topic.mkdir(parents=True)
    (topic / "goetia-notes.md").write_text("notes", encoding="utf-8")
    (topic / "old-synthesis.md").write_text("x", encoding="utf-8")
    r = run("init", GOAL, "--topic", TOPIC, "--with-corpus", "--json")
    assert r.json["corpus"] == [{"label": "C1", "path": web.display_path(topic / "goetia-notes.md"), "words": 1,
                                 "parts": [[1, 1]]}]


def test_concurrent_ledger_appends_from_two_processes_lose_nothing(md_root):
    code = ("import sys, web\ncfg = web.Config({'WEB_MD_ROOT': sys.argv[1], 'WEBTOOLS_HOST': '127.0.0.1'})\n"
            "store = web.TopicStore(cfg, 't')\n"
            "for i in range(300):\n    store.append([{'who': sys.argv[2], 'i': i, 'pad': 'x' * 3000}])\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(md_root), who], cwd=ROOT,
                              env=dict(os.environ, PYTHONPATH=ROOT)) for who in ("a", "b")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    lines = (md_root / "t" / "web" / "_ledger.jsonl").read_text("utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    assert len(events) == 600
    for who in ("a", "b"):
        assert [e["i"] for e in events if e["who"] == who] == list(range(300))
