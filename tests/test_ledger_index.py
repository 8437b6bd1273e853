"""The ledger's index (web/.index/ledger.sqlite): every command reads the ledger through it, so what it answers must
be what a whole read of the ledger answers, whatever happened to the ledger since (lines appended, a torn last line,
an older copy restored by git, a hand edit, the file gone), and a missing, broken or unwritable index costs time only."""

import json
import os
import subprocess
import sys

import web
from conftest import ROOT, read_ledger
from standins import make_hit, page_body

H = {"sha256": "0" * 64, "words": 400, "chars": 2600}


def saved(run, batch, pick, name, url, **more):
    return dict({"run": run, "command": "scrape", "batch": batch, "pick": pick, "outcome": "saved",
                 "path": f"md/t/web/{name}", "url": url, "title": f"Title of {name}", "flags": ["short"]}, **H, **more)


# A topic's ledger with what the years bring: runs, searches that meet the same URL again (a title only the second
# time, a preferred hit, a scope drop), picks saved out of order, a twin superseded, an older ledger's scrapes
# without batch or pick, failures and skips, a page's second version, refreshes that find pages gone and back.
LEDGER = [
    {"run": "r1", "command": "init", "goal": "reefs", "options": {"max_sources": 4}, "synthesis": "reefs-synthesis.md"},
    {"run": "r1", "command": "search", "round": 1, "query": "reef survey", "q": 1,
     "results": [{"url": "https://a.org/1", "title": "", "rank": 1}, {"url": "https://b.org/2", "title": "B", "rank": 2,
                 "published": "2026-01-02", "prefer": "sources.txt:1"}],
     "dropped": [{"url": "https://spam.org/x", "reason": "blocked by md/t/sources.txt:2"},
                 {"url": "ftp://a.org/x", "reason": "not http(s)"}]},
    {"run": "r1", "command": "search", "round": 1, "query": "reef census", "q": 2,
     "results": [{"url": "https://a.org/1", "title": "A at last", "rank": 1, "published": "2025-05-05"},
                 {"url": "https://b.org/2", "title": "B renamed", "rank": 2}]},
    saved("r1", "b1", 2, "b-org-2.md", "https://b.org/2"),
    saved("r1", "b1", 1, "a-org-1.md", "https://a.org/1"),
    saved("r1", "b1", 3, "a-twin.md", "https://twin.org/1"),
    dict(saved("r1", "b1", 4, "twin-org-9.md", "https://twin.org/9"), supersedes="md/t/web/a-twin.md"),
    {"run": "r1", "command": "scrape", "batch": "b1", "pick": 5, "outcome": "failed", "url": "https://c.org/3",
     "kind": "timeout", "error": "no answer"},
    {"run": "r1", "command": "manifest", "round": 1},
    {"run": "r2", "command": "init", "goal": "reefs", "options": {"max_sources": 4}, "synthesis": "reefs-2-synthesis.md"},
    dict(saved("r2", None, None, "old-style.md", "https://old.org/1"), batch=None, pick=None),
    dict(saved("r2", None, None, "old-style-2.md", "https://old.org/2"), batch=None, pick=None),
    {"run": "r2", "command": "scrape", "batch": "b2", "pick": 1, "outcome": "skipped", "reason": "already saved",
     "path": "md/t/web/a-org-1.md", "url": "https://a.org/1"},
    {"run": "r2", "command": "scrape", "batch": "b2", "pick": 2, "outcome": "failed", "url": "https://c.org/3",
     "kind": "timeout", "error": "no answer again"},
    saved("r2", "b3", 1, "b-org-2.v2.md", "https://b.org/2"),
    {"run": "r2", "command": "refresh", "batch": "f1", "path": "md/t/web/a-org-1.md", "url": "https://a.org/1",
     "outcome": "gone", "time": "2026-03-01T10:00:00Z", "n": 2},
    {"run": "r2", "command": "refresh", "batch": "f1", "path": "md/t/web/old-style.md", "url": "https://old.org/1",
     "outcome": "gone", "time": "2026-03-01T10:00:00Z", "n": 4},
    {"run": "r2", "command": "refresh", "batch": "f2", "path": "md/t/web/a-org-1.md", "url": "https://a.org/1",
     "outcome": "unchanged", "time": "2026-04-01T10:00:00Z", "n": 2},
    {"run": "r2", "command": "refresh", "batch": "f2", "path": "md/t/web/b-org-2.v3.md", "url": "https://b.org/2",
     "outcome": "changed", "previous": "md/t/web/b-org-2.v2.md", "sha256": "3" * 64, "words": 90, "chars": 600,
     "title": "B, third", "flags": [], "time": "2026-04-01T10:00:00Z", "n": 2},
    {"run": "r2", "command": "note", "page": "b-org-2.v2.md", "instructions": [[3, 4]], "session": "s9"},
    {"run": "r2", "command": "cite-check", "file": "reefs-2-synthesis.md", "ok": True, "session": "s9"},
]


