"""`web.py scrape` against the Firecrawl stand-in: saves, headers, failures, budget, dedupe."""

import json
import os
import time

import pytest
from standins import ARTICLE, Reply, article_markdown, captured_reply, page_body

import web
from conftest import read_ledger


def saved_files(md_root, topic="t"):
    web_dir = md_root / topic / "web"
    return sorted(p.name for p in web_dir.iterdir() if p.suffix == ".md" and not p.name.startswith("_"))


def test_one_url_prints_the_page_markdown_and_nothing_else(run, fire):
    fire.set_page("https://example.org/tides", ARTICLE)
    r = run("scrape", "https://example.org/tides")
    assert r.code == 0 and r.err == ""
    assert r.out.startswith("Understanding Tide Pools\n=====") and "> source:" not in r.out
    assert "sea\u200bwater" not in r.out and "seawater" in r.out   # sanitised even on stdout


def test_request_body_follows_the_v1_schema(run, fire, monkeypatch):
    fire.set_articles("https://example.org/a")
    monkeypatch.setenv("WEB_TIMEOUT", "30")
    assert run("scrape", "https://example.org/a", "--full-page").code == 0
    body = json.loads(fire.requests[0]["raw"])
    assert body == {"url": "https://example.org/a", "formats": ["markdown"], "onlyMainContent": False,
                    "timeout": 25000}
    assert "Authorization" not in fire.requests[0]["headers"]


def test_out_writes_the_header_and_page(run, fire, tmp_path):
    fire.set_page("https://example.org/tides", ARTICLE)
    out = tmp_path / "notes" / "tides.md"
    r = run("scrape", "https://example.org/tides", "--out", out, "--query", "tide pools", "--relevance", "field guide")
    assert r.code == web.EXIT_USAGE and r.err == (   # a folder that does not exist is never made
        f"web.py: usage: --out {web.display_path(out)}: the folder {web.display_path(tmp_path / 'notes')} does not "
        f"exist — create it first, or choose a path in an existing folder\n") and not out.parent.exists()
    out.parent.mkdir()
    r = run("scrape", "https://example.org/tides", "--out", out, "--query", "tide pools", "--relevance", "field guide")
    assert r.code == 0, r
    text = out.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[:4] == ["> source: https://example.org/tides  ", "> query: tide pools  ",
                         f"> fetched: {web.now_utc():%Y-%m-%d}  ", "> relevance: field guide  "]
    assert "> title: Understanding Tide Pools | Coastal Notes  " in lines and "> status: 200 text/html  " in lines
    flags_line = next(line for line in lines if line.startswith("> flags:"))
    assert "invisible-chars:2" in flags_line and "instructions" in flags_line
    note = lines.index(web.NOTE_LINE)
    assert lines[note + 1] == "" and lines[note + 2] == "Understanding Tide Pools"


def test_topic_saves_with_slugs_paths_and_json_report(run, fire, md_root):
    fire.set_articles("https://www.example.org/a/b", "https://example.net/c")
    r = run("scrape", "https://www.example.org/a/b", "https://example.net/c", "--topic", "t", "--json")
    assert r.code == 0, r
    report = r.json
    assert report["schema"] == "web.scrape/3" and report["ok"] is True and set(report) == {
        "schema", "ok", "saved", "elapsed_ms"}                             # empty lists are left out
    assert [(e["n"], e["path"].rsplit("/", 1)[1]) for e in report["saved"]] == [(1, "example-org-a-b.md"),
                                                                                 (2, "example-net-c.md")]
    entry = report["saved"][0]
    assert list(entry) == ["n", "url", "path", "title", "words"]          # no flags: none were raised
    saved = md_root / "t" / "web" / "example-org-a-b.md"
    assert entry["words"] == web.count_words(web.split_saved(saved.read_text("utf-8"))[1].encode()) > 200
    import hashlib
    event = next(e for e in read_ledger(md_root / "t" / "web" / "_ledger.jsonl")
                 if e["path"].endswith("/example-org-a-b.md"))
    assert hashlib.sha256(web.split_saved(saved.read_text("utf-8"))[1].encode()).hexdigest() == event["sha256"]


