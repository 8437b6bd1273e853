"""What the full mutation run (tests/mutation.py) found that no test held: each test pins what a user sees
where a mutant changed it and the suite still passed."""

import os

import web
from conftest import read_ledger
from standins import Reply
from test_citecheck import EVENTS, PAGES, REEF1, checker, synthesis, topic_on_disk


# --- cite-check --table: the evidence file, whole ---------------------------------------------------------

def evidence(run, topic, findings):
    path = topic / "reefs-synthesis.md"
    path.write_text(synthesis(findings), encoding="utf-8")
    run("cite-check", path, "--table")
    text = (topic / "reefs-evidence.md").read_text("utf-8")
    head, body = text.split("\n## ", 1)
    return head.splitlines(), "## " + body


def test_the_evidence_table_is_its_header_then_the_review_then_the_other_cited_sentences(run, md_root):
    head, body = evidence(run, topic_on_disk(md_root), f"- Surveys counted 1,240 colonies in 2019 {REEF1}.\n"
                          f"- Parrotfish are the main threat to tourism {REEF1}.\n"
                          f"- Colonies grew by 260 (= 1,240 − 980) [5](web/gone.md).")
    assert head[:2] == ["# Evidence for reefs-synthesis.md", ""]
    assert head[2].startswith("> synthesis: [reefs-synthesis.md](reefs-synthesis.md) · sha256 ")
    digest, date = head[2].split(" · ")[1:]
    assert len(digest.split()[1]) == 12 and date == f"{web.now_utc():%Y-%m-%d}"
    assert head[3:] == ["> support: the share of a sentence's content words found in the best 40-word passage of "
                        "each page it cites; weak below 50%"]
    assert body == (
        "## Review (2)\n\n"
        "**Line 13 · weak.** Parrotfish are the main threat to tourism [1](web/reef.md).\n"
        "- [1](web/reef.md) 25%: “Between 5 and 9 species of parrotfish grazed the plots.”\n\n"
        "**Line 14 · derived.** Colonies grew by 260 (= 1,240 − 980) [5](web/gone.md).\n"
        "- cites no saved page\n\n"
        "## Other cited sentences (2)\n\n"
        "**Line 8.** Reefs recover within two seasons [1](web/reef.md).\n"
        "- [1](web/reef.md) 100%: “Marine biologists at the Coral Institute reported that the reef had recovered "
        "within two seasons after the 2016 bleaching.”\n\n"
        "**Line 12.** Surveys counted 1,240 colonies in 2019 [1](web/reef.md).\n"
        "- [1](web/reef.md) 100%: “Surveys counted 1,240 colonies in 2019, up from 980 colonies in 2017.”\n")


def test_an_evidence_table_with_nothing_to_review_says_none(run, md_root):
    _, body = evidence(run, topic_on_disk(md_root), f"- Surveys counted 1,240 colonies in 2019 {REEF1}.")
    assert body.startswith("## Review (0)\n\nnone\n\n## Other cited sentences (2)\n\n**Line 8.** ")


# --- cite-check: what its messages name ---------------------------------------------------------------------

def test_a_derived_percentage_that_is_a_whole_number_is_shown_without_decimals(tmp_path):
    check = checker(tmp_path, PAGES, EVENTS)
    result = check(synthesis(f"- Two of the 40 metres were lost: 6% (= (2019 − 2017) / 40) {REEF1}."))
    assert result.errors == [(12, "wrong-derivation", "derived number 6%: (= (2019 − 2017) / 40) gives 5%")]


def test_a_date_with_a_month_past_twelve_is_a_number_not_found_not_a_crash(tmp_path):
    check = checker(tmp_path, PAGES, EVENTS)
    result = check(synthesis(f"- The survey ended on 2021-13-14 {REEF1}."))
    assert [kind for _, kind, _ in result.errors] == ["number-not-found"]


def test_a_broken_citation_with_an_anchor_or_without_md_suggests_the_page_meant():
    pages = ["web/reef-census.md", "web/a-org.md"]
    assert web.meant_page("web/reef-census.md#colonies-counted-in-the-survey", pages) == "web/reef-census.md"
    assert web.meant_page("web/a-org", pages) == "web/a-org.md"
    assert web.meant_page("web/zzz.md", pages) is None


def test_what_a_newer_version_lost_is_counted_and_shown_in_full(tmp_path):
    quotes, numbers = ["one two three", "four five six", "seven eight nine"], ["1", "2", "3", "4", "5", "6"]
    claim = (quotes + ["ten eleven twelve"], numbers + ["7"])
    assert web.render_lost(claim, (quotes, numbers)) == (
        '3 of its 4 quotes ("one two three", "four five six") and 6 of its 7 numbers (1, 2, 3, 4, 5)')
    assert web.render_lost((quotes[:1], numbers), ([], numbers[:2])) == "2 of its 6 numbers (1, 2)"
    assert web.render_lost((quotes[:1], ["1"]), (quotes[:1], [])) == 'its quote ("one two three")'


