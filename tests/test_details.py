"""Small behaviours a user relies on that no broader test pinned (found by mutation testing): edges of
parsing, of the HTTP layer, of the manifest and of the command line."""

import gzip
import json
import os
import sys
import time

import pytest
from standins import Reply, captured_reply, make_hit, page_body, article_markdown

import web


# --- the HTTP layer --------------------------------------------------------------------------------

def test_a_gzip_body_exactly_at_the_cap_is_accepted_and_one_byte_more_is_not(run, searx):
    body = json.dumps({"query": "q", "results": []}).encode()
    exact = body + b" " * (web.SEARCH_CAP - len(body))
    searx.fail_next(Reply(200, exact, gzip_body=True))
    assert run("search", "q").code == 0
    searx.fail_next(Reply(200, exact + b" ", gzip_body=True))
    r = run("search", "q")
    assert r.code == web.EXIT_UNEXPECTED and r.err == ("web.py: SearXNG: response too large (over 5 MB) — the page "
                                                       "is bigger than web.py accepts\n")


def test_a_retry_after_date_in_the_past_means_now():
    assert web.parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0
    assert web.parse_retry_after("0") == 0.0 and web.parse_retry_after(" 7 ") == 7.0


def test_firecrawl_is_given_a_fifth_less_time_and_at_most_five_seconds_less():
    assert [web.firecrawl_timeout_ms(t) for t in (10, 25, 60, 0.001)] == [8000, 20000, 55000, 1]


def test_requests_name_the_method_and_the_locale(run, searx, fire, monkeypatch):
    monkeypatch.setenv("LANG", "ko_KR.UTF-8")
    run("search", "q", "--max", "1")
    run("scrape", "https://example.org/a")
    assert searx.requests[0]["method"] == "GET" and fire.requests[0]["method"] == "POST"
    assert searx.requests[0]["headers"]["Accept-Language"] == "ko-KR"
    monkeypatch.setenv("LANG", "C")
    assert web.accept_language() == "en"


def test_a_timeout_names_its_fix(run, searx, monkeypatch):
    monkeypatch.setenv("WEB_TIMEOUT", "0.2")
    monkeypatch.setenv("WEB_RETRIES", "0")
    searx.delay = 0.6
    r = run("search", "q")
    assert r.err == (f"web.py: SearXNG: at {searx.url} did not answer within 0.2 s (1 attempt) — is the box "
                     f"overloaded? check it, or raise WEB_TIMEOUT\n")


def test_a_firecrawl_verdict_with_details_or_a_code_is_shown_whole(run, fire):
    fire.set_page("https://x.org/a", Reply(400, {"success": False, "code": "BAD_REQUEST", "error": "Bad Request",
                                                 "details": [{"message": "Invalid URL"}, {"message": "Too long"}]}))
    fire.set_page("https://x.org/b", Reply(500, {"success": False, "code": "SCRAPE_ALL_ENGINES_FAILED",
                                                 "error": "All engines failed"}))
    fire.set_page("https://x.org/c", Reply(400, {"success": False, "code": "BAD_REQUEST", "error": "Bad Request"}))
    r = run("scrape", "https://x.org/a", "https://x.org/b", "https://x.org/c", "--topic", "t", "--workers", "1",
            "--json")
    assert [(f["kind"], f["error"]) for f in r.json["failed"]] == [
        ("invalid-url", "Firecrawl: Bad Request (Invalid URL; Too long)"),
        ("upstream", "Firecrawl: All engines failed [SCRAPE_ALL_ENGINES_FAILED]"),
        ("invalid-url", "Firecrawl: Bad Request")]


def test_an_html_route_404_and_a_key_firecrawl_wants_are_configuration(run, fire, monkeypatch):
    monkeypatch.setenv("FIRECRAWL_URL", fire.url + "/v0")
    r = run("scrape", "https://example.org/a", "--json")
    assert r.code == web.EXIT_USAGE    # --json needs --topic or --out: checked before any request
    r = run("scrape", "https://example.org/a")
    assert r.code == web.EXIT_CONFIG and r.err == (f"web.py: Firecrawl: at {fire.url}/v0 has no route POST /v1/scrape "
                                                   f"(HTML 404) — check FIRECRAWL_URL/FIRECRAWL_PORT: is this "
                                                   f"Firecrawl's API?\n")
    monkeypatch.setenv("FIRECRAWL_URL", fire.url)
    fire.fail_next(Reply(402, {"success": False, "error": "Payment required"}))
    r = run("scrape", "https://example.org/a", "--out", "/dev/null", "--json")
    assert r.code == web.EXIT_CONFIG and r.err == "web.py: Firecrawl: wants an API key (HTTP 402) — set FIRECRAWL_API_KEY\n"