def test_slug_collisions_get_numbered_names(run, fire, md_root):
    urls = ["https://example.org/a?id=1", "https://example.org/a?id=2", "https://example.org/a?id=3"]
    for i, url in enumerate(urls):
        fire.set_page(url, page_body(url, article_markdown(f"page {i}"), title=f"P{i}"))
    assert run("scrape", *urls, "--topic", "t", "--workers", "1").code == 0
    assert saved_files(md_root) == ["example-org-a-2.md", "example-org-a-3.md", "example-org-a.md"]


def test_already_saved_urls_are_skipped_unless_forced(run, fire, md_root):
    fire.set_articles("https://example.org/a")
    assert run("scrape", "https://example.org/a", "--topic", "t", "--query", "q0", "--relevance", "why").code == 0
    r = run("scrape", "https://www.example.org/a/?utm_source=x", "--topic", "t", "--json")
    assert r.code == 0 and r.json["skipped"] == [{"url": "https://www.example.org/a/?utm_source=x",
                                                  "reason": "already saved", "path": web.display_path(
                                                      md_root / "t" / "web" / "example-org-a.md"), "n": 1}]
    assert len(fire.requests) == 1                                  # not even asked
    first = (md_root / "t" / "web" / "example-org-a.md").read_bytes()
    r = run("scrape", "https://example.org/a", "--topic", "t", "--force", "--json")
    assert r.code == 0 and r.json["skipped"] == [{"url": "https://example.org/a", "reason": "unchanged", "path": (
        web.display_path(md_root / "t" / "web" / "example-org-a.md")), "n": 1}]   # the same content: nothing new
    fire.set_page("https://example.org/a", page_body("https://example.org/a", article_markdown("new text")))
    r = run("scrape", "https://example.org/a", "--topic", "t", "--force", "--json")
    assert r.code == 0 and len(r.json["saved"]) == 1 and r.json["saved"][0]["n"] == 1   # the same number
    assert r.json["saved"][0]["version"] == 2 and r.json["saved"][0]["path"].endswith("/example-org-a.v2.md")
    assert saved_files(md_root) == ["example-org-a.md", "example-org-a.v2.md"]
    assert (md_root / "t" / "web" / "example-org-a.md").read_bytes() == first      # the earlier version is kept
    text = (md_root / "t" / "web" / "example-org-a.v2.md").read_text("utf-8")
    assert "New Text" in text and "> query: q0  \n" in text and "> relevance: why  \n" in text   # header kept
    assert f"> version: 2 · previous: example-org-a.md, fetched {web.now_utc():%Y-%m-%d}  \n" in text


def test_identical_content_is_reported_as_duplicate(run, fire, md_root):
    same = article_markdown("syndicated story").rstrip("\n")   # saved with a final newline added
    fire.set_page("https://original.org/story", page_body("https://original.org/story", same))
    fire.set_page("https://mirror.net/copy", page_body("https://mirror.net/copy", same))
    run("scrape", "https://original.org/story", "--topic", "t")
    r = run("scrape", "https://mirror.net/copy", "--topic", "t", "--json")
    assert r.code == 0 and "saved" not in r.json
    skipped = r.json["skipped"][0]
    assert skipped["reason"] == "duplicate" and skipped["path"].endswith("original-org-story.md") and skipped["n"] == 1
    assert saved_files(md_root) == ["original-org-story.md"]


@pytest.mark.parametrize("answer, kind", [
    (captured_reply("notfound.json"), "target-status"),
    (captured_reply("target500.json"), "target-status"),
    (captured_reply("timeout.json"), "timeout"),
    (captured_reply("bad_url.json", "not_a_url"), "invalid-url"),
    (Reply(500, {"success": False, "code": "SCRAPE_ALL_ENGINES_FAILED", "error": "All scraping engines failed"}),
     "upstream"),
    (Reply(200, {"success": False, "error": "Job failed"}), "upstream"),
    (Reply(403, {"success": False, "error": "This website is no longer supported"}), "http"),
    (page_body("https://x.org/c", "Just a moment...\n\nEnable JavaScript and cookies to continue",
               title="Just a moment..."), "blocked"),
    (page_body("https://x.org/c", "Attention Required! | Cloudflare " + "word " * 30, title="Attention Required!",
               status=403), "blocked"),
    (page_body("https://x.org/c", "", title="Empty"), "empty"),
    (page_body("https://x.org/c", "only a few words here", title="Thin"), "empty"),
])
def test_page_failures_have_one_kind_and_save_nothing(run, fire, md_root, answer, kind):
    fire.set_page("https://x.org/c", answer)
    r = run("scrape", "https://x.org/c", "--topic", "t", "--json")
    assert r.code == web.EXIT_PARTIAL, r
    assert [f["kind"] for f in r.json["failed"]] == [kind] and "saved" not in r.json
    assert saved_files(md_root) == [] and len(fire.requests) == 1     # a page's verdict is not retried
    assert r.err.count("\n") == 1 and kind in r.err


