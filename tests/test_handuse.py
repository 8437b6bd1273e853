"""web.py run by hand: nothing clobbered, run state a person cannot corrupt, topics only from init,
a doctor that answers in seconds, and wording that says what it counts."""

import json
import time

import pytest
from standins import Reply, make_hit

import web
from conftest import read_ledger, run_process
from test_hardening import snapshot


# --- topics: only init starts one ---------------------------------------------------------------

@pytest.mark.parametrize("argv", [["search", "great wall history"], ["scrape", "https://a.org/x"]])
def test_a_mistyped_topic_is_refused_with_the_closest_one_and_nothing_is_made(run, searx, fire, md_root, argv):
    run("init", "the great wall", "--topic", "greatwall")
    before = snapshot(md_root)
    r = run(*argv, "--topic", "greatwal")
    assert r.code == web.EXIT_USAGE and r.err == (
        f"web.py: usage: there is no topic 'greatwal' in {web.display_path(md_root)} — did you mean greatwall? "
        f"(a new topic starts with web.py init \"goal\" --topic greatwal)\n")
    assert snapshot(md_root) == before and searx.requests == [] and fire.requests == []


def test_a_sub_topic_is_suggested_too(run, md_root):
    run("init", "agents", "--topic", "ai/agents")
    r = run("status", "--topic", "ai/agnets")
    assert r.code == web.EXIT_USAGE and "did you mean ai/agents?" in r.err


def test_a_refused_url_into_a_new_topic_makes_no_folder(run, fire, md_root):
    r = run("scrape", "http://localhost/admin", "--topic", "octo")
    assert r.code == web.EXIT_USAGE and "there is no topic 'octo'" in r.err
    assert not (md_root / "octo").exists() and fire.requests == []


def test_a_missing_md_root_is_exit_3_and_nothing_is_made(tmp_path):
    missing = tmp_path / "nonexistent" / "x"
    r = run_process("init", "goal", "--topic", "t", env={"WEB_MD_ROOT": str(missing)})
    assert r.code == web.EXIT_CONFIG and r.out == ""
    assert r.err == (f"web.py: storage: the md root {missing} does not exist — point WEB_MD_ROOT at an existing "
                     f"folder, or create it\n")
    assert not (tmp_path / "nonexistent").exists()


def test_doctor_fails_on_a_missing_md_root_and_makes_none(run, doctor_box, monkeypatch, tmp_path):
    monkeypatch.setenv("WEB_MD_ROOT", str(tmp_path / "gone"))
    r = run("doctor")
    assert r.code == web.EXIT_CONFIG and "FAIL md-root    the md root" in r.out and "does not exist" in r.out
    assert not (tmp_path / "gone").exists()


# --- init -h --------------------------------------------------------------------------------

def test_init_help_shows_the_goal_and_topic_as_required(run):
    r = run_process("init", "-h")
    usage = " ".join(r.out.split("\n\n")[0].split())
    assert usage.startswith("usage: web.py init [-h] --topic T ") and usage.endswith(" GOAL [GOAL ...]")


# --- never clobber ----------------------------------------------------------------------------

def test_scrape_out_refuses_an_existing_file_and_leaves_it_untouched(run, fire, tmp_path):
    page = tmp_path / "x.md"
    page.write_text("my own notes\n", encoding="utf-8")
    r = run("scrape", "https://example.org/a", "--out", page)
    assert r.code == web.EXIT_USAGE and r.out == "" and r.err == (
        f"web.py: usage: --out {web.display_path(page)} exists — choose another path, or add --force to replace it\n")
    assert page.read_text("utf-8") == "my own notes\n" and fire.requests == []


def test_scrape_out_with_force_replaces_the_file(run, fire, tmp_path):
    fire.set_articles("https://example.org/a")
    page = tmp_path / "x.md"
    page.write_text("old\n", encoding="utf-8")
    assert run("scrape", "https://example.org/a", "--out", page, "--force").code == 0
    assert page.read_text("utf-8").startswith("> source: https://example.org/a")