# --- saved pages, topics ----------------------------------------------------------------------------------

def test_the_current_version_is_the_highest_by_number_and_a_deleted_page_is_its_own(tmp_path):
    for name in ["x.md"] + [f"x.v{n}.md" for n in range(2, 11)] + ["xy.v11.md"]:
        (tmp_path / name).write_text("page\n", encoding="utf-8")
    assert web.current_version(str(tmp_path / "x.md")) == str(tmp_path / "x.v10.md")
    assert web.current_versions(str(tmp_path), ["x.v3.md", "xy.md", "x.md"]) == ["x.v10.md", "xy.md"]
    assert web.current_version(str(tmp_path / "gone.md")) == str(tmp_path / "gone.md")


def test_topics_are_the_md_roots_folders_and_deeper_folders_with_a_web_folder(md_root):
    for folder in ("reefs/web", "reefs/drafts", "reefs/web/notes", "lab/corals/web", "lab/misc", ".git/web",
                   "lab/.cache/web", "web/web"):
        (md_root / folder).mkdir(parents=True)
    assert web.known_topics(str(md_root)) == ["lab", "lab/corals", "reefs", "t"]


def test_an_earlier_synthesis_is_named_with_what_cite_check_and_the_audit_said():
    entry = {"path": "md/t/x-2026-06-01-synthesis.md", "date": "2026-06-01", "status": "passed",
             "checked": "2026-06-02", "audit": {"problems": 1, "current": True, "path": "md/t/x-audit.md"}}
    assert web.render_earlier(entry, 1) == ("md/t/x-2026-06-01-synthesis.md — 2026-06-01 · passed cite-check on "
                                            "2026-06-02 · audited: 1 problem (md/t/x-audit.md)")
    assert web.render_earlier(dict(entry, status="unchecked", audit={}), 2) == (
        "md/t/x-2026-06-01-synthesis.md — 2026-06-01 · not checked yet: run cite-check · the latest of 2 (the "
        "manifest lists them all)")


def test_line_ranges_are_named_as_a_note_names_them():
    assert web.line_refs([(3, 5), (7, 7)]) == "L3–5, L7"
    assert web.line_refs([]) == "lines it did not name"


def test_a_page_without_a_label_is_named_by_its_path(tmp_path):
    lookup = checker(tmp_path, PAGES, EVENTS)(synthesis(f"- Surveys counted 1,240 colonies {REEF1}.")).lookup
    assert web.page_named(lookup, "web/reef.md") == "[1] (web/reef.md)"
    assert web.page_named(lookup, "web/other.md") == "web/other.md"


# --- doctor: a failed check in words, and false as JSON says it -------------------------------------------

def failed(cause):
    err = web.Failure(web.EXIT_UNREACHABLE, "searxng", "unreachable", "check the box")
    err.__cause__ = cause
    return web.doctor_failure("searxng", "http://127.0.0.1:9", 4, err, "SEARXNG_URL")


def test_doctor_tells_no_connection_in_time_from_a_refusal_and_from_a_slow_answer():
    assert failed(web._Transient("refused the connection", connected=False)) == {
        "name": "searxng", "ok": False, "detail": "nothing answers at 127.0.0.1:9 (refused the connection)",
        "code": web.EXIT_UNREACHABLE, "fix": "is SEARXNG_URL right, and the service up there?"}
    assert failed(web._Transient("timed out", timed_out=True, connected=False))["detail"] == \
        "nothing answers at 127.0.0.1:9 (no connection within 4 s)"
    slow = failed(web._Transient("timed out", timed_out=True))
    assert (slow["ok"], slow["detail"], slow["fix"]) == (
        False, "127.0.0.1:9 connected, but no answer within 4 s", "the box is slow or overloaded; raise WEB_TIMEOUT")


# --- status: every line a person reads ---------------------------------------------------------------------

STATUS = {"run": "r2", "goal": "how fast do reefs recover", "round": 2, "rounds": 3, "scraped": True, "saved": 7,
          "budget": 6, "forced": True, "limit": 2, "stop": ["few new hits"],
          "retry": [{"url": "https://a.org/x", "kind": "timeout", "title": "Reef survey"},
                    {"url": "https://b.org/y", "kind": "http"}],
          "site": ["a.org"], "exclude_site": ["c.org"], "policy": "peer-reviewed first",
          "notes": {"done": ["web/a.md"], "need": [{"n": 2, "path": "md/t/web/b.md"}, {"n": 4, "path": "md/t/web/d.md"}],
                    "flagged": [{"n": 3, "lines": [(5, 6)], "note": "md/t/web/notes/c.md"}]},
          "synthesis": {"path": "md/t/reefs-2026-12-01-synthesis.md", "status": "failing", "errors": 2,
                        "checked": "2026-12-01"},
          "earlier": {"path": "md/t/reefs-2026-06-01-synthesis.md", "date": "2026-06-01", "status": "passed",
                      "checked": "2026-06-02", "audit": {"problems": 0, "current": True, "path": "md/t/a.md"}},
          "earlier_count": 3,
          "refreshed": {"date": "2026-12-01", "synthesis": "x", "pages": 8, "cited": 8, "changed": [2, 5], "gone": [4],
                        "moved": [], "failed": [], "quotes": 3, "numbers": 2},
          "date": "2026-12-01", "next": "fix the synthesis's 2 cite-check errors"}