def test_limit_goes_down_the_list_and_failures_fall_through(run, fire, md_root, tmp_path):
    fire.set_articles(*[f"https://{c}.org/{i}" for i, c in enumerate("abcdef", 1)])
    fire.set_page("https://b.org/2", captured_reply("notfound.json"))
    picks = tmp_path / "picks.json"
    rows = [{"url": f"https://{c}.org/{i}", "query": "q", "relevance": f"reason {i}"}
            for i, c in enumerate("abcdef", 1)]
    picks.write_text(json.dumps(rows), encoding="utf-8")
    r = run("scrape", "--topic", "t", "--from", picks, "--limit", "3", "--workers", "1", "--json")
    assert r.code == 0, r
    report = r.json
    assert [(e["n"], e["url"]) for e in report["saved"]] == [(1, "https://a.org/1"), (2, "https://c.org/3"),
                                                             (3, "https://d.org/4")]
    assert [f["url"] for f in report["failed"]] == ["https://b.org/2"]
    assert report["not_attempted"] == ["https://e.org/5", "https://f.org/6"]
    assert sorted(fire.scraped_urls()) == ["https://a.org/1", "https://b.org/2", "https://c.org/3",
                                           "https://d.org/4"]
    header = web.split_saved((md_root / "t" / "web" / "c-org-3.md").read_text("utf-8"))[0]
    assert header["query"] == "q" and header["relevance"] == "reason 3"


def test_from_accepts_json_lines_on_stdin(run, fire, md_root):
    fire.set_articles(*[f"https://j.org/{i}" for i in range(3)])
    lines = "\n".join(json.dumps({"url": f"https://j.org/{i}", "query": "jq"}) for i in range(3))
    r = run("scrape", "--topic", "t", "--from", "-", "--json", stdin=lines)
    assert r.code == 0 and len(r.json["saved"]) == 3


def test_pages_run_concurrently_up_to_the_worker_count(run, fire):
    fire.set_articles(*[f"https://w.org/{i}" for i in range(6)])
    three = fire.open_gate_when(lambda server: server.in_flight == 3)    # answers wait until 3 are asked
    r = run("scrape", *[f"https://w.org/{i}" for i in range(6)], "--topic", "t", "--workers", "3", "--json")
    assert r.code == 0 and len(r.json["saved"]) == 6
    assert three["met"] and fire.max_in_flight == 3                      # three at once, never more


def test_korean_page_end_to_end(run, fire, md_root):
    url = "https://ko.example.org/악마/위계"
    markdown = "# 악마의 위계\n\n" + "천사와 악마의 위계는 중세 신학에서 자주 논의되었다. " * 30
    fire.set_page(url, page_body(url, markdown, title="악마의 위계 — 연구"))
    (md_root / "악마").mkdir()
    r = run("scrape", url, "--topic", "악마", "--query", "악마 위계", "--json")
    assert r.code == 0, r
    path = md_root / "악마" / "web" / "ko-example-org.md"
    text = path.read_text(encoding="utf-8")
    assert "> query: 악마 위계" in text and "> title: 악마의 위계 — 연구" in text and "중세 신학" in text
    assert r.json["saved"][0]["title"] == "악마의 위계 — 연구"


@pytest.mark.parametrize("final, redirected", [
    ("https://long.example/article", True), ("http://short.example/x", True),
    ("https://short.example/x/", False), ("https://www.short.example/x", False), ("https://SHORT.example/x#top", False),
    ("https://short.example/x?utm_source=feed", False), ("https://short.example:443/x", False)])   # the same page