@pytest.mark.parametrize("exists", [True, False])
def test_no_out_ever_writes_a_synthesis_even_with_force(run, fire, md_root, exists):
    synthesis = md_root / "t" / "goal-synthesis.md"
    if exists:
        synthesis.write_text("# My synthesis\n", encoding="utf-8")
    before = snapshot(md_root)
    for argv in (["scrape", "https://example.org/a"], ["export", "--topic", "t", "--format", "ris"]):
        r = run(*argv, "--out", synthesis, "--force")
        assert r.code == web.EXIT_USAGE and r.err == (
            f"web.py: usage: --out {web.display_path(synthesis)} names a synthesis — web.py never writes or replaces "
            f"one: choose another path\n")
    assert snapshot(md_root) == before and fire.requests == []
    assert synthesis.exists() == exists and (not exists or synthesis.read_text("utf-8") == "# My synthesis\n")


def test_export_out_refuses_an_existing_file_unless_forced(run, fire, md_root, tmp_path):
    fire.set_articles("https://example.org/a")
    run("scrape", "https://example.org/a", "--topic", "t")
    refs = tmp_path / "refs.ris"
    refs.write_text("my library\n", encoding="utf-8")
    r = run("export", "--topic", "t", "--format", "ris", "--out", refs)
    assert r.code == web.EXIT_USAGE and r.err == (
        f"web.py: usage: --out {web.display_path(refs)} exists — choose another path, or add --force to replace it\n")
    assert refs.read_text("utf-8") == "my library\n"
    r = run("export", "--topic", "t", "--format", "ris", "--out", refs, "--force")
    assert r.code == 0 and refs.read_text("utf-8").startswith("TY  - ELEC")


def test_a_page_whose_address_ends_in_synthesis_is_not_saved_as_one(run, fire, md_root):
    fire.set_articles("https://example.org/notes/my-synthesis")
    r = run("scrape", "https://example.org/notes/my-synthesis", "--topic", "t", "--json")
    assert r.code == 0 and r.json["saved"][0]["path"].endswith("/example-org-notes-my-synthesis-page.md")
    assert not list((md_root / "t" / "web").glob("*-synthesis.md"))


# --- the run's budget holds -------------------------------------------------------------------

def ledger(md_root, topic="t"):
    return read_ledger(md_root / topic / "web" / "_ledger.jsonl")


def test_a_scrape_past_the_spent_budget_is_refused_and_saves_nothing(run, fire, md_root):
    fire.set_articles("https://a.org/1", "https://b.org/2")
    run("init", "goal", "--topic", "t", "--max-sources", "1")
    assert run("scrape", "https://a.org/1", "--topic", "t").code == 0
    before, requests = snapshot(md_root), len(fire.requests)
    r = run("scrape", "https://b.org/2", "--topic", "t", "--json")
    assert r.code == web.EXIT_USAGE and r.err == (
        "web.py: usage: the run's budget is spent: 1 of 1 pages saved — add --force to go past it\n")
    assert snapshot(md_root) == before and len(fire.requests) == requests
    assert (md_root / "t" / "web" / "_ledger.jsonl").read_bytes().count(b"\n") == 2   # init and the one save


def test_force_goes_past_the_budget_and_status_says_why(run, fire, md_root):
    fire.set_articles("https://a.org/1", "https://b.org/2")
    run("init", "goal", "--topic", "t", "--max-sources", "1")
    run("scrape", "https://a.org/1", "--topic", "t")
    r = run("scrape", "https://b.org/2", "--topic", "t", "--force", "--json")
    assert r.code == 0 and [e["url"] for e in r.json["saved"]] == ["https://b.org/2"]
    assert [e.get("over_budget") for e in ledger(md_root) if e["command"] == "scrape"] == [None, True]
    status = run("status", "--topic", "t")
    assert status.out.splitlines()[1] == ("round 1 of 1, scraped · 2 of 1 pages saved (1 past the budget, --force) · "
                                          "nothing left to scrape")
    assert run("status", "--topic", "t", "--json").json["forced"] == 1
    assert run("manifest", "--topic", "t").out.splitlines()[0].endswith(
        " · 2 of 1 pages saved (1 past the budget, --force)")
    assert " | 1 pages, 1 round | 1 | 2 (1 past the budget, --force) | " in (
        md_root / "t" / "web" / "_manifest.md").read_text("utf-8")