# --- what the index must answer: the rules, as plain functions over the whole ledger --------------------------------

def source_numbers(events, web_dir, names=None):
    """Stable citation numbers of page files: scrape calls in ledger order, pick order within one; a page keeps its
    first number, shared by its versions; then pages the ledger does not know (`names`, else web_dir's files)."""
    batches, saved = {}, []
    for event in events:
        if event.get("command") != "scrape":
            continue
        batch = batches.setdefault(event.get("batch") or f"#{len(batches)}", len(batches))
        if event.get("supersedes"):   # a lower-ranked twin this call replaced: never numbered
            gone = os.path.basename(event["supersedes"])
            saved = [s for s in saved if not (s[0] == batch and s[2] == gone)]
        if event.get("outcome") == "saved" and event.get("path"):
            saved.append((batch, event.get("pick") or 0, os.path.basename(event["path"])))
    files = web.page_files(web_dir) if names is None else names
    order = list(dict.fromkeys(web.page_base(name) for name in [s[2] for s in sorted(saved)] + list(files)))
    number_of = {base: n for n, base in enumerate(order, 1)}
    return {name: number_of[web.page_base(name)] for name in [s[2] for s in saved] + list(files)}


def gone_pages(events):
    """{first version's file name: the day} of the pages the latest refresh of each found gone from the web."""
    gone = {}   # a later refresh that fetched the page, or a save of it, brings it back
    for event in (e for e in events if e.get("path") and e.get("outcome") in ("gone", "saved", "unchanged", "changed")):
        gone[web.page_base(os.path.basename(event["path"]))] = event["outcome"] == "gone" and \
            str(event.get("time", "?"))[:10]
    return {base: day for base, day in gone.items() if day}


def ledger_bytes(events, extra=b""):
    return b"".join(json.dumps(e, ensure_ascii=False).encode("utf-8") + b"\n" for e in events) + extra


def web_dir_with(tmp_path, data):
    web_dir = tmp_path / "web"
    web_dir.mkdir(exist_ok=True)
    (web_dir / "_ledger.jsonl").write_bytes(data)
    return web_dir


def keys_of(events):
    return {web.url_key(h["url"]) for e in events for h in e.get("results") or [] if isinstance(h, dict)} | \
        {web.url_key(e["url"]) for e in events if e.get("url")}


def check_answers_as_a_whole_read(web_dir, files=()):
    """Each question the index answers, asked of the index and of the whole ledger read."""
    events = read_ledger(web_dir / "_ledger.jsonl")
    index = web.LedgerIndex(str(web_dir))
    assert index.events() == events
    assert index.events("run = ? AND command = 'scrape'", "r2") == \
        [e for e in events if e.get("run") == "r2" and e.get("command") == "scrape"]
    assert web.citation_numbers(index, lambda: list(files)) == source_numbers(events, str(web_dir), list(files))
    assert index.gone() == gone_pages(events)
    assert index.hits(keys_of(events)) == web.search_facts(events)
    assert index.latest_scrapes(keys_of(events)) == \
        {web.url_key(e["url"]): e for e in events if e.get("command") == "scrape"}
    assert index.run_facts() == web.run_facts(events)
    assert index.count("init") == sum(1 for e in events if e.get("command") == "init")
    assert index.inits() == [dict({k: e.get(k) for k in ("command", "run", "synthesis", "goal")},
                                  time=str(e.get("time", ""))[:10]) for e in events if e.get("command") == "init"]
    return index


