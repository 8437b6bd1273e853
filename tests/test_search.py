"""`web.py search` against the SearXNG stand-in."""

import json
from urllib.parse import parse_qs, urlsplit

from standins import Reply, captured_http, make_hit

import web
from conftest import read_ledger


def test_search_json_answers_from_a_real_capture(run, searx):
    r = run("search", "hello world", "--json")
    assert r.code == 0, r
    answer = r.json
    assert answer["schema"] == "web.search/2" and answer["ok"] is True and answer["queries"] == {"1": "hello world"}
    first = answer["results"][0]
    assert first == {"rank": 1, "url": "https://example.com/shared/1", "title": "Shared one about hello world",
                     "snippet": "Engine B: same as A's first result but http:// instead of https://",
                     "engines": ["localjson-a", "localjson-b"], "q": [1]}     # no published date: left out
    only_a = next(h for h in answer["results"] if h["url"] == "https://example.org/a/only-a")
    assert only_a["snippet"] == "Only engine A returns this. It has bold & markup and a newline."
    forum = next(h for h in answer["results"] if "forum/p/101" in h["url"])
    assert forum["published"] == "2024-03-05"
    assert list(answer) == ["schema", "ok", "queries", "results", "elapsed_ms"]   # nothing dropped, no errors


def test_request_carries_the_headers_searxng_limiter_wants(run, searx):
    assert run("search", "hello").code == 0
    headers = searx.requests[0]["headers"]
    assert headers["User-Agent"].startswith("web.py/")
    assert "text/html" in headers["Accept"] and headers["Accept-Language"] and "gzip" in headers["Accept-Encoding"]


def test_queries_are_encoded(run, searx):
    queries = ["악마 위계", "C++ & templates", "#hash tag", "a+b=c"]
    r = run("search", *queries, "--categories", "general", "--language", "ko", "--time-range", "year", "--json")
    assert r.code == 0 and set(r.json["queries"].values()) == set(queries)
    assert set(searx.queries_seen()) == set(queries)
    params = parse_qs(urlsplit(searx.requests[0]["path"]).query)
    assert params["format"] == ["json"] and params["categories"] == ["general"] and params["language"] == ["ko"]
    assert params["time_range"] == ["year"]


def test_korean_query_end_to_end(run, searx):
    from standins import fixture
    korean = fixture("searxng", "korean.json")
    searx.set_results("악마 위계", korean["results"])
    r = run("search", "악마 위계", "--json")
    assert r.code == 0
    raw = r.out
    assert "악마 위계 — Ünïcödé 日本語 title" in raw and "\\u" not in raw   # non-ASCII kept as is
    assert r.json["queries"] == {"1": "악마 위계"} and r.json["results"][0]["q"] == [1]
    human = run("search", "악마 위계")
    assert "악마 위계 — Ünïcödé 日本語 title" in human.out


def test_merge_dedupe_and_fused_order_across_queries(run, searx):
    searx.set_results("q1", [make_hit("https://www.a.org/x/?utm_source=feed"), make_hit("https://b.org/"),
                             make_hit("https://c.org/")])
    searx.set_results("q2", [make_hit("https://d.org/"), make_hit("https://c.org/#top"),
                             make_hit("https://a.org/x")])
    answer = run("search", "q1", "q2", "--json").json
    urls = [h["url"] for h in answer["results"]]
    assert urls == ["https://www.a.org/x/?utm_source=feed", "https://c.org/", "https://d.org/", "https://b.org/"]
    a = answer["results"][0]
    assert answer["queries"] == {"1": "q1", "2": "q2"} and a["q"] == [1, 2] and a["rank"] == 1


def test_rows_without_usable_urls_are_dropped_with_a_reason(run, searx):
    searx.set_results("q", [make_hit(None), make_hit("javascript:alert(1)"), make_hit("mailto:x@y.z"),
                            make_hit("https://ok.org/")])
    answer = run("search", "q", "--json").json
    assert [h["url"] for h in answer["results"]] == ["https://ok.org/"]
    assert answer["dropped"] == [{"url": None, "reason": "no URL"},
                                 {"url": "javascript:alert(1)", "reason": "not http/https (javascript)"},
                                 {"url": "mailto:x@y.z", "reason": "not http/https (mailto)"}]


def _pages(n_pages, per_page, prefix="p"):
    return [[make_hit(f"https://{prefix}.org/{page}/{i}") for i in range(per_page)] for page in range(n_pages)]