def test_a_page_saved_past_the_budget_stays_counted_so_after_its_next_version(run, fire, md_root):
    from standins import article_markdown, page_body
    fire.set_articles("https://a.org/1", "https://b.org/2")
    run("init", "goal", "--topic", "t", "--max-sources", "1")
    run("scrape", "https://a.org/1", "--topic", "t")
    run("scrape", "https://b.org/2", "--topic", "t", "--force")
    fire.set_page("https://b.org/2", page_body("https://b.org/2", article_markdown("sea otters")))
    r = run("scrape", "https://b.org/2", "--topic", "t", "--force", "--json")
    assert r.code == 0 and r.json["saved"][0]["path"].endswith(".v2.md")
    assert run("status", "--topic", "t", "--json").json["forced"] == 1
    assert "2 of 1 pages saved (1 past the budget, --force)" in run("status", "--topic", "t").out


def test_a_limit_beyond_what_the_budget_has_left_is_capped_to_it(run, fire, md_root):
    fire.set_articles("https://a.org/1", "https://b.org/2", "https://c.org/3", "https://d.org/4")
    run("init", "goal", "--topic", "t", "--max-sources", "3")
    run("scrape", "https://a.org/1", "--topic", "t")
    r = run("scrape", "https://b.org/2", "https://c.org/3", "https://d.org/4", "--topic", "t", "--limit", "5",
            "--workers", "1", "--json")
    assert r.code == 0 and r.err == ("web.py: scrape: --limit 5 capped to 2: the run's budget has 2 of 3 pages left "
                                     "— add --force to go past it\n")
    assert [e["url"] for e in r.json["saved"]] == ["https://b.org/2", "https://c.org/3"]
    assert r.json["limit"] == 2 and r.json["not_attempted"] == ["https://d.org/4"]
    assert run("status", "--topic", "t", "--json").json["saved"] == 3


def test_without_a_limit_a_scrape_saves_at_most_what_the_budget_has_left(run, fire, md_root):
    fire.set_articles("https://a.org/1", "https://b.org/2", "https://c.org/3")
    run("init", "goal", "--topic", "t", "--max-sources", "2")
    r = run("scrape", "https://a.org/1", "https://b.org/2", "https://c.org/3", "--topic", "t", "--workers", "1")
    assert r.code == 0 and r.err == ("web.py: scrape: saving at most 2 of the 3 candidates: the run's budget has 2 "
                                     "of 2 pages left — add --force to go past it\n")
    assert r.out.splitlines()[-1] == "not attempted  https://c.org/3"


def test_a_topic_without_a_run_has_no_budget(run, fire, md_root):
    fire.set_articles(*[f"https://a.org/{i}" for i in range(13)])
    r = run("scrape", *[f"https://a.org/{i}" for i in range(13)], "--topic", "t", "--json")
    assert r.code == 0 and len(r.json["saved"]) == 13 and r.err == ""


# --- rounds -----------------------------------------------------------------------------------

def test_several_searches_before_a_scrape_stay_in_one_round(run, searx, fire, md_root):
    run("init", "goal", "--topic", "t", "--max-sources", "4", "--deep", "--max-rounds", "2")
    searx.set_results("q1", [make_hit("https://a.org/1")])
    searx.set_results("q2", [make_hit("https://b.org/2")])
    run("search", "q1", "--topic", "t")
    run("search", "q2", "--topic", "t")
    assert run("status", "--topic", "t").out.splitlines()[1].startswith("round 1 of 2 · 0 of 4 pages")
    run("scrape", "https://a.org/1", "--topic", "t")
    run("search", "q3", "--topic", "t")
    assert [e["round"] for e in ledger(md_root) if e["command"] in ("search", "scrape")] == [1, 1, 1, 2]