def test_status_shows_every_fact_of_the_run_in_its_line():
    assert web.render_status(STATUS, "t").splitlines() == [
        "t · run r2 · how fast do reefs recover",
        "round 2 of 3, scraped · 7 of 6 pages saved (1 past the budget, --force) · next --limit 2",
        "stop rules met: few new hits",
        "may retry: https://a.org/x (timeout) — Reef survey",
        "may retry: https://b.org/y (http)",
        "scope: --site a.org --exclude-site c.org",
        "source policy: peer-reviewed first",
        "notes: 1 of 3 long pages · need a reader: [2] md/t/web/b.md, [4] md/t/web/d.md",
        "flagged by its reader: [3] reader-instructions at L5–6 (md/t/web/notes/c.md)",
        "synthesis: md/t/reefs-2026-12-01-synthesis.md — fails cite-check: 2 errors (2026-12-01)",
        "earlier synthesis: md/t/reefs-2026-06-01-synthesis.md — 2026-06-01 · passed cite-check on 2026-06-02 · "
        "audited: 0 problems (md/t/a.md) · the latest of 3 (the manifest lists them all)",
        "refreshed 2026-12-01: 8 cited pages, 2 changed ([2], [5]), 1 gone ([4]) · 3 quotes and 2 numbers no longer on "
        "the live page",
        "date: 2026-12-01",
        "next: fix the synthesis's 2 cite-check errors"]


def test_status_of_a_fresh_run_leaves_out_what_has_not_happened():
    fresh = {"run": "r1", "goal": "g", "round": 1, "rounds": 1, "scraped": False, "saved": 0, "budget": 6,
             "limit": 0, "synthesis": {"path": "md/t/g-synthesis.md", "status": "unwritten"},
             "notes": {"done": ["web/a.md"]}, "date": "2026-12-01", "next": "search"}
    assert web.render_status(fresh, "t").splitlines() == [
        "t · run r1 · g", "round 1 of 1 · 0 of 6 pages saved · nothing left to scrape", "stop rules met: none",
        "notes: 1 of 1 long pages", "synthesis: md/t/g-synthesis.md — not written yet", "date: 2026-12-01",
        "next: search"]
    late = web.render_status(dict(fresh, round=2), "t").splitlines()[1]
    assert late == "round 2, after the run's 1 round · 0 of 6 pages saved · nothing left to scrape"


def test_a_synthesis_files_goal_is_its_name_before_the_date_or_the_whole_name():
    assert [web.synthesis_goal(n) for n in ("reefs-synthesis.md", "reefs-2026-12-01-synthesis.md",
                                            "reefs-2026-12-01-2-synthesis.md", "draft.md")] == [
        "reefs", "reefs", "reefs", "draft.md"]


# --- doctor: each failed check whole, as --json gives it -------------------------------------------------------

def doctor_check_named(run, name):
    return next(c for c in run("doctor", "--json").json["checks"] if c["name"] == name)


def test_doctor_names_an_unwritable_md_root_and_a_missing_one(run, doctor_box, monkeypatch, tmp_path):
    if os.geteuid() == 0:   # root writes anywhere but in /sys
        unwritable = "/sys"
    else:
        unwritable = str(tmp_path / "ro")
        os.mkdir(unwritable, 0o555)
    monkeypatch.setenv("WEB_MD_ROOT", unwritable)
    assert run("doctor", "--json").json["version"] == web.VERSION
    assert doctor_check_named(run, "md-root") == {
        "name": "md-root", "ok": False, "detail": f"{web.display_path(unwritable)}: Permission denied",
        "code": web.EXIT_CONFIG, "fix": "make it writable or set WEB_MD_ROOT"}
    monkeypatch.setenv("WEB_MD_ROOT", str(tmp_path / "none"))
    missing = doctor_check_named(run, "md-root")
    assert (missing["ok"], missing["code"]) == (False, web.EXIT_CONFIG) and missing["detail"].endswith("does not exist")