def test_paging_fetches_only_the_pages_needed(run, searx):
    searx.set_results("deep", *_pages(7, 10))
    r = run("search", "deep", "--max", "25", "--json")
    answer = r.json
    assert r.code == 0 and r.err == "" and len(answer["results"]) == 25
    pagenos = [parse_qs(urlsplit(r["path"]).query).get("pageno", ["1"])[0] for r in searx.requests]
    assert pagenos == ["1", "2", "3"]


def test_paging_stops_at_five_pages_and_at_a_page_that_adds_nothing(run, searx):
    searx.set_results("many", *_pages(9, 10))
    r = run("search", "many", "--max", "100", "--json")
    assert r.code == 0 and len(r.json["results"]) == 50 and len(searx.requests) == 5
    searx.requests.clear()
    repeat = [make_hit("https://same.org/1"), make_hit("https://same.org/2")]
    searx.set_results("repeats", repeat, repeat, repeat)
    r = run("search", "repeats", "--max", "10", "--json")
    assert r.code == 0 and len(r.json["results"]) == 2 and len(searx.requests) == 2


def test_queries_run_concurrently_up_to_the_worker_count(run, searx):
    three = searx.open_gate_when(lambda server: server.in_flight == 3)   # answers wait until 3 are asked
    r = run("search", "a", "b", "c", "d", "e", "f", "--workers", "3", "--json")
    assert r.code == 0 and len(r.json["queries"]) == 6
    assert three["met"] and searx.max_in_flight == 3                     # three at once, never more


def test_one_slow_query_does_not_hold_up_the_others(run, searx):
    for query in ("slow", "fast1", "fast2"):
        searx.set_results(query, [make_hit(f"https://{query}.org/")])
    asked = searx.open_gate_when(lambda server: {"slow", "fast1", "fast2"} <= set(server.queries_seen()))
    r = run("search", "slow", "fast1", "fast2", "--max", "1", "--json")
    assert r.code == 0 and len(r.json["results"]) == 3
    assert asked["met"]            # the fast queries were asked while the first was still unanswered


def test_unresponsive_engines_are_reported(run, searx):
    from standins import fixture
    data = fixture("searxng", "unresponsive_suspended.json")
    searx.set_results("q", data["results"], unresponsive=data["unresponsive_engines"])
    answer = run("search", "q", "--json").json
    assert answer["ok"] is True
    assert answer["unresponsive"]["localslow"] == "Suspended: timeout"


def test_no_results_with_every_engine_unresponsive_is_an_upstream_failure(run, searx):
    searx.set_results("q", [], unresponsive=[["localdead", "HTTP connection error"], ["localslow", "timeout"]])
    r = run("search", "q", "--json")
    assert r.code == web.EXIT_UNREACHABLE and r.json["ok"] is False
    assert "engines unresponsive: localdead (HTTP connection error)" in r.err


def test_empty_answer_is_not_an_error(run, searx):
    searx.set_results("zzznoresults", [])
    r = run("search", "zzznoresults", "--json")
    assert r.code == 0 and r.json["results"] == [] and run("search", "zzznoresults").out == "no results\n"


def test_some_queries_failing_is_exit_1_with_errors_listed(run, searx):
    searx.fail_next(Reply(400, {"error": "Invalid value abc for parameter pageno"}))
    r = run("search", "first", "--json")
    assert r.code == web.EXIT_USAGE
    searx.requests.clear()
    searx.set_results("good", [make_hit("https://good.org/")])
    searx.set_results("bad", [])
    searx.fail_next()
    r = run("search", "good", "bad", "--workers", "1", "--json")
    assert r.code == 0   # control: both work
    searx.fail_next(Reply(503, "busy", content_type="text/plain"), Reply(503, "busy", content_type="text/plain"),
                    Reply(503, "busy", content_type="text/plain"))
    r = run("search", "good", "bad", "--workers", "1", "--json")
    assert r.code == web.EXIT_PARTIAL and r.json["ok"] is False
    assert [e["q"] for e in r.json["errors"]] == [1] and r.json["errors"][0]["status"] == 503
    assert r.json["queries"]["1"] == "good" and "SearXNG: at " in r.err and "answered HTTP 503 (3 attempts)" in r.err


def test_human_output_is_three_lines_per_hit(run, searx):
    searx.set_results("q", [make_hit("https://a.org/", "Title A", "Snippet A"), make_hit("https://b.org/", "B", "")])
    out = run("search", "q").out
    assert out == " 1. Title A\n    https://a.org/\n    Snippet A\n 2. B\n    https://b.org/\n"