def test_a_search_after_the_last_round_is_reported_as_such(run, searx, fire, md_root):
    fire.set_articles("https://a.org/1")
    run("init", "goal", "--topic", "t", "--max-sources", "4")
    run("search", "q1", "--topic", "t")
    run("scrape", "https://a.org/1", "--topic", "t")
    run("search", "q2", "--topic", "t")
    status = run("status", "--topic", "t")
    assert status.out.splitlines()[1] == "round 2, after the run's 1 round · 1 of 4 pages saved · nothing left to scrape"
    assert run("manifest", "--topic", "t").out.splitlines()[0].endswith(" · round 2, after the run's 1 round · 1 of 4 "
                                                                        "pages saved")   # said alike everywhere
    assert "max rounds" in run("status", "--topic", "t", "--json").json["stop"]


# --- pages left when --limit is met are unused; retry once ------------------------------------------

def status_events(*scrapes, saved=0, max_sources=4):
    ledger_rows = [{"run": "r", "command": "init", "options": {"max_sources": max_sources, "deep": True,
                                                             "max_rounds": 3}},
                   {"run": "r", "command": "search", "round": 1, "new": 3}]
    ledger_rows += [{"run": "r", "command": "scrape", "round": 1, "outcome": "saved", "path": f"web/p{i}.md",
                     "url": f"https://p.org/{i}"} for i in range(saved)]
    return ledger_rows + [dict({"run": "r", "command": "scrape", "round": 1}, **e) for e in scrapes]


def test_an_unused_page_may_be_picked_again_while_the_budget_has_room():
    unused = {"outcome": "unused", "url": "https://u.org/", "reason": "not needed: --limit 1 was met"}
    assert web.run_facts(status_events(unused, saved=1))["retry"] == [["https://u.org/", "unused", None]]
    assert web.run_facts(status_events(unused, saved=4))["retry"] == []         # the budget is spent


@pytest.mark.parametrize("kinds, retry", [(["timeout"], True), (["http"], True), (["timeout", "timeout"], False),
                                          (["http", "timeout"], False), (["target-status"], False)])
def test_a_timeout_or_http_failure_is_retried_once(kinds, retry):
    failures = [{"outcome": "failed", "kind": kind, "url": "https://f.org/"} for kind in kinds]
    assert web.run_facts(status_events(*failures, saved=1))["retry"] == ([["https://f.org/", kinds[-1], None]] if retry
                                                                         else [])


def test_an_unused_page_is_no_failure_in_the_manifest(run, fire, md_root, monkeypatch):
    import threading
    monkeypatch.setattr(web, "STRAGGLER_GRACE", 0.3)
    from standins import Reply, article_markdown, page_body
    run("init", "goal", "--topic", "t", "--max-sources", "4", "--deep", "--max-rounds", "2")
    hold = threading.Event()
    fire.set_page("https://slow.org/x", Reply(200, page_body("https://slow.org/x", article_markdown("s")), hold=hold))
    fire.set_articles("https://b.org/1", "https://c.org/2")
    try:
        r = run("scrape", "https://slow.org/x", "https://b.org/1", "https://c.org/2", "--topic", "t", "--limit", "2")
    finally:
        hold.set()
    assert r.code == 0 and r.err == "" and "unused   not needed: --limit 2 was met  https://slow.org/x" in r.out
    checkpoint = run("manifest", "--topic", "t", "--json").json
    assert checkpoint["failed"] == []
    manifest = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8")
    assert "| unused (may pick again): not needed: --limit 2 was met |" in manifest
    assert run("status", "--topic", "t", "--json").json["retry"] == [{"url": "https://slow.org/x", "kind": "unused"}]


# --- progress on a terminal -------------------------------------------------------------------