def test_doctor_says_why_firecrawls_test_scrape_failed_and_what_to_do(run, searx, fire, monkeypatch):
    fire.set_page("https://example.com", Reply(408, {"success": False, "code": "SCRAPE_TIMEOUT",
                                                     "error": "Scrape timed out"}))
    assert doctor_check_named(run, "firecrawl") == {
        "name": "firecrawl", "ok": False, "code": web.EXIT_UNREACHABLE,
        "detail": "test scrape of https://example.com failed: timeout: Firecrawl: Scrape timed out",
        "fix": "is Firecrawl's queue worker running? a dead worker shows as a timeout (so does a slow box: raise "
               "WEB_TIMEOUT)"}
    fire.set_page("https://example.com", Reply(500, {"success": False, "code": "SCRAPE_ALL_ENGINES_FAILED",
                                                     "error": "All scraping engines failed"}))
    assert doctor_check_named(run, "firecrawl") == {
        "name": "firecrawl", "ok": False, "code": web.EXIT_UNREACHABLE,
        "detail": "test scrape of https://example.com failed: upstream: Firecrawl: All scraping engines failed "
                  "[SCRAPE_ALL_ENGINES_FAILED]",
        "fix": "Firecrawl could not fetch the page at all: can the box reach the internet? the default test page "
               "needs it; try --scrape-url with a page the box reaches"}
    fire.set_page("https://example.com", Reply(200, {"success": True, "data": {
        "markdown": "# 404 Not Found\n", "metadata": {"statusCode": 404, "sourceURL": "https://example.com"}}}))
    page = doctor_check_named(run, "firecrawl")
    assert (page["code"], page["fix"]) == (
        web.EXIT_PARTIAL, "Firecrawl works, but the test page failed: try --scrape-url with another page")
    assert page["detail"].startswith("test scrape of https://example.com failed: target-status: ")
    monkeypatch.setenv("FIRECRAWL_URL", "http://127.0.0.1:9")
    assert doctor_check_named(run, "firecrawl") == {
        "name": "firecrawl", "ok": False, "code": web.EXIT_UNREACHABLE,
        "detail": "nothing answers at 127.0.0.1:9 (refused the connection)",
        "fix": "is FIRECRAWL_URL right, and the service up there?"}


# --- refresh: the report a person reads ---------------------------------------------------------------------

def test_the_refresh_report_shows_what_each_changed_page_lost_then_the_totals():
    quotes = [f"quote number {i} of the page" for i in range(1, 5)]
    numbers = ["1", "2", "3", "4", "5", "6"]
    report = {"pages": [
        {"n": 1, "outcome": "changed", "url": "https://a.org/", "path": "web/a.v2.md", "previous": "md/t/web/a.md",
         "lost": {"quotes": quotes, "numbers": numbers}},
        {"n": 2, "outcome": "changed", "url": "https://b.org/", "path": "web/b.v2.md", "previous": "md/t/web/b.md",
         "lost": {"quotes": [], "numbers": ["7"]}},
        {"n": 3, "outcome": "changed", "url": "https://c.org/", "path": "web/c.v2.md", "previous": "md/t/web/c.md",
         "lost": {"quotes": quotes[:1], "numbers": []}},
        {"n": 4, "outcome": "unchanged", "url": "https://d.org/"}],
        "not_attempted": [f"https://e.org/{i}" for i in range(7)],
        "counts": {"changed": 3, "unchanged": 1}, "lost": {"quotes": 5, "numbers": 7}}
    assert web.render_refresh(report).splitlines() == [
        "changed    [1] web/a.v2.md (was a.md)  https://a.org/",
        "           4 quotes and 6 numbers no longer on the live page: 1, 2, 3, 4, 5",
        '           "quote number 1 of the page"', '           "quote number 2 of the page"',
        '           "quote number 3 of the page"',
        "changed    [2] web/b.v2.md (was b.md)  https://b.org/",
        "           1 number no longer on the live page: 7",
        "changed    [3] web/c.v2.md (was c.md)  https://c.org/",
        "           1 quote no longer on the live page",
        '           "quote number 1 of the page"',
        "unchanged  [4]"] + [f"not attempted  https://e.org/{i}" for i in range(5)] + [
        "not attempted  … and 2 more (--json lists them)",
        "refreshed 4 pages: 3 changed, 1 unchanged · 5 quotes, 7 numbers no longer on the live page"]
    cited = dict(report, synthesis="md/t/x-synthesis.md", pages=[dict(p, cited=True) for p in report["pages"]])
    assert web.render_refresh(cited).splitlines()[-1].startswith("refreshed 4 pages cited by md/t/x-synthesis.md: ")
    cited["pages"][3].pop("cited")   # refresh --all: a page the synthesis does not cite
    assert web.render_refresh(cited).splitlines()[-1].startswith("refreshed 4 pages, 3 cited by md/t/x-synthesis.md: ")


# --- flags: the lines a flag pattern sees ---------------------------------------------------------------------

def test_a_flag_window_ends_just_past_its_lines_each_read_to_at_most_the_longest():
    assert web.lines_end(b"ab\ncd\nef\n", 0, 2) == 6
    assert web.lines_end(b"ab\ncd\nef\ngh\n", 0, 3, longest=4) == 9
    assert web.lines_end(b"\nab\n", 0, 1) == 1                       # an empty first line is a line
    assert web.lines_end(b"x" * 10 + b"\n", 0, 1, longest=4) == 4     # a line longer than that is cut
    assert web.lines_end(b"ab", 0, 1, longest=4) == 4


