"""Small behaviours a user relies on that no broader test pinned (found by mutation testing): edges of
parsing, of the HTTP layer, of the manifest and of the command line."""

import gzip
import json
import os
import sys
import time
import tracemalloc
import zlib

import pytest
from standins import Reply, captured_reply, make_hit, page_body, article_markdown

import web
from conftest import read_ledger


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


@pytest.mark.parametrize("body", [b"\x1f\x8b\x08\x00 not a gzip stream", zlib.compress(b'{"results": []}')],
                         ids=["corrupt-gzip", "zlib-labelled-gzip"])
def test_a_body_labelled_gzip_that_is_not_is_one_line_not_a_crash(run, searx, body):
    searx.fail_next(Reply(200, body, headers={"Content-Encoding": "gzip"}))
    r = run("search", "q")
    assert (r.code, r.err) == (web.EXIT_UNEXPECTED, "web.py: SearXNG: sent a body labelled gzip that is not gzip — "
                                                    "is something else answering on that port (a proxy)?\n")
    assert len(searx.requests) == 1


def test_an_emoji_cut_in_two_in_a_hit_or_a_page_is_a_replacement_character_not_a_crash(run, searx, fire, md_root):
    # JSON may carry half a surrogate pair ("\\ud83c"): a snippet or page cut inside an emoji
    searx.set_results("tides", [make_hit("https://a.org/1", "Tide \ud83c pools", "Low \udc00 tide")])
    r = run("search", "tides")
    assert r.code == 0 and r.out.splitlines()[:3] == [" 1. Tide \ufffd pools", "    https://a.org/1",
                                                      "    Low \ufffd tide"]
    fire.set_page("https://a.org/1", page_body("https://a.org/1", article_markdown() + "\n\nWaves \ud83c.",
                                               title="Tides \ud83c"))
    assert run("scrape", "https://a.org/1", "--topic", "t").code == 0
    text = (md_root / "t" / "web" / "a-org-1.md").read_text("utf-8")
    assert "> title: Tides \ufffd  " in text and text.endswith("Waves \ufffd.\n")


def test_half_an_emoji_escaped_in_capitals_is_a_replacement_character_too(run, searx):
    body = b'{"query": "tides", "results": [{"url": "https://a.org/1", "title": "Tide \\uD83C pools", "content": "x"}]}'
    searx.fail_next(Reply(200, body))
    r = run("search", "tides")
    assert r.code == 0 and r.out.splitlines()[0] == " 1. Tide \ufffd pools"


def test_a_gzip_bomb_inflates_no_more_than_the_cap_at_a_time(run, searx):
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)   # 64 MB of spaces in about 64 KB: one read from the socket
    body = bomb.compress(b" " * (64 * 1024 * 1024)) + bomb.flush()
    searx.fail_next(Reply(200, body, headers={"Content-Encoding": "gzip"}))
    tracemalloc.start()
    try:
        r = run("search", "q")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (r.code, r.err) == (web.EXIT_UNEXPECTED, "web.py: SearXNG: response too large (over 5 MB) — the page is "
                                                    "bigger than web.py accepts\n")
    assert peak < 4 * web.SEARCH_CAP, peak   # a few caps, never the 64 MB of the whole bomb


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


def test_an_html_route_404_and_a_key_firecrawl_wants_are_configuration(run, fire, monkeypatch, tmp_path):
    monkeypatch.setenv("FIRECRAWL_URL", fire.url + "/v0")
    r = run("scrape", "https://example.org/a", "--json")
    assert r.code == web.EXIT_USAGE    # --json needs --topic or --out: checked before any request
    r = run("scrape", "https://example.org/a")
    assert r.code == web.EXIT_CONFIG and r.err == (f"web.py: Firecrawl: at {fire.url}/v0 has no route POST /v1/scrape "
                                                   f"(HTML 404) — check FIRECRAWL_URL: is this "
                                                   f"Firecrawl's API?\n")
    monkeypatch.setenv("FIRECRAWL_URL", fire.url)
    fire.fail_next(Reply(402, {"success": False, "error": "Payment required"}))
    r = run("scrape", "https://example.org/a", "--out", tmp_path / "a.md", "--json")
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
    share, passage = web.passage_in(words, *web.page_tokens(body))
    assert share == 1.0 and passage.startswith("…") and passage.endswith("…")
    assert passage.index("omega") + len("omega") + 200 >= len(passage) - 1
    assert web.passage_in(words, *web.page_tokens("nothing relevant here at all.")) == (0.0, "")