def test_progress_names_pages_by_their_citation_number(run, fire, md_root):
    fire.set_articles("https://a.org/1", "https://b.org/2", "https://c.org/3")
    run("scrape", "https://a.org/1", "https://b.org/2", "--topic", "t", "--workers", "1")
    r = run("scrape", "https://c.org/3", "--topic", "t", tty=True)
    assert r.err == f"[3] saved {web.display_path(md_root / 't' / 'web' / 'c-org-3.md')}\n"
    assert r.out.startswith("saved    [3] ")


def test_a_page_that_finishes_before_a_higher_pick_is_announced_after_it_with_its_final_number(run, fire, md_root):
    import threading
    from standins import article_page
    hold = threading.Event()
    fire.set_page("https://a.org/1", Reply(200, article_page("https://a.org/1"), hold=hold))
    fire.set_articles("https://b.org/2")
    web_dir = md_root / "t" / "web"

    def release_a_once_b_is_saved():
        for _ in range(2000):
            if (web_dir / "b-org-2.md").exists():
                break
            time.sleep(0.005)
        hold.set()
    threading.Thread(target=release_a_once_b_is_saved, daemon=True).start()
    r = run("scrape", "https://a.org/1", "https://b.org/2", "--topic", "t", "--workers", "2", tty=True)
    assert r.err == f"[1] saved {web.display_path(web_dir / 'a-org-1.md')}\n[2] saved {web.display_path(web_dir / 'b-org-2.md')}\n"
    assert [line.split()[1] for line in r.out.splitlines()] == ["[1]", "[2]"]   # as the report numbers them


# --- doctor in seconds --------------------------------------------------------------------------

def test_doctor_tells_a_box_that_hangs_in_seconds(run, monkeypatch):
    from standins import SilentStandIn
    silent = SilentStandIn()
    monkeypatch.setenv("SEARXNG_URL", silent.url)
    monkeypatch.setenv("FIRECRAWL_URL", silent.url + "/fc")
    monkeypatch.setattr(web, "DOCTOR_WAIT", 0.5)      # each probe waits DOCTOR_WAIT, not the 20/60 s of a request
    try:
        r = run("doctor", "--json")
    finally:
        silent.close()
    where = silent.url.split("//")[1]
    assert r.code == web.EXIT_UNREACHABLE and [(c["name"], c["detail"], c["fix"]) for c in r.json["checks"][1:3]] == [
        (name, f"{where} connected, but no answer within {web.DOCTOR_WAIT:g} s",
         "the box is slow or overloaded; raise WEB_TIMEOUT") for name in ("searxng", "firecrawl")]
    assert len(silent.connections) == 2                # one attempt each


def test_doctor_waits_as_long_as_web_timeout_says(run, monkeypatch):
    from standins import SilentStandIn
    silent = SilentStandIn()
    monkeypatch.setenv("SEARXNG_URL", silent.url)
    monkeypatch.setenv("WEB_TIMEOUT", "0.5")
    try:
        check = run("doctor", "--json").json["checks"][1]
    finally:
        silent.close()
    assert check["detail"].endswith("connected, but no answer within 0.5 s")


# --- wording ------------------------------------------------------------------------------------

def test_search_all_shows_seen_hits_in_full_and_without_it_on_one_line(run, searx, fire, md_root):
    fire.set_articles("https://a.org/1")
    searx.set_results("q", [make_hit("https://a.org/1", "Page A"), make_hit("https://b.org/2", "Page B")])
    run("search", "q", "--topic", "t")
    run("scrape", "https://a.org/1", "--topic", "t")
    searx.set_results("q2", [make_hit("https://a.org/1", "Page A"), make_hit("https://c.org/3", "Page C"),
                             make_hit("https://b.org/2", "Page B")])
    assert run("search", "q2", "--topic", "t").out.splitlines() == [
        " 1. [saved 1] https://a.org/1",
        " 2. Page C", "    https://c.org/3", "    Snippet for https://c.org/3",
        " 3. [seen] https://b.org/2 — Page B",          # never saved: its title, so no one digs in the ledger
        "-- 3 hits, 1 new to the topic; seen ones on one line (--all shows them in full)"]
    assert run("search", "q2", "--topic", "t", "--all").out.splitlines() == [
        " 1. Page A [saved 1]", "    https://a.org/1", "    Snippet for https://a.org/1",
        " 2. Page C [seen]", "    https://c.org/3", "    Snippet for https://c.org/3",
        " 3. Page B [seen]", "    https://b.org/2", "    Snippet for https://b.org/2",
        "-- 3 hits, 0 new to the topic"]