def test_a_saved_pages_header_reads_none_as_missing(md_root):
    pages = dict(PAGES, **{"web/none.md": PAGES["web/reef.md"].replace("> relevance: r", "> relevance: (none)")})
    on_disk = web.SourceLookup(str(topic_on_disk(md_root, pages)))
    assert on_disk.header("web/none.md")["source"] == "https://reef.example/"
    assert "relevance" not in on_disk.header("web/none.md")


# --- the checkpoint summary Claude shows the user as is ---------------------------------------------------------

SAVED = [{"n": 1, "title": "Reef survey", "words": 12500, "url": "https://a.org/x", "note": "done",
          "flags": ["short", "reader-instructions"], "instructions": [(5, 6)]},
         {"n": 2, "words": 800, "url": "https://b.org/y", "note": "needed", "earlier": True},
         {"n": 3, "title": "Census", "words": 300, "url": "https://c.org/z"}]


def test_the_checkpoint_summary_of_a_run_lists_each_page_with_its_note_flags_and_run():
    answer = {"run": "r1", "round": 3, "budget": {"saved": 3, "max": 3}, "saved": SAVED, "path": "md/t/web/_manifest.md",
              "failed": [{"kind": "timeout", "retry": True, "url": "https://d.org/", "error": "no answer in 60 s"}]}
    facts = {"run": {"options": {"max_rounds": 2}, "forced": [], "requests": {"search": 5, "queries": 4, "scrape": 4}},
             "dropped_now": 2, "saved": SAVED, "refreshed": None}
    assert web.render_checkpoint("t", answer, facts, "/nowhere/_notes.md").splitlines() == [
        "t · run r1 · round 3, after the run's 2 rounds · 3 of 3 pages saved (budget spent)",
        "saved:",
        "  [1] Reef survey — 12,500 words — note — flags: short, reader-instructions at L5–6",
        "      https://a.org/x",
        "  [2] (no title) — 800 words — needs a note — saved in an earlier run",
        "      https://b.org/y",
        "  [3] Census — 300 words",
        "      https://c.org/z",
        "failed:",
        "  timeout (may retry)  https://d.org/ — no answer in 60 s",
        "dropped by the source scope in this run: 2 hits (see the manifest)",
        f"to read: 13,600 words ≈ {round(13600 * web.TOKENS_PER_WORD):,} tokens · requests: 5 search requests for 4 "
        "queries (pages 2–5 when needed), 4 scrapes",
        "wrote md/t/web/_manifest.md · notes: /nowhere/_notes.md (not written yet)"]
    first = dict(answer, round=2, budget={"saved": 1, "max": 3})
    assert web.render_checkpoint("t", first, facts, "n").splitlines()[0] == "t · run r1 · round 2 of 2 · 1 of 3 pages saved"


def test_the_checkpoint_summary_without_a_run_counts_the_saved_pages():
    answer = {"saved": [], "failed": [], "path": "md/t/web/_manifest.md", "notes": "md/t/web/_notes.md"}
    assert web.render_checkpoint("t", answer, {"run": None, "dropped_now": 0, "saved": [], "refreshed": None},
                                 "n").splitlines() == [
        "t · 0 saved pages (no run started with web.py init)", "saved: none", "to read: 0 words ≈ 0 tokens",
        "wrote md/t/web/_manifest.md · notes: md/t/web/_notes.md"]


# --- outline: headings and comments -----------------------------------------------------------------------------

def atx(lines, i, code):
    return web.atx_is_heading(lines, i, web.ATX_HEADING.match(lines[i]), code)


def test_the_last_of_a_run_of_comment_lines_is_no_heading_either():
    assert atx(["# set the path", "# then run it", ""], 1, False) is False
    assert atx(["# set the path", "", "# then run it", ""], 2, False) is True


def test_a_comment_in_code_is_judged_by_the_next_paragraph_only():
    lines = ["$ ls", "", "# list files", "", "x = 1", "",
             "This paragraph is plain prose that runs on for a while, as the text of a page does, with words."]
    assert atx(lines, 2, True) is False
    assert atx(lines[:2] + lines[2:4] + lines[6:], 2, True) is True


def test_a_lone_hard_break_after_a_heading_continues_it_only_when_text_follows():
    assert web.heading_goes_on(["## Title  ", "  ", ""], 1) is False
    assert web.heading_goes_on(["## Title  ", "  ", "more of the title"], 1) is True


# --- search: where this round's picks go --------------------------------------------------------------------------

def test_search_names_the_picks_file_of_this_runs_round_and_none_outside_a_run(run, searx, md_root):
    assert "picks" not in run("search", "reef recovery", "--topic", "t", "--json").json
    run("init", "first goal", "--topic", "t")
    run("init", "second goal", "--topic", "t")
    answer = run("search", "reef recovery", "--topic", "t", "--json").json
    assert answer["picks"] == web.display_path(str(md_root / "t" / "web" / "_picks-2.1.json"))