def test_the_evidence_passage_ends_at_its_sentence():
    tokens = web.page_tokens("The reef recovered. Then more text.")
    share, passage = web.passage_in(web.content_words("reef recovered"), *tokens)
    assert (share, passage) == (1.0, "The reef recovered.")


# --- the command line --------------------------------------------------------------------------------

def test_urls_and_a_from_file_are_scraped_together_in_that_order(run, fire, tmp_path):
    fire.set_articles("https://a.org/1", "https://b.org/2")
    picks = tmp_path / "picks.json"
    picks.write_text(json.dumps([{"url": "https://b.org/2"}]), encoding="utf-8")
    r = run("scrape", "https://a.org/1", "--from", picks, "--topic", "t", "--workers", "1", "--json")
    assert [(e["n"], e["url"]) for e in r.json["saved"]] == [(1, "https://a.org/1"), (2, "https://b.org/2")]


def test_init_records_the_run_and_deep_means_three_rounds(run, md_root):
    answer = run("init", "the goal", "--topic", "t", "--deep", "--json").json
    assert answer["options"]["max_rounds"] == 3 and answer["limit"] == 6
    event = read_ledger(md_root / "t" / "web" / "_ledger.jsonl")[0]
    assert (event["command"], event["round"], event["synthesis"], event["goal"]) == ("init", 0, f"the-goal-{web.now_utc():%Y-%m-%d}-synthesis.md",
                                                                                     "the goal")
    assert run("init", "g", "--topic", "t").out.splitlines()[1] == "  budget: 12 pages in 1 round; round 1 of 1: --limit 12"


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


def test_doctor_says_when_the_key_was_accepted(run, searx, fire, doctor_box, monkeypatch):
    monkeypatch.setenv("FIRECRAWL_API_KEY", "k")
    assert run("doctor", "--json").json["checks"][2]["detail"] == \
        f"{fire.url}: scraped https://example.com (262 words); key accepted"


def test_hidden_and_underscore_files_are_not_pages(run, fire, md_root):
    fire.set_articles("https://a.org/1")
    run("scrape", "https://a.org/1", "--topic", "t")
    for name in (".draft.md", "_notes.md"):
        (md_root / "t" / "web" / name).write_text("> source: https://x.org/\n> NOTE: x\n\nx", encoding="utf-8")
    assert [s["url"] for s in run("manifest", "--topic", "t", "--json").json["saved"]] == ["https://a.org/1"]


# --- export details ---------------------------------------------------------------------------------

def test_export_keys_of_a_topic_without_latin_letters_and_raw_utf8(run, fire, md_root):
    fire.set_page("https://ko.org/a", page_body("https://ko.org/a", article_markdown("악마"), title="악마의 위계"))
    (md_root / "악마").mkdir()
    run("scrape", "https://ko.org/a", "--topic", "악마")
    csl = run("export", "--topic", "악마", "--format", "csl-json").out
    assert '"id": "web-ec41d6-1"' in csl and "악마의 위계" in csl and "\\u" not in csl   # the hash of the topic's name
    assert (web.export_key("해양", 1), web.export_key("생물", 1)) == ("web-78916a-1", "web-453ebe-1")   # never one key
    assert (web.export_key("AI/Agents 2", 3), web.export_key("ai-agents-2", 3)) == ("ai-agents-2-b2d917-3", "ai-agents-2-3")


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
    (md_root / "t" / "sources.txt").write_bytes(b"block caf\xe9.org\n")
    r = run("search", "q", "--topic", "t")
    assert r.code == web.EXIT_USAGE and r.err.startswith(f"web.py: usage: cannot read "
                                                         f"{web.display_path(md_root / 't' / 'sources.txt')} (")
    assert r.err.endswith("— save it as UTF-8 text\n") and searx.requests == []


def test_a_policy_note_may_start_with_a_dash(tmp_path):
    (tmp_path / "sources.txt").write_text("block a.org — spam\nprefer b.org : good\nprefer c.org - fine\n", "utf-8")
    assert [r[3] for r in web.read_policy(str(tmp_path))] == ["spam", "good", "fine"]