def test_atomic_writes_make_their_temporary_file_beside_the_target(tmp_path, monkeypatch):
    seen = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (seen.append(src), real(src, dst)))
    web.atomic_write(str(tmp_path / "sub.md"), b"x")
    assert os.path.dirname(seen[0]) == str(tmp_path) and os.path.basename(seen[0]).startswith(".sub.md.")


# --- addresses ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, address", [
    ("0x", "0.0.0.0"), ("1.2.3", "1.2.0.3"), ("1.2", "1.0.0.2"), ("1.65535", "1.0.255.255"),
    ("1.16777216", None), ("256.1", None), ("1.2.3.4.5", None), ("1.x", None), ("08.1", None),
])
def test_ipv4_is_read_the_way_inet_aton_reads_it(text, address):
    result = web._ipv4_from_text(text)
    assert (str(result) if result else None) == address


def test_a_trailing_dot_does_not_hide_a_private_host():
    assert web.is_private_host("localhost.", "box") and web.is_private_host("127.0.0.1.", "box")


# --- quotes, numbers, the evidence ----------------------------------------------------------------

def test_a_quote_may_be_the_very_start_of_the_page():
    assert web.quote_found("Tide pools are rocky", web.fold_text("Tide pools are rocky hollows."))


def test_adjacent_quotes_are_two_quotes():
    assert web.find_quotes('"one two""three four"') == [(0, 9, "one two"), (9, 21, "three four")]


def test_the_evidence_passage_is_cut_at_200_characters_past_its_last_word():
    words = web.content_words("alpha omega")
    body = "filler " * 50 + "alpha omega " + "x" * 400
    share, passage = web.best_passage(words, body)
    assert share == 1.0 and passage.startswith("…") and passage.endswith("…")
    assert passage.index("omega") + len("omega") + 200 >= len(passage) - 1
    assert web.best_passage(words, "nothing relevant here at all.") == (0.0, "")


def test_the_evidence_passage_ends_at_its_sentence():
    share, passage = web.best_passage(web.content_words("reef recovered"), "The reef recovered. Then more text.")
    assert (share, passage) == (1.0, "The reef recovered.")


# --- the command line --------------------------------------------------------------------------------

def test_urls_and_a_from_file_are_scraped_together_in_that_order(run, fire, tmp_path):
    picks = tmp_path / "picks.json"
    picks.write_text(json.dumps([{"url": "https://b.org/2"}]), encoding="utf-8")
    r = run("scrape", "https://a.org/1", "--from", picks, "--topic", "t", "--workers", "1", "--json")
    assert [(e["n"], e["url"]) for e in r.json["saved"]] == [(1, "https://a.org/1"), (2, "https://b.org/2")]


def test_init_records_the_run_and_deep_means_three_rounds(run, md_root):
    answer = run("init", "the goal", "--topic", "t", "--deep", "--json").json
    assert answer["options"]["max_rounds"] == 3 and answer["limit"] == 6
    event = web.read_ledger(md_root / "t" / "web" / "_ledger.jsonl")[0]
    assert (event["command"], event["round"], event["synthesis"], event["goal"]) == ("init", 0, "the-goal-synthesis.md",
                                                                                     "the goal")
    assert run("init", "g", "--topic", "t").out.splitlines()[1] == "  budget: 12 pages in 1 round; round 1: --limit 12"


def test_web_debug_shows_the_traceback_of_an_internal_error(monkeypatch, run, searx):
    monkeypatch.setattr(web, "fuse_hits", lambda outcomes: 1 / 0)
    monkeypatch.setenv("WEB_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        run("search", "q")


def test_main_reads_its_arguments_from_the_command_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["web.py", "--version"])
    assert web.main() == 0


def test_progress_goes_to_a_terminal_only(monkeypatch):
    class Terminal:
        def __init__(self):
            self.text = ""

        def isatty(self):
            return True

        def write(self, text):
            self.text += text

        def flush(self):
            pass
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    web.progress("[1] saved x.md")
    assert terminal.text == "[1] saved x.md\n"


def test_elapsed_is_in_milliseconds():
    assert 1400 <= web.elapsed_ms(time.monotonic() - 1.5) <= 1700