def test_an_outline_fits_its_room_to_the_character_dropping_the_deepest_levels_first():
    rows = [(1, "aaaa"), (2, "bb"), (1, "cc")]                       # 5 + 3 + 3 characters with their newlines
    assert web.fit_outline(rows, 11, 0) == (["aaaa", "bb", "cc"], 2)
    assert web.fit_outline(rows, 10, 0) == (["aaaa", "cc"], 1)
    flat = [(1, "aaaa"), (1, "bbbb"), (1, "cccc")]
    assert web.fit_outline(flat, 11, 1) == (["aaaa", "bbbb"], 1)    # room 10 for the rows, the notice's 1 apart
    assert web.fit_outline(flat, 10, 1) == (["aaaa"], 1)
    assert web.fit_outline([], 10, 1) == ([], 0)


def test_a_quote_resting_on_its_paragraphs_citation_names_that_page_by_its_path(tmp_path):
    check = checker(tmp_path, PAGES, EVENTS)
    result = check(synthesis('- Reefs are surveyed each year [2](web/census.md). Divers wrote that "the reef had '
                             'recovered within two seasons".'))
    assert ("quote-not-found", 'quote "the reef had recovered within two seasons" is on [1] (web/reef.md), not '
            "web/census.md") in [(k, m) for _, k, m in result.errors]


def test_a_reply_is_taken_for_json_by_its_first_bracket_past_any_leading_space():
    assert web.Response(200, {}, b'  \n {"results": []}').looks_like_json()
    assert web.Response(200, {}, b'[{"url": "https://a.org/"}]').looks_like_json()
    assert not web.Response(200, {}, b"<html>{}</html>").looks_like_json()


def test_a_quote_in_a_later_sentence_of_a_paragraph_is_placed_in_its_own_clause(tmp_path):
    check = checker(tmp_path, PAGES, EVENTS)
    quoted = 'Divers wrote that "the reef had recovered within two seasons"'
    first = "Reefs along the outer shelf are watched closely by divers, by satellites and by the fishing crews."
    placed = check(synthesis(f"- {first} {quoted} {REEF1}, while the city counted 48 500 "
                             f"residents [2](web/census.md)."))
    assert [k for _, k, _ in placed.warnings if k == "quote-partly-cited"] == []
    unplaced = check(synthesis(f"- {first} {quoted} {REEF1} [2](web/census.md), while the city "
                               f"grew [2](web/census.md)."))
    assert [k for _, k, _ in unplaced.warnings if k == "quote-partly-cited"] == ["quote-partly-cited"]


def test_the_manifests_note_cell_links_a_note_and_says_when_one_is_needed():
    assert web.note_cell({"note": "done", "name": "a-org-x.md"}) == "[note](notes/a-org-x.md)"
    assert web.note_cell({"note": "needed", "name": "b.md"}) == "needed"
    assert web.note_cell({"note": None, "name": "c.md"}) == "–"


# --- cite-check: block quotes, paragraph by paragraph ---------------------------------------------------------

def test_each_paragraph_of_a_block_quote_is_one_quote_whatever_its_lines_marks_and_references(tmp_path):
    check = checker(tmp_path, PAGES, EVENTS)
    result = check(synthesis(f"- Surveys counted 1,240 colonies {REEF1}.", extra=(
        f"\n> the reef had recovered within two\nseasons after the 2016 bleaching {REEF1}\n>\n"   # a lazy line
        f"> - Surveys counted 1,240 colonies in 2019[^1] {REEF1}\n>\n"
        "> Water temperatures peaked at 31.5 °C\n> in March\n"
        f"> — Dr. Maria Lopez {REEF1}\n"
        f"> Coral cover rose by 26.5% between the surveys\n>\n> {REEF1}\n\n[^1]: a note.\n")))
    quoted = [[" ".join(q.split()) for _, _, q in s.quotes] for s in result.sentences if s.quotes]
    assert quoted == [["the reef had recovered within two seasons after the 2016 bleaching"],
                      ["Surveys counted 1,240 colonies in 2019"], ["Water temperatures peaked at 31.5 °C in March"],
                      ["Coral cover rose by 26.5% between the surveys"]]
    assert result.errors == [] and result.coverage["quotes"]["verified"] == 4


def test_export_cited_in_follows_a_reference_style_citation_to_its_page(run, md_root):
    topic = topic_on_disk(md_root)
    path = topic / "reefs-synthesis.md"
    path.write_text(synthesis("- Surveys counted 1,240 colonies [1][reef].", answer="Reefs recover [1][reef].",
                              extra="\n[reef]: web/reef.md\n"), encoding="utf-8")
    r = run("export", "--topic", "reefs", "--format", "ris", "--cited-in", path)
    assert r.code == 0 and "UR  - https://reef.example/" in r.out and "census.example" not in r.out