def test_init_for_a_person_lists_the_budget_paths_and_corpus(run, md_root):
    (md_root / "t" / "b-notes.md").write_text("x", encoding="utf-8")
    (md_root / "t" / "a-log.md").write_text("x", encoding="utf-8")
    (md_root / "t" / "old-synthesis.md").write_text("x", encoding="utf-8")
    (md_root / "t" / "old-evidence.md").write_text("x", encoding="utf-8")
    out = run("init", "why", "is", "the", "sea", "salty", "--topic", "t", "--max-sources", "5", "--deep",
              "--max-rounds", "2", "--with-corpus").out.splitlines()
    shown = web.display_path(md_root / "t")
    assert out[0].startswith("run ") and out[0].endswith(" started: why is the sea salty")
    assert out[1:] == ["  budget: 5 pages in up to 2 rounds (--deep); round 1 of 2: --limit 3", f"  pages: {shown}/web/",
                       f"  synthesis: {shown}/why-is-the-sea-salty-{web.now_utc():%Y-%m-%d}-synthesis.md",
                       "  the topic holds 0 pages and 1 synthesis file",
                       f"  corpus C1: {shown}/a-log.md · 1 word", f"  corpus C2: {shown}/b-notes.md · 1 word"]


# --- a second pass of mutation testing: what no test pinned yet ------------------------------------

def test_a_lowercase_letter_before_a_full_stop_ends_the_sentence_but_an_initial_does_not():
    assert web.sentence_spans("See the cell a. Then more.", []) == [(0, 16), (16, 26)]
    assert web.sentence_spans("Ask J. Smith now. Then more.", []) == [(0, 18), (18, 28)]


def test_a_table_rule_without_a_header_row_keeps_the_paragraph_above_it():
    blocks, _ = web.outline("# T\n\nA paragraph line\n|---|---|\n| a | b |\n")
    assert [(b.kind, b.line, b.text) for b in blocks] == [("paragraph", 3, "A paragraph line"),
                                                          ("row", 5, "| a | b |")]


def test_a_synthesis_may_start_with_a_blank_line():
    blocks, _ = web.outline("\n# T\n\nText [1](web/a.md).\n")
    assert [(b.kind, b.line, b.text) for b in blocks] == [("paragraph", 4, "Text [1](web/a.md).")]


def test_titles_keep_comparisons_that_are_not_tags():
    assert web.clean_text("2 < 3 and 5 > 4: <b>bold</b> &lt;tag&gt; <!-- c -->done") == \
        ("2 < 3 and 5 > 4: bold <tag> done", 0)


def test_a_cut_snippet_drops_the_space_before_its_ellipsis():
    assert web.clean_text("a" * 8 + " bcdef", 10) == ("a" * 8 + "…", 0)


def test_an_empty_quote_pair_does_not_hide_the_quote_after_it():
    assert web.find_quotes('say "" then "a b"') == [(12, 17, "a b")]


def test_a_connect_timeout_is_reported_as_a_timeout(monkeypatch):
    import socket
    import urllib.error

    class Opener:
        def open(self, request, timeout):
            raise urllib.error.URLError(socket.timeout("timed out"))
    monkeypatch.setattr(web, "_get_opener", lambda: Opener())
    with pytest.raises(web._Transient) as err:
        web._request_once("GET", "http://127.0.0.1:9/", None, {}, 1, 100)
    assert err.value.timed_out and err.value.what == "did not answer in time"


def test_a_body_that_stalls_is_a_timeout(run, searx, monkeypatch):
    monkeypatch.setenv("WEB_TIMEOUT", "0.3")
    monkeypatch.setenv("WEB_RETRIES", "0")
    searx.fail_next(Reply(200, b'{"query": "q", "results": []}', trickle=1.0))
    r = run("search", "q")
    assert r.code == web.EXIT_UNREACHABLE and r.err == (
        f"web.py: SearXNG: at {searx.url} did not answer within 0.3 s (1 attempt) — is the box overloaded? check it, "
        f"or raise WEB_TIMEOUT\n")