def test_redirected_pages_record_where_they_ended(run, fire, md_root, final, redirected):
    fire.set_page("https://short.example/x", page_body(final, article_markdown("moved")))
    run("scrape", "https://short.example/x", "--topic", "t")
    header = web.split_saved((md_root / "t" / "web" / "short-example-x.md").read_text("utf-8"))[0]
    assert header["source"] == "https://short.example/x" and header.get("redirected") == (final if redirected else None)


def test_scrape_ledger_records_every_page(run, fire, md_root, tmp_path):
    fire.set_articles("https://a.org/1")
    fire.set_page("https://b.org/2", captured_reply("timeout.json"))
    picks = tmp_path / "picks.json"   # picks come from pages: a bad one is a failed pick, not bad input
    picks.write_text(json.dumps(["https://a.org/1", "https://b.org/2", "javascript:x"]), encoding="utf-8")
    run("scrape", "--from", picks, "--topic", "t")
    events = read_ledger(md_root / "t" / "web" / "_ledger.jsonl")
    outcomes = {e["url"]: (e["outcome"], e.get("kind")) for e in events}
    assert outcomes == {"https://a.org/1": ("saved", None), "https://b.org/2": ("failed", "timeout"),
                        "javascript:x": ("failed", "invalid-url")}
    saved = next(e for e in events if e["outcome"] == "saved")
    assert saved["path"].endswith("a-org-1.md") and len(saved["sha256"]) == 64


def test_private_addresses_are_refused_before_firecrawl_is_asked(run, fire, tmp_path):
    fire.set_articles("http://10.1.2.3/wiki/page")   # named to the Firecrawl stand-in only; the guard refuses a connection
    picks = tmp_path / "picks.json"
    picks.write_text(json.dumps(["http://169.254.169.254/latest/meta-data"]), encoding="utf-8")
    r = run("scrape", "--from", picks, "--topic", "t", "--json")
    assert r.code == web.EXIT_PARTIAL and r.json["failed"][0] == {
        "url": "http://169.254.169.254/latest/meta-data", "kind": "invalid-url",
        "error": "private address — if it is your own intranet page, add --allow-private"}
    assert fire.requests == []
    r = run("scrape", "http://10.1.2.3/wiki/page", "--topic", "t", "--allow-private", "--json")
    assert r.code == 0 and fire.scraped_urls() == ["http://10.1.2.3/wiki/page"]   # the stand-in answers; no connect


def test_api_key_is_sent_as_bearer(run, fire, monkeypatch):
    fire.set_articles("https://example.org/a")
    monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-secret")
    assert run("scrape", "https://example.org/a").code == 0
    assert fire.requests[0]["headers"]["Authorization"] == "Bearer fc-secret"


@pytest.mark.parametrize("key, message", [(None, "wants an API key (HTTP 401) — set FIRECRAWL_API_KEY"),
                                          ("fc-wrong", "refused FIRECRAWL_API_KEY (HTTP 401)")])
def test_401_is_exit_3_with_and_without_a_key(run, fire, monkeypatch, key, message):
    fire.require_key = "fc-right"
    if key:
        monkeypatch.setenv("FIRECRAWL_API_KEY", key)
    r = run("scrape", "https://example.org/a", "https://example.org/b", "--topic", "t", "--workers", "1", "--json")
    assert r.code == web.EXIT_CONFIG and message in r.err
    assert r.json["not_attempted"] == ["https://example.org/b"] and len(fire.requests) == 1


def test_unknown_route_html_404_names_the_route(run, fire, monkeypatch):
    monkeypatch.setenv("FIRECRAWL_URL", fire.url + "/wrong")
    r = run("scrape", "https://example.org/a")
    assert r.code == web.EXIT_CONFIG and "has no route POST /v1/scrape" in r.err


@pytest.mark.parametrize("argv, message", [
    ([], "no URL to scrape — give URLs, or --from FILE"),
    (["https://a.org/", "https://b.org/"], "several URLs need --topic — add --topic T"),
    (["https://a.org/", "--json"], "--json needs --topic or --out"),
    (["https://a.org/", "--topic", "t", "--out", "x.md"], "--out and --topic do not go together"),
])
def test_usage_errors(run, fire, argv, message):
    r = run("scrape", *argv)
    assert r.code == web.EXIT_USAGE and r.err.startswith(f"web.py: usage: {message}") and fire.requests == []


