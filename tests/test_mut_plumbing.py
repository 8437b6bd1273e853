"""The plumbing under scrape and search, pinned where a mutation run found it loose: a typed URL whose
first part is a path before a port is not "fixed" into a URL of another host, a message quotes the
start of a body (its first 800 bytes of text at most), a --from file larger than 64 MiB is refused, and a page
put in a topic's web/ folder by hand still gets its citation number in a search; the waits between retries
(0.25–0.5 s, then doubling, as README says), a rate limit's status in search --json and its kind in
scrape --json, and how far into a mislabelled answer web.py looks for JSON; SearXNG's other wrong answers (a 403
with or without a type, a 404, a body that is not JSON, a refusal whose JSON is a list) as one line each with
their status in search --json; a goal's file name at exactly 80 characters; and long Chinese pages whose
characters cross byte 65,536, the end of the part read for a page's header."""

import json
import random
import shutil

import pytest

import web
from standins import Reply, make_hit, page_body


# --- URLs typed by hand ---------------------------------------------------------------------------

def test_a_path_before_a_port_is_not_given_the_add_https_advice(run):
    # "https://X/example.org:8080/tides" would send the scrape to a host named X: the text is named as
    # what it is taken for instead, the scheme before the first colon
    for url, scheme in (("X/example.org:8080/tides", "x/example.org"), ("XX/tides.org:80", "xx/tides.org")):
        r = run("scrape", url)
        assert (r.code, r.out, r.err) == (web.EXIT_USAGE, "", f"web.py: usage: {url}: not http/https ({scheme})\n")


# --- the start of a body, quoted in a message --------------------------------------------------------

def test_a_message_quotes_only_what_the_first_800_bytes_of_a_body_hold(run, searx):
    # 200 characters are quoted, read from at most 4 bytes a character: text after 800 bytes of
    # mostly blank page is not waited for
    searx.fail_next(Reply(404, "<p>Tides" + " " * 850 + "pools</p>", content_type="text/html"))
    r = run("search", "tide pools")
    assert (r.code, r.out) == (web.EXIT_UNEXPECTED, "")
    assert r.err == (f"web.py: SearXNG: {searx.url}/search answered HTTP 404: '<p>Tides' — something else "
                     f"answers there: check SEARXNG_URL\n")


def test_a_body_that_starts_with_blank_lines_is_quoted_from_its_first_text(run, searx):
    # a page of 900 blank bytes and then an error is not "an empty body"
    searx.fail_next(Reply(404, "\n" * 900 + "<p>No such engine</p>", content_type="text/html"))
    r = run("search", "tide pools")
    assert r.err == (f"web.py: SearXNG: {searx.url}/search answered HTTP 404: '<p>No such engine</p>' — something "
                     f"else answers there: check SEARXNG_URL\n")


# --- --from -----------------------------------------------------------------------------------------

def test_a_from_file_over_64_mib_is_refused_and_nothing_is_scraped(run, fire, tmp_path):
    fire.set_articles("https://a.org/1")
    big = tmp_path / "picks.json"
    big.write_bytes(b"[" + b" " * (64 * 1024 * 1024 - 1) + b'"https://a.org/1"]')   # one candidate, 18 bytes past
    for source, stdin in ((big, None), ("-", big.read_text("utf-8"))):   # a file, and the same on stdin
        r = run("scrape", "--from", source, "--topic", "t", stdin=stdin)
        assert (r.code, r.out) == (web.EXIT_USAGE, "")
        assert r.err == (f"web.py: usage: --from {source} is larger than 64 MiB — give at most 1000 candidates\n")
    assert fire.scraped_urls() == [] and not (tmp_path / "md" / "t" / "web").exists()


def test_a_from_file_of_exactly_64_mib_is_read_whole(run, fire, tmp_path):
    fire.set_articles("https://a.org/1")
    whole = tmp_path / "picks.json"
    whole.write_bytes(b"[" + b" " * (64 * 1024 * 1024 - 19) + b'"https://a.org/1"]')
    r = run("scrape", "--from", whole, "--topic", "t")
    assert (r.code, fire.scraped_urls()) == (web.EXIT_OK, ["https://a.org/1"])