def test_box_failures_carry_their_kind_in_the_batch(run, fire, monkeypatch):
    monkeypatch.setenv("WEB_RETRIES", "0")
    monkeypatch.setenv("WEB_TIMEOUT", "0.3")
    fire.fail_next(Reply(200, b"{}", delay=1.0))
    r = run("scrape", "https://a.org/1", "--topic", "t", "--json")
    assert r.code == web.EXIT_UNREACHABLE and [f["kind"] for f in r.json["failed"]] == ["timeout"]
    fire.fail_next(Reply(503, b"{}"))
    r = run("scrape", "https://a.org/2", "--topic", "t", "--json")
    assert r.code == web.EXIT_UNREACHABLE and r.json["failed"] == [
        {"url": "https://a.org/2", "kind": "http", "error": f"Firecrawl: at {fire.url} answered HTTP 503 (1 attempt) — "
                                                           f"the service is failing: check its logs on the webtools box"}]


def test_searxng_limiter_429_is_configuration(run, searx, monkeypatch):
    monkeypatch.setenv("WEB_RETRIES", "0")
    searx.fail_next(Reply(429, b"Too Many Requests", content_type="text/plain"))
    r = run("search", "q")
    assert r.code == web.EXIT_CONFIG and r.err == (
        "web.py: SearXNG: its limiter refused the request (429 Too Many Requests, 1 attempt) — let this client "
        "through: add its address to pass_ip in limiter.toml, or set server.limiter: false on a private instance\n")


def test_a_page_firecrawl_answers_without_json_fails_as_http(run, fire):
    fire.set_page("https://a.org/1", Reply(200, b"<html>login</html>", content_type="text/html"))
    r = run("scrape", "https://a.org/1", "--topic", "t", "--json")
    assert r.json["failed"][0]["kind"] == "http" and r.json["failed"][0]["error"] == (
        "Firecrawl: sent something that is not JSON (HTTP 200): '<html>login</html>' — is something else answering "
        "on that port (a proxy or a login page)?")


@pytest.mark.parametrize("reply, kind, error", [
    (Reply(408, {"success": False, "code": "SCRAPE_TIMEOUT", "error": "Scrape timed out"}), "timeout",
     "Firecrawl: Scrape timed out"),
    (Reply(200, {"success": False, "code": "SCRAPE_TIMEOUT", "error": "Scrape timed out"}), "timeout",
     "Firecrawl: Scrape timed out"),
    (Reply(404, {"success": False, "error": "Not found"}), "http", "Firecrawl answered HTTP 404: Not found"),
])
def test_firecrawl_verdicts_on_a_page(run, fire, reply, kind, error):
    fire.set_page("https://a.org/1", reply)
    r = run("scrape", "https://a.org/1", "--topic", "t", "--json")
    assert r.code == 1 and [(f["kind"], f["error"]) for f in r.json["failed"]] == [(kind, error)]
    assert len(fire.requests) == 1   # a verdict is not retried


def test_a_refused_key_names_the_variable(run, fire, monkeypatch):
    monkeypatch.setenv("FIRECRAWL_API_KEY", "wrong")
    fire.fail_next(Reply(401, {"success": False, "error": "Unauthorized"}))
    r = run("scrape", "https://a.org/1")
    assert r.code == web.EXIT_CONFIG and r.err == ("web.py: Firecrawl: refused FIRECRAWL_API_KEY (HTTP 401) — set the "
                                                   "key the box expects in FIRECRAWL_API_KEY\n")


def test_a_500_with_a_broken_json_body_is_retried(run, fire, monkeypatch):
    monkeypatch.setenv("WEB_RETRIES", "1")
    monkeypatch.setattr(web, "backoff_delay", lambda attempt, retry_after: 0)
    fire.set_articles("https://a.org/1")
    fire.fail_next(Reply(500, b"{broken"))
    assert run("scrape", "https://a.org/1", "--topic", "t").code == 0 and len(fire.requests) == 2


def test_requests_say_what_they_accept(run, searx):
    run("search", "q")
    headers = searx.requests[0]["headers"]
    assert headers["Accept"] == "text/html, application/json;q=0.9" and headers["Accept-Encoding"] == "gzip"


def test_searxng_answering_html_with_200_is_not_json(run, searx):
    searx.fail_next(Reply(200, b"<html>hi</html>", content_type="text/html"))
    r = run("search", "q")
    assert r.code == web.EXIT_CONFIG and r.err.startswith("web.py: SearXNG: ")