# --- the provenance header renders as lines -----------------------------------------------------

HEADER_FIELDS = {"source": "https://a.org/1", "query": "q", "fetched": "2026-12-01", "relevance": "why",
                 "title": "A | B"}


def test_the_header_ends_each_field_line_in_a_hard_break_and_old_pages_read_the_same(run, fire, md_root):
    header = web.render_header("https://a.org/1", "q", "2026-12-01", "why", [("title", "A | B")])
    assert header.splitlines() == ["> source: https://a.org/1  ", "> query: q  ", "> fetched: 2026-12-01  ",
                                   "> relevance: why  ", "> title: A | B  ", web.NOTE_LINE, ""]
    old = header.replace("  \n", "\n")                         # a page saved before the hard breaks
    assert web.split_saved(header + "body\n") == web.split_saved(old + "body\n") == (HEADER_FIELDS, "body\n")
    (md_root / "t" / "web").mkdir()
    (md_root / "t" / "web" / "a-org-1.md").write_text(old + "Old words. " * 30, encoding="utf-8")
    r = run("scrape", "https://a.org/1", "--topic", "t", "--json")   # an old page is still found by its source
    assert r.json["skipped"][0]["reason"] == "already saved"
    assert web.read_header(md_root / "t" / "web" / "a-org-1.md")["title"] == "A | B"


@pytest.mark.skipif(__import__("shutil").which("pandoc") is None, reason="needs pandoc")
def test_a_commonmark_preview_shows_one_header_field_a_line(tmp_path):
    import subprocess
    header = web.render_header("https://a.org/1", "q", "2026-12-01", "why", [("title", "A | B")])
    html = subprocess.run(["pandoc", "-f", "commonmark", "-t", "html"], input=header + "Body.\n", text=True,
                          capture_output=True, check=True).stdout
    assert html.count("<br />") == 5 and "source: https://a.org/1<br />\nquery: q<br />" in html


# --- the manifest follows cite-check; status knows gathering ended ---------------------------------

def synthesis_section(md_root):
    text = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8")
    return text[text.index("## Syntheses"):]


@pytest.mark.parametrize("via", ["hand", "hook"])
def test_a_cite_check_result_refreshes_the_manifests_synthesis_line(run, fire, md_root, via):
    run("init", "goal", "--topic", "t", "--max-sources", "1")
    run("scrape", "https://a.org/1", "--topic", "t")
    run("manifest", "--topic", "t")
    manifest = md_root / "t" / "web" / "_manifest.md"
    manifest.write_text(manifest.read_text("utf-8") + "\nmy notes below the block\n", encoding="utf-8")
    assert "- none yet" in synthesis_section(md_root)
    today = f"{web.now_utc():%Y-%m-%d}"
    synthesis = md_root / "t" / f"goal-{today}-synthesis.md"   # the run's, as init named it
    synthesis.write_text("# Goal\n\nA claim without a source.\n", encoding="utf-8")
    if via == "hand":
        assert run("cite-check", synthesis).code == web.EXIT_PARTIAL
    else:
        payload = {"session_id": "s1", "cwd": str(md_root), "tool_input": {"file_path": str(synthesis)}}
        assert run("hook", "post", stdin=json.dumps(payload)).code == 0
    assert synthesis_section(md_root).startswith(
        f"## Syntheses\n\nEach run writes its own; the newest first, the latest of each goal in bold.\n\n"
        f"- **[goal-{today}-synthesis.md](../goal-{today}-synthesis.md)** (latest) — run 1, {today} · fails "
        f"cite-check: 2 errors ({today})\n<!-- web.py:end -->")
    assert manifest.read_text("utf-8").endswith("\nmy notes below the block\n")