def test_a_pages_first_version_is_its_own_name_and_later_ones_are_numbered():
    assert [web.version_name("x.md", v) for v in (1, 2, 10)] == ["x.md", "x.v2.md", "x.v10.md"]
    assert web.version_name("x.v3.md", 1) == "x.md"


def test_doctor_names_every_address_a_proxy_would_intercept(run, doctor_box, monkeypatch):
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    proxy = doctor_check_named(run, "proxy")
    assert proxy["detail"] == (f"{os.environ['SEARXNG_URL']} via http://127.0.0.1:9; "
                               f"{os.environ['FIRECRAWL_URL']} via http://127.0.0.1:9")


def test_a_failed_pick_is_recorded_with_its_pick_number(run, fire, md_root):
    fire.set_articles("https://a.org/ok")
    fire.set_page("https://b.org/gone", Reply(404, {"success": False, "error": "Not Found"}))
    run("scrape", "https://a.org/ok", "https://b.org/gone", "--topic", "t", "--workers", "1")
    events = {e["url"]: e for e in read_ledger(md_root / "t" / "web" / "_ledger.jsonl") if e["command"] == "scrape"}
    assert (events["https://a.org/ok"]["pick"], events["https://b.org/gone"]["pick"]) == (1, 2)
    assert events["https://b.org/gone"]["outcome"] == "failed"


def test_pages_past_the_budget_say_whether_force_put_them_there():
    assert web.render_past_budget(5, {"budget": 3, "forced": ["a.md"]}) == " (2 past the budget, --force)"
    assert web.render_past_budget(5, {"budget": 3}) == " (2 past the budget)"
    assert web.render_past_budget(3, {"budget": 3}) == ""


def test_the_manifest_labels_each_search_with_its_run_and_round_and_a_search_before_any_run_with_0(run, searx, md_root):
    run("search", "tides", "--topic", "t")
    run("init", "first goal", "--topic", "t")
    run("search", "tides", "--topic", "t")
    run("init", "second goal", "--topic", "t")
    run("search", "tides", "--topic", "t")
    run("manifest", "--topic", "t")
    rows = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8").split("| # | round | query |")[1].splitlines()
    assert [row.split(" | ")[:3] for row in rows[2:5]] == [["| 1", "0.1", "tides"], ["| 2", "1.1", "tides"],
                                                           ["| 3", "2.1", "tides"]]


def test_the_checkpoint_lists_each_pages_flags_one_by_one_and_whether_its_note_is_needed_or_done(run, fire, md_root):
    from standins import article_markdown, page_body
    run("init", "g", "--topic", "t")
    fire.set_page("https://a.org/long", Reply(200, page_body("https://a.org/long", article_markdown("reefs", 1200))))
    fire.set_page("https://b.org/short", Reply(200, page_body("https://b.org/short", "# Short\n\n<!-- hidden -->\n" +
                                                              " ".join(["word"] * 60) + "\n")))
    run("scrape", "https://a.org/long", "https://b.org/short", "--topic", "t")
    saved = run("manifest", "--topic", "t", "--json").json["saved"]
    assert [(s["url"], s.get("note"), s.get("flags")) for s in saved] == [
        ("https://a.org/long", "needed", None), ("https://b.org/short", None, ["html-comments:1", "short"])]
    notes = md_root / "t" / "web" / "notes"
    notes.mkdir()
    (notes / "a-org-long.md").write_text("Contributes: x\n", encoding="utf-8")
    assert run("manifest", "--topic", "t", "--json").json["saved"][0]["note"] == "done"


def test_a_page_scraped_by_hand_then_deleted_is_a_candidate_row_with_its_title(run, fire, md_root):
    from test_history import article
    run("init", "g", "--topic", "t")
    fire.set_page("https://a.org/stars", article("https://a.org/stars", "Stars eat mussels.", title="Star diets"))
    run("scrape", "https://a.org/stars", "--topic", "t")
    (md_root / "t" / "web" / "a-org-stars.md").unlink()
    run("manifest", "--topic", "t")
    row = next(line for line in (md_root / "t" / "web" / "_manifest.md").read_text("utf-8").splitlines()
               if "saved, file deleted" in line)
    assert "Star diets" in row


def test_the_candidates_of_a_finished_run_are_ranked_hits_first_and_say_no_retry(run, searx, fire, md_root):
    from standins import captured_reply, make_hit
    run("init", "g", "--topic", "t", "--max-sources", "1")
    searx.set_results("stars", [make_hit("https://a.org/x", "Stars A"), make_hit("https://b.org/y", "Stars B")])
    run("search", "stars", "--topic", "t")
    fire.set_page("https://a.org/x", captured_reply("timeout.json"))
    fire.set_page("https://c.org/z", Reply(404, {"success": False, "error": "Not Found"}))
    run("scrape", "https://a.org/x", "https://c.org/z", "--topic", "t")      # the run's one round, scraped
    run("manifest", "--topic", "t")
    table = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8").split("| round | rank | title | found by | "
                                                                            "outcome |\n| --- | --- | --- | --- | --- |\n")[1]
    assert table.splitlines()[:3] == [
        "| 1 | 1 | [Stars A](https://a.org/x) | 1 | failed: timeout: Firecrawl: Scrape timed out |",
        "| 1 | 2 | [Stars B](https://b.org/y) | 1 | not picked |",
        "| 1 | – | [https://c.org/z](https://c.org/z) | – | failed: http: Firecrawl answered HTTP 404: Not Found |"]