def test_no_results_with_unresponsive_engines_names_them(run, searx):
    searx.set_results("q", [], unresponsive=[["brave", "timeout"], ["lonely"]])
    r = run("search", "q")
    assert r.code == web.EXIT_UNREACHABLE and r.err == ("web.py: SearXNG: no results for 'q'; engines unresponsive: "
                                                        "brave (timeout), lonely — the search engines behind SearXNG "
                                                        "are failing: check its logs\n")


def test_engines_of_a_hit_found_by_several_queries_are_merged():
    hit = {"key": "k", "url": "https://a.org/", "engines": ["x"]}
    fused = web.fuse_hits([{"query": "a", "hits": [dict(hit, position=2)]},
                           {"query": "b", "hits": [dict(hit, engines=["y", "x"], position=1)]}])
    assert (fused[0]["engines"], fused[0]["queries"], fused[0]["position"]) == (["x", "y"], ["a", "b"], 1)


def test_a_bad_site_is_named_with_its_option(run, searx):
    r = run("search", "q", "--site", "not a domain")
    assert r.code == web.EXIT_USAGE and r.err == ("web.py: usage: --site: 'not a domain' is not a domain — write a "
                                                  "host name such as example.org (its subdomains are included)\n")
    assert searx.requests == []


def test_one_site_is_one_request_and_the_query_keeps_its_own_wording(run, searx):
    searx.set_results("q site:a.org", [make_hit("https://a.org/1")])
    r = run("search", "q", "--site", "a.org", "--json")
    assert set(searx.queries_seen()) == {"q site:a.org"} and r.json["queries"] == {"1": "q"}


def test_a_topic_that_does_not_exist_when_there_are_none(run, md_root):
    (md_root / "t").rmdir()
    r = run("status", "--topic", "t")
    assert r.code == web.EXIT_USAGE and r.err == (f"web.py: usage: there is no topic 't' in "
                                                  f"{web.display_path(md_root)} — a new topic starts with web.py "
                                                  f"init \"goal\" --topic t\n")


def test_status_of_a_one_round_run_with_a_scope_a_policy_and_a_corpus(run, md_root):
    (md_root / "t" / "field-log.md").write_text("Tide pools were counted in May.\n", encoding="utf-8")
    run("init", "g", "--topic", "t", "--site", "a.org", "--exclude-site", "b.org", "--with-corpus")
    (md_root / "t" / "sources.txt").write_text("block c.org\n", encoding="utf-8")
    answer = run("status", "--topic", "t", "--json").json
    log = web.display_path(md_root / "t" / "field-log.md")
    assert (answer["corpus"], answer["site"], answer["exclude_site"]) == (
        [{"label": "C1", "path": log, "words": 6, "parts": [[1, 1]]}], ["a.org"], ["b.org"])
    lines = run("status", "--topic", "t").out.splitlines()
    assert lines[1] == "round 1 of 1 · 0 of 12 pages saved · next --limit 12"
    assert lines[3:6] == ["scope: --site a.org --exclude-site b.org",
                          f"source policy: {web.display_path(md_root / 't' / 'sources.txt')}",
                          f"corpus C1: {log} · 6 words"]


def test_the_manifest_shows_a_run_scoped_by_site_alone(run, searx, md_root):
    run("init", "g", "--topic", "t", "--site", "a.org")
    run_id = read_ledger(md_root / "t" / "web" / "_ledger.jsonl")[0]["run"]
    run("manifest", "--topic", "t")
    text = (md_root / "t" / "web" / "_manifest.md").read_text(encoding="utf-8")
    assert f"## Source scope\n\n- run {run_id}: --site a.org\n" in text


def test_manifest_cells_escape_what_would_break_the_table_or_render_as_html(run, searx, md_root):
    searx.set_results("q", [make_hit("https://a.org/1", title="a | b <script>x</script>")])
    run("search", "q", "--topic", "t")
    run("manifest", "--topic", "t")
    text = (md_root / "t" / "web" / "_manifest.md").read_text(encoding="utf-8")
    assert "[a \\| b x](https://a.org/1)" in text
    assert web.cell("<b> | x") == "&lt;b&gt; \\| x" and web.cell("") == "–"