# --- numbering by pick order, twins, stragglers ---------------------------------------

def release_when_saved(md_root, count, hold):
    """Set `hold` once `count` pages are saved in topic t (read from its ledger), from a thread."""
    import threading
    import time

    def watch():
        ledger = md_root / "t" / "web" / "_ledger.jsonl"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not hold.is_set():
            events = read_ledger(ledger)
            if sum(1 for e in events if e.get("outcome") == "saved") >= count:
                break
            time.sleep(0.01)
        hold.set()
    threading.Thread(target=watch, daemon=True).start()


def test_citation_numbers_follow_the_pick_order_not_the_finishing_order(run, fire, md_root):
    import threading
    fire.set_articles("https://second.org/b", "https://third.org/c")
    hold = threading.Event()
    first = "https://first.org/a"
    fire.set_page(first, Reply(200, page_body(first, article_markdown("first pick")), hold=hold))
    release_when_saved(md_root, 2, hold)          # the first pick finishes last
    r = run("scrape", first, "https://second.org/b", "https://third.org/c", "--topic", "t", "--json")
    assert r.code == 0, r
    assert [(e["n"], e["url"]) for e in r.json["saved"]] == [
        (1, first), (2, "https://second.org/b"), (3, "https://third.org/c")]
    manifest = run("manifest", "--topic", "t", "--json").json
    assert [(s["n"], s["url"]) for s in manifest["saved"]] == [
        (1, first), (2, "https://second.org/b"), (3, "https://third.org/c")]


def test_of_two_identical_pages_the_higher_ranked_is_kept_whatever_finishes_first(run, fire, md_root):
    import threading
    fire.set_articles("https://third.org/c")
    hold = threading.Event()
    same = article_markdown("syndicated story")
    fire.set_page("https://original.org/story", Reply(200, page_body("https://original.org/story", same), hold=hold))
    fire.set_page("https://mirror.net/copy", page_body("https://mirror.net/copy", same))
    release_when_saved(md_root, 2, hold)          # the mirror and the third pick are saved first
    r = run("scrape", "https://original.org/story", "https://mirror.net/copy", "https://third.org/c", "--topic", "t",
            "--json")
    assert r.code == 0, r
    assert [(e["n"], e["url"]) for e in r.json["saved"]] == [(1, "https://original.org/story"),
                                                             (2, "https://third.org/c")]   # no gap for the twin
    skipped = r.json["skipped"]
    assert [(s["url"], s["reason"], s["n"]) for s in skipped] == [("https://mirror.net/copy", "duplicate", 1)]
    assert saved_files(md_root) == ["original-org-story.md", "third-org-c.md"]
    assert [s["n"] for s in run("manifest", "--topic", "t", "--json").json["saved"]] == [1, 2]


def test_once_the_budget_is_met_a_straggler_is_left_unused_not_waited_for(run, fire, md_root, monkeypatch):
    import threading
    monkeypatch.setattr(web, "STRAGGLER_GRACE", 0.3)
    fire.set_articles("https://b.org/1", "https://c.org/2", "https://d.org/3")
    hold = threading.Event()
    fire.set_page("https://slow.org/x", Reply(200, page_body("https://slow.org/x", article_markdown("slow")), hold=hold))
    urls = ["https://slow.org/x", "https://b.org/1", "https://c.org/2", "https://d.org/3"]
    try:
        r = run("scrape", *urls, "--topic", "t", "--limit", "3", "--workers", "4", "--json")
        assert fire.in_flight == 1                 # returned while the slow page was still loading
    finally:
        hold.set()
    assert r.code == 0 and [e["url"] for e in r.json["saved"]] == urls[1:]
    assert r.json["unused"] == ["https://slow.org/x"] and "failed" not in r.json
    assert r.err == ""                                                   # not a failure: nothing on stderr
    events = read_ledger(md_root / "t" / "web" / "_ledger.jsonl")
    assert [(e["url"], e["reason"]) for e in events if e["outcome"] == "unused"] == [
        (urls[0], "not needed: --limit 3 was met")]