def test_gzip_answers_are_decoded(run, searx):
    body = json.dumps({"query": "g", "results": [make_hit("https://gz.org/")]}).encode()
    searx.fail_next(Reply(200, body, gzip_body=True))
    assert run("search", "g", "--json").json["results"][0]["url"] == "https://gz.org/"


def test_json_disabled_403_is_exit_3_with_the_fix(run, searx):
    searx.json_enabled = False
    r = run("search", "hello", "--json")
    assert r.code == web.EXIT_CONFIG
    assert "SearXNG: answered 403 text/html to format=json — enable json under search.formats" in r.err
    assert r.json["ok"] is False and len(searx.requests) == 1   # not retried


def test_html_instead_of_json_is_exit_3_like_the_403(run, searx):
    status, headers, body = captured_http("json_disabled.txt")
    searx.fail_next(Reply(200, "<!DOCTYPE html><html>login</html>", content_type="text/html; charset=utf-8"))
    r = run("search", "hello")
    assert r.code == web.EXIT_CONFIG and "enable json under search.formats" in r.err


def test_limiter_429_says_how_to_let_the_client_through(run, searx):
    from standins import limiter_reply
    assert (limiter_reply().status, limiter_reply().body) == (429, b"Too Many Requests")   # as captured
    searx.fail_next(*[limiter_reply() for _ in range(3)])
    r = run("search", "hello")
    assert r.code == web.EXIT_CONFIG and len(searx.requests) == 3
    assert "pass_ip in limiter.toml" in r.err and "server.limiter: false" in r.err


def test_json_without_results_is_exit_5(run, searx):
    searx.fail_next(Reply(200, {"query": "x", "answers": []}))
    r = run("search", "x")
    assert r.code == web.EXIT_UNEXPECTED and "SearXNG: sent JSON without results" in r.err


def test_topic_search_numbers_queries_in_the_topic_and_lists_seen_hits_compactly(run, searx, fire, md_root):
    fire.set_articles("https://a.org/1")
    searx.set_results("q", [make_hit("https://a.org/1"), make_hit("https://b.org/2")])
    first = run("search", "q", "--topic", "t", "--json").json
    assert first["queries"] == {"1": "q"} and "seen" not in first
    assert all("seen" not in h and "n" not in h for h in first["results"])
    assert run("scrape", "https://a.org/1", "--topic", "t", "--json").code == 0
    searx.set_results("q2", [make_hit("https://a.org/1/"), make_hit("https://c.org/3"), make_hit("https://b.org/2")])
    second = run("search", "q2", "--topic", "t", "--json").json
    assert second["queries"] == {"2": "q2"}                          # numbered after the topic's first query
    assert [h["url"] for h in second["results"]] == ["https://c.org/3"] and second["results"][0]["q"] == [2]
    assert second["seen"] == [{"rank": 1, "url": "https://a.org/1/", "n": 1},            # saved: its number
                              {"rank": 3, "url": "https://b.org/2", "title": "Title of https://b.org/2"}]   # not: its title
    full = run("search", "q2", "--topic", "t", "--json", "--all").json
    assert [(h["url"], h.get("seen"), h.get("n")) for h in full["results"]] == [
        ("https://a.org/1/", True, 1), ("https://c.org/3", True, None), ("https://b.org/2", True, None)]
    events = read_ledger(md_root / "t" / "web" / "_ledger.jsonl")
    searches = [e for e in events if e["command"] == "search"]
    assert [(e["q"], e["query"], e["round"], e["hits"], e["new"]) for e in searches] == [
        (1, "q", 1, 2, 2), (2, "q2", 2, 3, 1), (3, "q2", 2, 3, 0)]   # no scrape between: the same round
    human = run("search", "q2", "--topic", "t", "--all").out
    assert " 1. Title of https://a.org/1/ [saved 1]" in human and "[seen]" in human
    assert human.endswith("-- 3 hits, 0 new to the topic\n")


def test_a_long_search_answer_is_lean(run, searx):
    """The point of the compact form: queries once, hits refer to them by number."""
    searx.set_results("one", [make_hit(f"https://x.org/{i}") for i in range(10)])
    searx.set_results("two", [make_hit(f"https://x.org/{i}") for i in range(10)])
    out = run("search", "one", "two", "--json").out
    assert out.count('"one"') == 1 and out.count('"two"') == 1 and out.count('"q":[1,2]') == 10