def test_cite_check_makes_no_manifest_where_there_is_none(run, fire, md_root):
    run("scrape", "https://a.org/1", "--topic", "t")
    (md_root / "t" / "x-synthesis.md").write_text("# X\n\nText.\n", encoding="utf-8")
    run("cite-check", md_root / "t" / "x-synthesis.md")
    assert not (md_root / "t" / "web" / "_manifest.md").exists()


def test_status_knows_gathering_ended_at_the_manifest_and_what_follows(run, searx, fire, md_root):
    searx.set_results("q", [make_hit("https://a.org/1"), make_hit("https://b.org/2")])
    fire.set_articles("https://a.org/1")
    run("init", "goal", "--topic", "t", "--max-sources", "4", "--deep", "--max-rounds", "3")
    run("search", "q", "--topic", "t")
    run("scrape", "https://a.org/1", "--topic", "t")
    assert run("status", "--topic", "t", "--json").json["next"].startswith("round 1 is done; deep round 2 is open")
    run("manifest", "--topic", "t")
    assert ledger(md_root)[-1]["command"] == "manifest"
    synthesis = md_root / "t" / f"goal-{web.now_utc():%Y-%m-%d}-synthesis.md"
    assert run("status", "--topic", "t", "--json").json["next"] == (
        f"gathering ended: the manifest ran after the last scrape, so the checkpoint was shown; once the user gives "
        f"the go-ahead, write the synthesis {web.display_path(synthesis)}")
    synthesis.write_text("# Goal\n", encoding="utf-8")
    assert run("status", "--topic", "t", "--json").json["next"] == (
        "run cite-check on the synthesis (it changed since the last check, or was never checked)")
    synthesis.unlink()
    searx.set_results("q2", [make_hit("https://c.org/3")])
    run("search", "q2", "--topic", "t")                 # gathering goes on: round 2 is open again
    assert run("status", "--topic", "t", "--json").json["next"].startswith("rank round 2's hits")


def test_requests_say_what_they_count():
    assert web.render_requests({"search": 21, "queries": 17, "scrape": 8}) == \
        "21 search requests for 17 queries (pages 2–5 when needed), 8 scrapes"
    assert web.render_requests({"search": 1, "queries": 1, "scrape": 1}) == "1 search request for 1 query, 1 scrape"


# --- export titles ------------------------------------------------------------------------------

@pytest.mark.parametrize("title, site, kept", [
    ("Seeing Depth | Journal of Applied Visual Perception", "Journal of Applied Visual Perception", "Seeing Depth"),
    ("Seeing Depth - journal of applied visual perception", "Journal of Applied Visual Perception", "Seeing Depth"),
    ("Seeing Depth — JAVP", "JAVP", "Seeing Depth"), ("Seeing Depth · JAVP", "JAVP", "Seeing Depth"),
    ("Seeing Depth | Part 2", "JAVP", "Seeing Depth | Part 2"),      # the tail is not the site: kept whole
    ("JAVP", "JAVP", "JAVP"), ("Seeing Depth | JAVP", None, "Seeing Depth | JAVP"),
])
def test_an_exported_title_drops_the_site_name_it_repeats(title, site, kept):
    assert web.export_title(title, site) == kept


def test_every_export_format_has_the_title_without_the_site(run, fire, md_root):
    from standins import article_markdown, page_body
    url = "https://javp.example.org/depth"
    fire.set_page(url, page_body(url, article_markdown("depth"), title="Seeing Depth | Journal of Applied Visual "
                                 "Perception", ogSiteName="Journal of Applied Visual Perception"))
    run("scrape", url, "--topic", "t")
    assert "  title = {{Seeing Depth}},\n" in run("export", "--topic", "t", "--format", "bibtex").out
    assert json.loads(run("export", "--topic", "t", "--format", "csl-json").out)[0]["title"] == "Seeing Depth"
    assert "TI  - Seeing Depth\r\n" in run("export", "--topic", "t", "--format", "ris").out