@pytest.mark.parametrize("fetch_times, started_ago, grace", [
    ([0.2, 0.2, 0.3], 0.3, web.STRAGGLER_GRACE),      # a quick box: the straggler gets 1.5 s
    ([1.0, 1.2, 1.1], 1.2, 3 * 1.1 - 1.2),              # a slow box: until 3 times its usual pace, from its start
    ([], 0.0, web.STRAGGLER_GRACE)])
def test_a_straggler_waits_1_5_s_or_three_times_the_boxs_usual_pace(fetch_times, started_ago, grace):
    batch = object.__new__(web.ScrapeBatch)
    batch.limit, batch.saved, batch.ready, batch.grace_until = 3, [{}, {}], {4: None}, None
    straggler = object()
    batch.in_flight, batch.fetch_times = {straggler: (1, {})}, fetch_times
    batch.started = {straggler: time.monotonic() - started_ago}
    assert batch.straggler_wait() == pytest.approx(grace, abs=0.05)


def test_a_candidate_listed_twice_is_reported_not_dropped(run, fire, md_root, tmp_path):
    fire.set_articles("https://a.org/x")
    picks = tmp_path / "picks.json"
    picks.write_text(json.dumps([{"url": "https://a.org/x"}, {"url": "https://www.a.org/x?utm_source=feed"}]),
                     encoding="utf-8")
    r = run("scrape", "--topic", "t", "--from", picks, "--json")
    assert r.code == 0 and len(fire.requests) == 1
    assert r.json["skipped"] == [{"url": "https://www.a.org/x?utm_source=feed", "reason": "duplicate candidate",
                                  "same_as": "https://a.org/x"}]


def test_a_pick_without_a_query_gets_the_first_query_that_found_it(run, searx, fire, md_root, tmp_path):
    from standins import make_hit
    fire.set_articles("https://a.org/x", "https://b.org/y")
    searx.set_results("first query", [make_hit("https://a.org/x")])
    searx.set_results("second query", [make_hit("https://a.org/x"), make_hit("https://b.org/y")])
    assert run("search", "first query", "second query", "--topic", "t").code == 0
    picks = tmp_path / "picks.json"
    picks.write_text(json.dumps([{"url": "https://b.org/y", "relevance": "r"},
                                 {"url": "https://a.org/x", "query": "mine", "relevance": "r"}]), encoding="utf-8")
    assert run("scrape", "--topic", "t", "--from", picks).code == 0
    headers = {n: web.split_saved((md_root / "t" / "web" / n).read_text("utf-8"))[0]["query"]
               for n in saved_files(md_root)}
    assert headers == {"b-org-y.md": "second query", "a-org-x.md": "mine"}


# --- one page: to stdout or --out, success and failure, text and JSON ---------------------------------

def test_one_page_that_fails_prints_one_line_and_no_page(run, fire):
    fire.set_page("https://x.org/404", captured_reply("notfound.json"))
    r = run("scrape", "https://x.org/404")
    assert r.code == web.EXIT_PARTIAL and r.out == ""
    assert r.err == "web.py: scrape: https://x.org/404: target-status: the site answered 404 Not Found\n"


def test_out_reports_in_the_scrape_shape(run, fire, tmp_path):
    fire.set_articles("https://example.org/a")
    page = tmp_path / "a.md"
    r = run("scrape", "https://example.org/a", "--out", page, "--json")
    answer = r.json
    assert r.code == 0 and set(answer) == {"schema", "ok", "saved", "elapsed_ms"} and answer["ok"] is True
    assert answer["saved"] == [{"url": "https://example.org/a", "path": web.display_path(page),
                                "title": "Understanding Tide Pools | Coastal Notes",
                                "words": web.count_words(web.split_saved(page.read_text("utf-8"))[1].encode())}]
    # no citation number outside a topic, and no flags: a clean page of 262 words
    human = run("scrape", "https://example.org/a", "--out", page, "--force")
    assert human.out == f"saved    {web.display_path(page)}  ({answer['saved'][0]['words']} words)  " \
                        f"https://example.org/a\n"