# --- citation numbers in a search ---------------------------------------------------------------------

def test_a_page_put_in_web_by_hand_is_shown_saved_with_its_number(run, searx, fire, md_root, tmp_path):
    fire.set_articles("https://a.org/1")
    assert run("scrape", "https://a.org/1", "--out", tmp_path / "a.md").code == 0   # saved outside any topic
    (md_root / "t" / "web").mkdir()
    shutil.move(tmp_path / "a.md", md_root / "t" / "web" / "a-org-1.md")           # the ledger never saw it
    searx.set_results("tide pools", [make_hit("https://a.org/1", "Page A"), make_hit("https://b.org/2", "Page B")])
    r = run("search", "tide pools", "--topic", "t")
    assert (r.code, r.err) == (web.EXIT_OK, "")
    assert r.out.splitlines() == [
        " 1. [saved 1] https://a.org/1",   # saved by hand: the topic's, not new to it
        " 2. Page B", "    https://b.org/2", "    Snippet for https://b.org/2",
        "-- 2 hits, 1 new to the topic; seen ones on one line (--all shows them in full)"]


# --- retries -------------------------------------------------------------------------------------------

def waits_between_retries(run, fire, monkeypatch, luck):
    """The seconds web.py waits before each of 3 retries of a failing Firecrawl, with the jitter's draw at
    `luck` (0: the shortest wait, 1: the longest), at the shipped backoff (the suite runs with 0.01 s)."""
    waits = []
    monkeypatch.setattr(web, "BACKOFF_BASE", 0.5)
    monkeypatch.setattr(web.time, "sleep", waits.append)   # waited, not slept
    monkeypatch.setattr(random, "uniform", lambda low, high: low + (high - low) * luck)   # as random.uniform draws
    monkeypatch.setenv("WEB_RETRIES", "3")
    fire.requests.clear()
    fire.fail_next(*[Reply(503, "busy", content_type="text/plain")] * 4)
    r = run("scrape", "https://example.org/a")
    assert (r.code, len(fire.requests)) == (web.EXIT_UNREACHABLE, 4)
    return waits


def test_the_waits_between_retries_start_at_a_quarter_to_half_a_second_and_double(run, fire, monkeypatch):
    assert waits_between_retries(run, fire, monkeypatch, 0.0) == [0.25, 0.5, 1.0]
    assert waits_between_retries(run, fire, monkeypatch, 1.0) == [0.5, 1.0, 2.0]


# --- rate limits, as the JSON answers show them ------------------------------------------------------------

def test_search_json_gives_a_query_the_limiter_refused_its_status_429(run, searx):
    searx.fail_next(*[Reply(429, "Too Many Requests", content_type="text/plain")] * 3)
    r = run("search", "tide pools", "--json")
    line = ("SearXNG: its limiter refused the request (429 Too Many Requests, 3 attempts) — let this client through: "
            "add its address to pass_ip in limiter.toml, or set server.limiter: false on a private instance")
    assert (r.code, r.err) == (web.EXIT_CONFIG, f"web.py: {line}\n")
    assert r.json["errors"] == [{"q": 1, "status": 429, "error": line}]


def test_scrape_json_gives_a_page_firecrawl_rate_limited_the_kind_http(run, fire, tmp_path):
    fire.fail_next(*[Reply(429, {"success": False, "error": "slow down"})] * 3)
    r = run("scrape", "https://example.org/a", "--out", tmp_path / "a.md", "--json")
    line = "Firecrawl: rate-limited the request (429, 3 attempts) — lower WEB_WORKERS or wait a minute"
    assert (r.code, r.err) == (web.EXIT_UNREACHABLE, f"web.py: {line}\n")
    assert r.json["failed"] == [{"url": "https://example.org/a", "kind": "http", "error": line}]
    assert not (tmp_path / "a.md").exists()