def test_the_index_answers_what_a_whole_read_of_the_ledger_answers(tmp_path):
    web_dir = web_dir_with(tmp_path, ledger_bytes(LEDGER, b'[1, 2]\n{"command": ["scrape"], "path": 7}\n'))
    index = check_answers_as_a_whole_read(web_dir, files=["a-org-1.md", "by-hand.md", "b-org-2.v2.md"])
    assert index.numbers() == {"b-org-2.md": 2, "a-org-1.md": 1, "twin-org-9.md": 3, "old-style.md": 4,
                               "old-style-2.md": 5}   # picks in order, the twin never numbered
    assert index.gone() == {"old-style.md": "2026-03-01"}   # a.org came back in the later refresh
    facts = index.page_facts()
    assert facts["b-org-2.v2.md"] == {"key": web.url_key("https://b.org/2"), "sha256": "0" * 64,
                                      "url": "https://b.org/2", "title": "Title of b-org-2.v2.md", "words": 400,
                                      "chars": 2600, "flags": ["short"]}
    assert facts["b-org-2.v3.md"] == {"key": web.url_key("https://b.org/2"), "sha256": "3" * 64,   # saved by a refresh
                                      "url": "https://b.org/2", "title": "B, third", "words": 90, "chars": 600, "flags": []}
    assert index.drops() == [("r1", "https://spam.org/x", "blocked by md/t/sources.txt:2")]
    assert index.preferred() == {web.url_key("https://b.org/2")}
    assert index.events("session = ?", "s9") == LEDGER[-2:]


def test_the_index_follows_the_ledger_appended_torn_restored_edited_and_removed(tmp_path):
    web_dir = web_dir_with(tmp_path, ledger_bytes(LEDGER[:9]))
    check_answers_as_a_whole_read(web_dir)
    with open(web_dir / "_ledger.jsonl", "ab") as handle:   # appended, the last line still being written
        handle.write(ledger_bytes(LEDGER[9:14]) + json.dumps(LEDGER[14]).encode()[:30])
    assert len(check_answers_as_a_whole_read(web_dir).events()) == 14
    with open(web_dir / "_ledger.jsonl", "ab") as handle:
        handle.write(json.dumps(LEDGER[14]).encode()[30:] + b"\n" + ledger_bytes(LEDGER[15:]))
    assert check_answers_as_a_whole_read(web_dir).events() == LEDGER
    (web_dir / "_ledger.jsonl").write_bytes(ledger_bytes(LEDGER[:12]))   # an older copy, restored by git
    assert check_answers_as_a_whole_read(web_dir).events() == LEDGER[:12]
    data = ledger_bytes(LEDGER[:12]).replace(b'"pick": 2', b'"pick": 7')   # a hand edit, the same size
    (web_dir / "_ledger.jsonl").write_bytes(data)
    os.utime(web_dir / "_ledger.jsonl", ns=(1, 1))   # and whatever time an editor leaves
    assert check_answers_as_a_whole_read(web_dir).numbers()["b-org-2.md"] == 3
    edited = ledger_bytes(LEDGER[:12]).replace(b'"goal": "reefs"', b'"goal": "reef"') + ledger_bytes(LEDGER[12:])
    (web_dir / "_ledger.jsonl").write_bytes(edited)   # edited near its start, then appended to
    assert check_answers_as_a_whole_read(web_dir).events("command = 'init'")[0]["goal"] == "reef"
    (web_dir / "_ledger.jsonl").unlink()
    assert web.LedgerIndex(str(web_dir)).events() == []