def test_out_failure_json_names_the_page_and_its_kind(run, fire, tmp_path):
    fire.set_page("https://x.org/slow", captured_reply("timeout.json"))
    r = run("scrape", "https://x.org/slow", "--out", tmp_path / "x.md", "--json")
    assert r.code == web.EXIT_PARTIAL and not (tmp_path / "x.md").exists()
    assert {k: v for k, v in r.json.items() if k != "elapsed_ms"} == {
        "schema": "web.scrape/3", "ok": False,
        "failed": [{"url": "https://x.org/slow", "kind": "timeout", "error": "Firecrawl: Scrape timed out"}]}
    assert r.err == "web.py: scrape: https://x.org/slow: timeout: Firecrawl: Scrape timed out\n"


def test_out_when_the_box_is_down_reports_the_box(run, tmp_path):
    r = run("scrape", "https://x.org/a", "--out", tmp_path / "x.md", "--json")
    assert r.code == web.EXIT_UNREACHABLE and r.json["failed"][0]["kind"] == "http"
    assert r.json["failed"][0]["error"].startswith("Firecrawl: at http://127.0.0.1:9 refused the connection")


# --- the store, directly -------------------------------------------------------------------

def test_the_store_saves_skips_and_replaces(md_root):
    store = web.TopicStore(web.Config({"WEB_MD_ROOT": str(md_root), "WEBTOOLS_HOST": "127.0.0.1"}), "t")
    def header(url):
        return web.render_header(url, "q", "2026-12-01", "r")
    first = store.save("https://a.org/x", header("https://a.org/x"), b"body one\n", False)
    assert first[:2] == ("saved", None) and first[2].endswith("a-org-x.md")
    assert first[4] == len(header("https://a.org/x").encode()) + 9
    assert store.save("https://www.a.org/x/", header("https://www.a.org/x/"), b"body two\n", False)[:3] == (
        "skipped", "already saved", first[2])
    b = header("https://b.org/y")
    assert store.save("https://b.org/y", b, b"body one\n", False)[:3] == ("skipped", "duplicate", first[2])
    replaced = store.save("https://b.org/y", b, b"body one\n", False, replace=first[2])
    assert replaced[0] == "saved" and replaced[2].endswith("b-org-y.md") and not os.path.exists(first[2])
    assert store.save("https://b.org/y", b, b"body one\n", True)[:3] == ("skipped", "unchanged", replaced[2])
    again = store.save("https://b.org/y", b, b"body three\n", True)
    assert again[:2] == ("saved", None) and again[2].endswith("b-org-y.v2.md")       # --force: the next version
    assert open(replaced[2], "rb").read().endswith(b"body one\n")                    # the first one stays
    third = store.save("https://b.org/y", b, b"body one\n", True)                    # back to the first text
    assert third[2].endswith("b-org-y.v3.md") and store.refresh()[0][web.url_key("https://b.org/y")] == third[2]


def test_a_long_slug_keeps_its_suffix_within_80_characters(md_root):
    store = web.TopicStore(web.Config({"WEB_MD_ROOT": str(md_root), "WEBTOOLS_HOST": "127.0.0.1"}), "t")
    slug = "a" * 79 + "b"
    (md_root / "t" / "web" / f"{slug}.md").write_text("x", encoding="utf-8")
    assert os.path.basename(store._free_path(slug)) == "a" * 78 + "-2.md"
    (md_root / "t" / "web" / f"{'a' * 78}-2.md").write_text("x", encoding="utf-8")
    assert os.path.basename(store._free_path(slug)) == "a" * 78 + "-3.md"
    assert os.path.basename(store._free_path("a" * 77 + "-b")) == "a" * 77 + "-b.md"


def test_a_page_that_cannot_be_written_is_exit_3_and_leaves_nothing(run, fire, md_root, monkeypatch):
    fire.set_articles("https://example.org/a")
    def refuse(path, *chunks):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(web, "atomic_write", refuse)
    r = run("scrape", "https://example.org/a", "--topic", "t")
    assert r.code == web.EXIT_CONFIG and saved_files(md_root) == []
    assert r.err == (f"web.py: storage: cannot write {web.display_path(md_root / 't' / 'web' / 'example-org-a.md')} "
                     f"(Permission denied) — make the md root writable or point WEB_MD_ROOT elsewhere\n")