# --- an answer under the wrong content type ------------------------------------------------------------

def test_an_answer_sent_as_html_is_read_as_json_when_its_first_64_bytes_show_json(run, searx):
    answer = json.dumps({"query": "tide pools", "results": [make_hit("https://a.org/1", "Page A")]})
    searx.fail_next(Reply(200, " " * 63 + answer, content_type="text/html"))
    r = run("search", "tide pools")
    assert (r.code, r.err, r.out.splitlines()[0]) == (0, "", " 1. Page A")
    searx.fail_next(Reply(200, " " * 64 + answer, content_type="text/html"))   # blank all through the 64
    r = run("search", "tide pools")
    assert (r.code, r.out) == (web.EXIT_CONFIG, "")
    assert r.err == ("web.py: SearXNG: answered 200 text/html to format=json — enable json under search.formats in "
                     "its settings.yml (or a proxy/login page is in front of it)\n")


# --- SearXNG's wrong answers: one line each, and the HTTP status in search --json -----------------------------

JSON_OFF_FIX = "enable json under search.formats in its settings.yml (or a proxy/login page is in front of it)"
NOT_JSON_FIX = "is something else answering on that port (a proxy or a login page)?"


def failed_search(run, searx, reply):
    """search --json for one query SearXNG answers with `reply`: (exit code, stderr, the answer's errors)."""
    searx.fail_next(reply)
    r = run("search", "tide pools", "--json")
    assert r.json["ok"] is False and r.json["results"] == []
    return r.code, r.err, r.json["errors"]


@pytest.mark.parametrize("content_type, shown", [("text/html", "text/html"), (None, "without a type")])
def test_a_403_names_its_content_type_and_search_json_gives_its_status(run, searx, content_type, shown):
    line = f"SearXNG: answered 403 {shown} to format=json — {JSON_OFF_FIX}"
    assert failed_search(run, searx, Reply(403, "<html>Forbidden</html>", content_type=content_type)) == (
        web.EXIT_CONFIG, f"web.py: {line}\n", [{"q": 1, "status": 403, "error": line}])


def test_a_404_from_something_else_on_the_port_keeps_its_status_in_search_json(run, searx):
    line = (f"SearXNG: {searx.url}/search answered HTTP 404: 'Not Found' — something else answers there: "
            f"check SEARXNG_URL")
    assert failed_search(run, searx, Reply(404, "Not Found", content_type="text/plain")) == (
        web.EXIT_UNEXPECTED, f"web.py: {line}\n", [{"q": 1, "status": 404, "error": line}])


@pytest.mark.parametrize("status, content_type", [(200, "application/json"), (400, "text/html")])
def test_an_answer_that_is_not_json_is_named_as_searxngs_with_its_start(run, searx, status, content_type):
    # a body labelled JSON that is not, and a refusal (400) written as a page: neither is "json is off"
    line = f"SearXNG: sent something that is not JSON (HTTP {status}): 'Bad Request, try later' — {NOT_JSON_FIX}"
    assert failed_search(run, searx, Reply(status, "Bad Request, try later", content_type=content_type)) == (
        web.EXIT_UNEXPECTED, f"web.py: {line}\n", [{"q": 1, "status": None, "error": line}])


def test_an_answer_that_is_not_json_is_quoted_from_its_first_text_however_many_blank_lines_lead_it(run, searx):
    # a login page a proxy pads with blank lines: the message quotes its text, not the padding
    line = f"SearXNG: sent something that is not JSON (HTTP 200): '<html>Sign in to the proxy' — {NOT_JSON_FIX}"
    reply = Reply(200, "\n" * 1000 + "<html>Sign in\n    to the proxy", content_type="application/json")
    assert failed_search(run, searx, reply) == (web.EXIT_UNEXPECTED, f"web.py: {line}\n",
                                                [{"q": 1, "status": None, "error": line}])