def test_the_manifests_first_line_names_the_notes_every_picks_file_and_what_there_is_to_read(run, md_root):
    run("init", "g", "--topic", "t")
    manifest = md_root / "t" / "web" / "_manifest.md"
    run("manifest", "--topic", "t")
    assert "\nNotes: none yet (_notes.md) · picks: none · the topic: 0 pages saved, 0 words ≈ 0 tokens to read\n" in \
        manifest.read_text("utf-8")
    for name in ("_picks-1.1.json", "_picks-1.2.json", "_notes.md"):
        (md_root / "t" / "web" / name).write_text("[]", encoding="utf-8")
    (md_root / "t" / "web" / "data.json").write_text("{}", encoding="utf-8")   # not a picks file
    run("manifest", "--topic", "t")
    assert ("\nNotes: [_notes.md](_notes.md) · picks: [_picks-1.1.json](_picks-1.1.json), "
            "[_picks-1.2.json](_picks-1.2.json) · the topic: 0 pages saved") in manifest.read_text("utf-8")


def test_a_topic_used_by_hand_shows_one_runs_row_saying_so(run, searx, md_root):
    run("search", "tides", "--topic", "t")
    run("manifest", "--topic", "t")
    runs = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8").split("## Runs\n")[1].splitlines()
    assert runs[3] == "| – | – | searches and scrapes made by hand | – | – | – | – | – |"


def test_the_manifest_shows_a_run_scoped_by_exclude_site_alone_every_query_that_found_a_hit_and_no_synthesis(
        run, searx, md_root):
    from standins import make_hit
    run_id = run("init", "g", "--topic", "t", "--exclude-site", "c.org", "--json").json["run"]
    for query in ("stars", "sea stars"):
        searx.set_results(query, [make_hit("https://a.org/x", "Stars A")])
    run("search", "stars", "sea stars", "--topic", "t")
    run("manifest", "--topic", "t")
    text = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8")
    assert "\n| 1 | 1 | [Stars A](https://a.org/x) | 1, 2 | not picked |\n" in text
    assert f"\n## Source scope\n\n- run {run_id}: --exclude-site c.org\n" in text
    both = run("init", "g", "--topic", "t", "--site", "a.org", "--exclude-site", "c.org", "--json").json["run"]
    run("manifest", "--topic", "t")
    assert f"\n- run {both}: --site a.org --exclude-site c.org\n" in (md_root / "t" / "web" / "_manifest.md").read_text(
        "utf-8")
    assert text.endswith("newest first, the latest of each goal in bold.\n\n- none yet\n<!-- web.py:end -->\n")


def test_the_manifest_counts_what_each_policy_line_did_and_shows_its_note(run, searx, md_root):
    from standins import make_hit
    (md_root / "t" / "sources.txt").write_text("block c.org  a content farm\nprefer a.org\n", encoding="utf-8")
    searx.set_results("stars", [make_hit(u) for u in ("https://a.org/x", "https://c.org/y", "https://d.org/z")])
    run("search", "stars", "--topic", "t", "--exclude-site", "d.org")   # a drop the policy did not make
    run("manifest", "--topic", "t")
    scope = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8").split("## Source scope\n\n")[1].splitlines()
    assert scope[:2] == ["- `sources.txt` line 1: block c.org — a content farm (dropped 1 hit)",
                         "- `sources.txt` line 2: prefer a.org (1 hit marked)"]


def test_a_manifest_that_cannot_be_written_names_the_file_and_why(run, md_root, monkeypatch):
    run("init", "g", "--topic", "t")

    def disk_full(path, *chunks):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(web, "atomic_write", disk_full)
    r = run("manifest", "--topic", "t")
    assert r.code == web.EXIT_CONFIG and r.err.startswith(
        f"web.py: storage: cannot write {web.display_path(md_root / 't' / 'web' / '_manifest.md')} "
        "(No space left on device)")


def test_the_checkpoint_of_a_run_lists_its_own_failures_not_an_earlier_runs(run, fire, md_root):
    run("init", "first goal", "--topic", "t")
    fire.set_page("https://a.org/gone", Reply(404, {"success": False, "error": "Not Found"}))
    run("scrape", "https://a.org/gone", "--topic", "t")
    assert [e["url"] for e in run("manifest", "--topic", "t", "--json").json["failed"]] == ["https://a.org/gone"]
    run("init", "second goal", "--topic", "t")
    assert run("manifest", "--topic", "t", "--json").json["failed"] == []