def test_a_past_runs_facts_are_kept_until_an_event_of_that_run_comes(tmp_path):
    web_dir = web_dir_with(tmp_path, ledger_bytes(LEDGER))
    kept = web.LedgerIndex(str(web_dir)).past_run_facts("r1")
    assert kept == web.run_facts([e for e in LEDGER if e["run"] == "r1"]) and "late.md" not in kept["saved"]
    with open(web_dir / "_ledger.jsonl", "ab") as handle:   # a session still on run 1 saves one more page
        handle.write(ledger_bytes([saved("r1", "b9", 1, "late.md", "https://late.org/1")]))
    assert web.LedgerIndex(str(web_dir)).past_run_facts("r1")["saved"][-1] == "late.md"


def grown_topic(run, searx, fire, md_root):
    """Topic t after two runs: searches, a scrape, a refresh that finds a page changed."""
    for n in (1, 2):
        run("init", "reefs", "--topic", "t")
        urls = [f"https://reef{n}.org/{i}" for i in range(3)]
        searx.set_results(f"reefs {n}", [make_hit(u, f"Reef {u[-1]}") for u in urls])
        for url in urls:
            fire.set_page(url, page_body(url, f"# Reef {url[-1]}\n\nSurvey {n} counted 12{url[-1]} colonies. " +
                                         "more words of the survey " * 30, title=f"Reef {url[-1]}"))
        run("search", f"reefs {n}", "--topic", "t")
        (md_root / "t" / "web" / f"_picks-{n}.1.json").write_text(json.dumps([{"url": u} for u in urls]), "utf-8")
        run("scrape", "--topic", "t", "--from", md_root / "t" / "web" / f"_picks-{n}.1.json")
    return [run("manifest", "--topic", "t", "--json").out, run("status", "--topic", "t", "--json").out]


def test_a_missing_broken_or_unwritable_index_changes_no_answer(run, searx, fire, md_root):
    answers = grown_topic(run, searx, fire, md_root)
    index = md_root / "t" / "web" / ".index" / "ledger.sqlite"
    assert index.is_file() and (index.parent / ".gitignore").read_text() == "*\n"   # a cache no git sees
    again = lambda: [run("manifest", "--topic", "t", "--json").out, run("status", "--topic", "t", "--json").out]
    index.unlink()
    assert again() == answers
    index.write_bytes(b"not a database at all\n" * 100)   # broken: made again
    assert again() == answers and index.read_bytes().startswith(b"SQLite format 3")
    index.write_bytes(index.read_bytes()[:4096] + b"\7" * (len(index.read_bytes()) - 4096))   # a power cut mid-commit
    assert again() == answers and web.LedgerIndex(str(index.parent.parent)).count("init") == 2
    index.unlink()
    index.mkdir()   # a folder where the file should be: it cannot be opened, the index is made in memory
    assert again() == answers and index.is_dir()


def test_two_commands_at_once_on_a_new_index_both_answer(run, searx, fire, md_root):
    answer = grown_topic(run, searx, fire, md_root)[1]
    os.unlink(md_root / "t" / "web" / ".index" / "ledger.sqlite")
    argv = [sys.executable, os.path.join(ROOT, "web.py"), "status", "--topic", "t", "--json"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ) for _ in range(2)]
    answers = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], answers
    assert [json.loads(out) for out, _ in answers] == [json.loads(answer)] * 2