def test_the_manifest_lists_a_mirror_skipped_as_a_duplicate_and_a_failed_hand_scrape(run, searx, fire, md_root):
    for url in ("https://a.org/1", "https://mirror.org/1"):
        fire.set_page(url, page_body(url, article_markdown(), title="A page"))
    r = run("scrape", "https://a.org/1", "https://mirror.org/1", "https://a.org/1?utm_source=x", "--topic", "t",
            "--workers", "1", "--json")
    assert [(s["reason"], s["url"]) for s in r.json["skipped"]] == [("duplicate", "https://mirror.org/1"),
                                                                    ("duplicate candidate", "https://a.org/1?utm_source=x")]
    fire.set_page("https://dead.org/", Reply(404, {"success": False, "error": "Not found"}))
    run("scrape", "https://dead.org/", "--topic", "t")
    run("manifest", "--topic", "t")
    text = (md_root / "t" / "web" / "_manifest.md").read_text(encoding="utf-8")
    rows = text.split("## Other candidates")[1].split("\n## ")[0]
    assert "| 0 | – | [https://mirror.org/1](https://mirror.org/1) | – | skipped: duplicate |" in rows
    assert ("| 0 | – | [https://dead.org/](https://dead.org/) | – | failed (may retry): http: Firecrawl answered HTTP "
            "404: Not found |") in rows


def test_a_saved_page_the_user_deleted_is_listed_as_such_in_the_manifest(run, fire, md_root):
    fire.set_articles("https://a.org/1")
    saved = run("scrape", "https://a.org/1", "--topic", "t", "--json").json["saved"][0]["path"]
    os.remove(md_root / "t" / "web" / os.path.basename(saved))
    run("manifest", "--topic", "t")
    rows = (md_root / "t" / "web" / "_manifest.md").read_text(encoding="utf-8").split("## Other candidates")[1]
    assert "(https://a.org/1) | – | saved, file deleted |" in rows.split("\n## ")[0]


def test_a_manifest_that_cannot_be_written_is_a_clear_error(run, fire, md_root):
    run("scrape", "https://a.org/1", "--topic", "t")
    manifest = md_root / "t" / "web" / "_manifest.md"
    manifest.mkdir()
    r = run("manifest", "--topic", "t")
    assert r.code == web.EXIT_USAGE and r.err == (f"web.py: usage: cannot read {web.display_path(manifest)} (Is a "
                                                  f"directory) — save it as UTF-8 text, or move it away and run "
                                                  f"manifest again\n")
    manifest.rmdir()
    manifest.write_bytes(b"caf\xe9 notes\n")
    r = run("manifest", "--topic", "t")
    assert r.code == web.EXIT_USAGE and "can't decode byte 0xe9" in r.err and manifest.read_bytes() == b"caf\xe9 notes\n"


def test_picks_may_be_plain_urls_and_take_the_query_given_on_the_command_line(run, fire, md_root, tmp_path):
    fire.set_articles("https://a.org/1", "https://b.org/2")
    picks = tmp_path / "picks.json"
    picks.write_text(json.dumps(["https://a.org/1", {"url": "https://b.org/2", "query": "own"}]), encoding="utf-8")
    run("scrape", "--from", picks, "--query", "given", "--relevance", "why", "--topic", "t")
    headers = [web.read_header(p) for p in sorted((md_root / "t" / "web").glob("*-org-*.md"))]
    assert [(h["source"], h["query"], h["relevance"]) for h in headers] == [
        ("https://a.org/1", "given", "why"), ("https://b.org/2", "own", "why")]


def test_a_saved_page_without_a_relevance_says_none(run, fire, md_root):
    fire.set_articles("https://a.org/1")
    run("scrape", "https://a.org/1", "--topic", "t")
    page = next((md_root / "t" / "web").glob("a-org-1.md")).read_text(encoding="utf-8")
    assert "> relevance: (none)  \n" in page


def test_firecrawl_metadata_that_shapes_the_header(run, fire, md_root):
    body = page_body("https://a.org/1", article_markdown(), title=["First title", "second"])
    body["data"]["metadata"]["url"] = "https://a.org/moved"
    fire.set_page("https://a.org/1", Reply(200, body))
    path = run("scrape", "https://a.org/1", "--topic", "t", "--json").json["saved"][0]["path"]
    header = web.read_header(md_root / "t" / "web" / os.path.basename(path))
    assert (header["title"], header["redirected"]) == ("First title", "https://a.org/moved")