def test_a_refusal_whose_json_is_not_an_object_is_quoted_as_sent(run, searx):
    line = ("SearXNG: refused the query 'tide pools': [\"Invalid value for parameter pageno\"] — check the query "
            "and the --categories/--language/--time-range values")
    assert failed_search(run, searx, Reply(400, ["Invalid value for parameter pageno"])) == (
        web.EXIT_USAGE, f"web.py: {line}\n", [{"q": 1, "status": 400, "error": line}])


# --- a goal's file name ------------------------------------------------------------------------------------

@pytest.mark.parametrize("goal, stem", [
    # 80 characters as a slug: every word is kept, the small ones too
    ("how do the tide pools of the north pacific coast alter when the winter gales hit",
     "how-do-the-tide-pools-of-the-north-pacific-coast-alter-when-the-winter-gales-hit"),
    # 81: the small words go first
    ("how do the tide pools of the north pacific coast change when the winter gales end",
     "how-tide-pools-north-pacific-coast-change-when-winter-gales-end"),
])
def test_a_goal_that_fits_80_characters_names_its_synthesis_with_every_word(run, md_root, goal, stem):
    r = run("init", goal, "--topic", "t", "--json")
    assert (r.code, r.err) == (web.EXIT_OK, "")
    assert r.json["synthesis"] == f"{md_root}/t/{stem}-{web.now_utc():%Y-%m-%d}-synthesis.md"


# --- long pages in a script of several bytes a character ------------------------------------------------------

ZH = "珊瑚礁在两个季节内恢复了"   # 12 characters of 3 bytes each


def test_long_chinese_pages_are_saved_and_known_again_wherever_a_character_crosses_byte_65536(
        run, fire, md_root):
    # three pages whose headers differ by a byte: in two of them a character crosses byte 65,536 of the file
    urls = ["https://zh.example/1", "https://zh.example/12", "https://zh.example/123"]
    for n, url in enumerate(urls, 1):
        fire.set_page(url, page_body(url, f"# 珊瑚礁调查第{n}号\n\n{ZH * 2000}\n", title="珊瑚礁"))
    first = run("scrape", *urls, "--topic", "t")
    again = run("scrape", *urls, "--topic", "t")
    assert (first.code, first.err, again.code) == (web.EXIT_OK, "", web.EXIT_OK)
    assert first.out.splitlines() == [
        f"saved    [{n}] {md_root}/t/web/{page}.md  (24010 words, long: page-reader)  {url}"
        for n, page, url in zip((1, 2, 3), ("zh-example-1", "zh-example-12", "zh-example-123"), urls)]
    assert again.out.splitlines() == [f"skipped  already saved: {md_root}/t/web/{page}.md  {url}"
                                      for page, url in zip(("zh-example-1", "zh-example-12", "zh-example-123"), urls)]


# --- a page's header --------------------------------------------------------------------------------------

def test_a_page_with_a_huge_title_keeps_its_header_whole_and_is_known_as_the_short_page_it_is(run, fire, md_root):
    # a page's title is its own: 77,000 characters of it would push the header's later fields past the
    # 64 KiB read back, and the header would count as page text
    url = "https://a.org/huge-title"
    fire.set_page(url, page_body(url, "# Tide pools\n\n" + " ".join(f"word{i}" for i in range(40)) + "\n",
                                 title="Tide " * 15400, siteName="Coastal Notes"))
    assert run("scrape", url, "--topic", "t").code == 0
    text = (md_root / "t" / "web" / "a-org-huge-title.md").read_text("utf-8")
    header = dict(line[2:].rstrip().split(": ", 1) for line in text.split(web.NOTE_LINE)[0].splitlines() if line)
    assert header["title"] == ("Tide " * 200)[:999] + "…" and header["site"] == "Coastal Notes"
    page = md_root / "t" / "web" / "a-org-huge-title.md"
    assert run("outline", page).out.splitlines()[0] == (
        f"{web.display_path(page)}: 13 lines, 43 words · main text: lines 11–13 (header 1–9)")