def test_cite_check_rewrites_the_manifests_syntheses_as_manifest_would_and_nothing_else(run, searx, fire, md_root):
    grown_topic(run, searx, fire, md_root)
    web_dir = md_root / "t" / "web"
    before = (web_dir / "_manifest.md").read_text("utf-8")
    page = sorted(n for n in os.listdir(web_dir) if "reef2" in n)[0]
    synthesis = md_root / "t" / run("status", "--topic", "t", "--json").json["synthesis"]["path"].rsplit("/", 1)[1]
    synthesis.write_text(f"# Reefs\n\n## Findings\n\n- A survey counted 120 colonies [4](web/{page}).\n", "utf-8")
    head = before.split("\n\n## Syntheses\n")[0]
    for fix in ("", "\n- A later survey counted 999 colonies [4](web/" + page + ").\n"):   # its line new, then there
        synthesis.write_text(synthesis.read_text("utf-8") + fix, "utf-8")
        run("cite-check", synthesis)
        after = (web_dir / "_manifest.md").read_text("utf-8")
        assert after.startswith(head + "\n\n## Syntheses\n") and after != before
        run("manifest", "--topic", "t")
        fresh = (web_dir / "_manifest.md").read_text("utf-8")
        assert fresh.split("\n\n## Syntheses\n")[1] == after.split("\n\n## Syntheses\n")[1]
        before = fresh
    later = md_root / "t" / run("init", "reefs", "--topic", "t", "--json").json["synthesis"].rsplit("/", 1)[1]
    later.write_text(synthesis.read_text("utf-8"), "utf-8")   # the goal's next synthesis: first, and in bold
    run("cite-check", later)
    after = (web_dir / "_manifest.md").read_text("utf-8").split("\n\n## Syntheses\n")[1]
    assert after.count("(latest)") == 1 and f"**[{later.name}]" in after
    run("manifest", "--topic", "t")
    assert (web_dir / "_manifest.md").read_text("utf-8").split("\n\n## Syntheses\n")[1] == after


def test_a_version_a_refresh_saves_is_known_from_the_ledger_as_the_file_says_it(run, fire, md_root):
    from test_comeback import B, LONG, PAGES, article, cited_topic
    cited_topic(run, fire, md_root, PAGES)
    fire.set_page(B, article(B, "The pools are full again. " + LONG))
    run("refresh", "--topic", "s")
    event = next(e for e in read_ledger(md_root / "s" / "web" / "_ledger.jsonl") if e.get("outcome") == "changed")
    version = md_root / "s" / "web" / os.path.basename(event["path"])
    on_disk = web.read_page_facts(str(version))
    assert {k: event[k] for k in ("words", "chars", "title", "flags")} == \
        {k: on_disk[k] for k in ("words", "chars", "title", "flags")}
    os.unlink(md_root / "s" / "web" / ".index" / "ledger.sqlite")   # anew from the ledger: the file is not read
    assert web.LedgerIndex(str(md_root / "s" / "web")).page_facts([version.name]) == {version.name: on_disk}


def test_a_page_saved_without_its_ledger_event_is_known_at_once_and_read_whole_later(md_root):
    cfg = web.Config({"WEB_MD_ROOT": str(md_root), "WEBTOOLS_HOST": "127.0.0.1"})
    store, url = web.TopicStore(cfg, "t"), "https://a.org/x"
    header = web.render_header(url, "q", "2026-12-01", "r")
    path = store.save(url, header, b"Forty reef surveys.\n", False)[2]
    assert store.save("https://www.a.org/x/", header, b"other\n", False)[:2] == ("skipped", "already saved")
    assert web.TopicStore(cfg, "t").pages()[os.path.basename(path)] == web.read_page_facts(path)   # no event came


def test_what_a_scrape_records_of_a_page_is_what_its_file_says(run, searx, fire, md_root):
    grown_topic(run, searx, fire, md_root)
    web_dir = md_root / "t" / "web"
    saved = [e for e in read_ledger(web_dir / "_ledger.jsonl") if e.get("outcome") == "saved"]
    assert len(saved) == 6
    for event in saved:   # the stand-in's pages end without a newline: the file's body ends with one
        facts = web.read_page_facts(str(web_dir / os.path.basename(event["path"])))
        assert {k: event[k] for k in ("sha256", "words", "chars", "flags")} == \
            {k: facts[k] for k in ("sha256", "words", "chars", "flags")}