@pytest.mark.parametrize("title, status, words, failure", [
    ("Just a moment...", 200, 2000, ("blocked", "bot challenge or interstitial page (Just a moment...)")),
    ("A page", 400, 2000, ("target-status", "the site answered 400")),
    ("A page", 399, 2000, None),
])
def test_what_makes_a_scraped_page_a_failure(run, fire, title, status, words, failure):
    fire.set_page("https://a.org/1", page_body("https://a.org/1", article_markdown(words=words), title=title,
                                               status=status))
    r = run("scrape", "https://a.org/1", "--topic", "t", "--json")
    assert [(f["kind"], f["error"]) for f in r.json.get("failed", [])] == ([failure] if failure else [])


def test_no_break_and_ideographic_spaces_separate_words():
    assert web.count_words("a\u00a0b\u3000c".encode("utf-8")) == 3


def test_output_goes_out_as_utf8_whatever_the_console_encoding(monkeypatch):
    import io
    raw = io.BytesIO()
    console = io.TextIOWrapper(raw, encoding="cp1252")
    monkeypatch.setattr(sys, "stdout", console)
    web.write_out("산호초 — 珊瑚\n")
    console.flush()
    assert raw.getvalue() == "산호초 — 珊瑚\n".encode("utf-8")


@pytest.mark.parametrize("url, slug", [
    ("https://a.org/docs/X", "a-org-docs-x"), ("https://a.org/docs/x/", "a-org-docs-x"), ("https://你好/", "xn-6qq79v"),
])
def test_url_slugs_keep_what_names_the_page(url, slug):
    assert web.url_slug(url) == slug


def test_url_keys_only_drop_the_final_slash():
    assert web.url_key("https://a.org/X/") == web.url_key("https://a.org/X") != web.url_key("https://a.org/")


@pytest.mark.parametrize("goal, slug", [
    ("abc", "abc"), ("ab", "ab-" + __import__("hashlib").sha256(b"ab").hexdigest()[:8]),
    ("a" * 50 + " " + "b" * 50, "a" * 50),
])
def test_goal_slugs_at_their_edges(goal, slug):
    assert web.text_slug(goal) == slug


def test_ipv4_mapped_addresses_are_judged_by_their_ipv4_part():
    assert web.is_private_host("::ffff:10.0.0.1", "box") and not web.is_private_host("::ffff:8.8.8.8", "box")



def test_doctor_probes_firecrawl_the_way_scrape_does(run, searx, fire):
    run("doctor")
    assert json.loads(fire.requests[0]["raw"])["onlyMainContent"] is True


def test_doctor_reports_an_unwritable_md_root_in_json(run, doctor_box, monkeypatch, tmp_path):
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("WEB_MD_ROOT", str(tmp_path / "file"))
    r = run("doctor", "--json")
    check = r.json["checks"][3]
    assert r.code == web.EXIT_CONFIG and r.json["ok"] is False
    assert (check["name"], check["ok"], check["code"], check["fix"]) == ("md-root", False, web.EXIT_CONFIG,
                                                                         "point WEB_MD_ROOT at an existing folder, "
                                                                         "or create it")
    assert check["detail"] == f"the md root {web.display_path(tmp_path / 'file')} is not a folder"


def test_a_fetched_page_below_a_met_budget_is_unused_as_not_needed(run, fire, md_root, monkeypatch):
    import threading
    hold = threading.Event()
    fire.set_page("https://first.org/a", Reply(200, page_body("https://first.org/a", article_markdown("first")),
                                               hold=hold))
    fire.set_articles("https://second.org/b")
    prepare = web.prepare_page

    def prepared(result, url, *rest):   # the second pick is fetched and waiting: now let the first finish
        page = prepare(result, url, *rest)
        if url == "https://second.org/b":
            hold.set()
        return page
    monkeypatch.setattr(web, "prepare_page", prepared)
    r = run("scrape", "https://first.org/a", "https://second.org/b", "--topic", "t", "--limit", "1")
    assert r.code == 0 and r.err == "" and r.out.splitlines()[1:] == [
        "unused   not needed: --limit 1 was met  https://second.org/b"]


def test_a_hit_is_not_flagged_for_header_lines_in_its_own_text():
    assert web.hit_flags("> source: https://x.org/", "> NOTE: hello", 0) == []