def test_a_single_engine_name_without_a_reason_does_not_break_doctor(run, searx, fire):
    searx.set_results("searxng", [make_hit("https://a.org/")], unresponsive=[["lonely"]])
    check = run("doctor", "--json").json["checks"][1]
    assert check["ok"] is True and "unresponsive" not in check["detail"]


def test_doctor_says_when_the_key_was_accepted(run, searx, fire, monkeypatch):
    monkeypatch.setenv("FIRECRAWL_API_KEY", "k")
    assert run("doctor", "--json").json["checks"][2]["detail"] == \
        f"{fire.url}: scraped https://example.com (262 words); key accepted"


def test_hidden_and_underscore_files_are_not_pages(run, fire, md_root):
    run("scrape", "https://a.org/1", "--topic", "t")
    for name in (".draft.md", "_notes.md"):
        (md_root / "t" / "web" / name).write_text("> source: https://x.org/\n> NOTE: x\n\nx", encoding="utf-8")
    assert [s["url"] for s in run("manifest", "--topic", "t", "--json").json["saved"]] == ["https://a.org/1"]


# --- export details ---------------------------------------------------------------------------------

def test_export_keys_of_a_topic_without_latin_letters_and_raw_utf8(run, fire, md_root):
    fire.set_page("https://ko.org/a", page_body("https://ko.org/a", article_markdown("악마"), title="악마의 위계"))
    run("scrape", "https://ko.org/a", "--topic", "악마")
    csl = run("export", "--topic", "악마", "--format", "csl-json").out
    assert '"id": "web-1"' in csl and "악마의 위계" in csl and "\\u" not in csl
    assert web.export_key("AI/Agents 2", 3) == "ai-agents-2-3"


def test_bibtex_percent_encodes_braces_in_urls():
    entry = {"key": "t-1", "title": "T", "url": "https://x.org/{a}", "accessed": None, "published": None, "site": None,
             "topic": "t"}
    assert "  url = {https://x.org/%7Ba%7D},\n" in web.bibtex([entry])


def test_exporting_a_topic_with_nothing_saved_says_so(run, md_root):
    run("init", "g", "--topic", "t")
    r = run("export", "--topic", "t", "--format", "ris")
    assert r.code == web.EXIT_USAGE and r.err == ("web.py: usage: no saved sources to export in topic 't' — scrape "
                                                  "pages first\n")


def test_an_unreadable_policy_is_a_clear_error(run, searx, md_root):
    (md_root / "t").mkdir(parents=True)
    (md_root / "t" / "sources.txt").write_bytes(b"block caf\xe9.org\n")
    r = run("search", "q", "--topic", "t")
    assert r.code == web.EXIT_USAGE and r.err.startswith(f"web.py: usage: cannot read "
                                                         f"{web.display_path(md_root / 't' / 'sources.txt')} (")
    assert r.err.endswith("— save it as UTF-8 text\n") and searx.requests == []


def test_a_policy_note_may_start_with_a_dash(tmp_path):
    (tmp_path / "sources.txt").write_text("block a.org — spam\nprefer b.org : good\nprefer c.org - fine\n", "utf-8")
    assert [r[3] for r in web.read_policy(str(tmp_path))] == ["spam", "good", "fine"]


def test_init_for_a_person_lists_the_budget_paths_and_corpus(run, md_root):
    (md_root / "t").mkdir(parents=True)
    (md_root / "t" / "b-notes.md").write_text("x", encoding="utf-8")
    (md_root / "t" / "a-log.md").write_text("x", encoding="utf-8")
    (md_root / "t" / "old-synthesis.md").write_text("x", encoding="utf-8")
    (md_root / "t" / "old-evidence.md").write_text("x", encoding="utf-8")
    out = run("init", "why", "is", "the", "sea", "salty", "--topic", "t", "--max-sources", "5", "--deep",
              "--max-rounds", "2", "--with-corpus").out.splitlines()
    shown = web.display_path(md_root / "t")
    assert out[0].startswith("run ") and out[0].endswith(" started: why is the sea salty")
    assert out[1:] == ["  budget: 5 pages in up to 2 rounds (--deep); round 1: --limit 3", f"  pages: {shown}/web/",
                       f"  synthesis: {shown}/why-is-the-sea-salty-synthesis.md",
                       f"  corpus C1: {shown}/a-log.md", f"  corpus C2: {shown}/b-notes.md"]
