"""The fault catalogue: a flaky box, each fault with its exit code, its one line, and nothing partial left."""

import email.utils
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from standins import Reply, make_hit, page_body, article_markdown

import web
from conftest import ROOT, read_ledger, run_process


def leftovers(md_root):
    """Temporary files and pages anywhere under the md root."""
    found = []
    for folder, _, names in os.walk(md_root):
        found += [os.path.join(folder, n) for n in names if ".tmp" in n or (n.endswith(".md") and not n.startswith("_"))]
    return found


def one_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("web.py: ") and "Traceback" not in err, err
    return lines[0]


def test_connection_refused_is_exit_4(run, md_root):
    r = run("scrape", "https://example.org/a", "--topic", "t", "--json")
    assert r.code == web.EXIT_UNREACHABLE and r.json["ok"] is False
    assert "Firecrawl: at http://127.0.0.1:9 refused the connection (3 attempts) — is the webtools box up?" in one_line(r.err)
    assert leftovers(md_root) == []
    r = run("search", "hello")
    assert r.code == web.EXIT_UNREACHABLE and "check WEBTOOLS_HOST/SEARXNG_PORT" in one_line(r.err)


def test_connection_reset_mid_body_is_retried_then_exit_4(run, fire, md_root):
    body = json.dumps(page_body("https://example.org/a", article_markdown())).encode()
    fire.fail_next(*[Reply(200, body, reset_after=40) for _ in range(3)])
    r = run("scrape", "https://example.org/a", "--topic", "t")
    assert r.code == web.EXIT_UNREACHABLE and "dropped the connection mid-response" in one_line(r.err)
    assert len(fire.requests) == 3 and leftovers(md_root) == []


def test_reset_once_then_success_is_survived(run, fire, md_root):
    body = json.dumps(page_body("https://example.org/a", article_markdown())).encode()
    fire.set_page("https://example.org/a", Reply(200, body))
    fire.fail_next(Reply(200, body, reset_after=40))
    r = run("scrape", "https://example.org/a", "--topic", "t")
    assert r.code == 0 and len(leftovers(md_root)) == 1


def test_headers_slower_than_the_timeout(run, searx, monkeypatch, md_root):
    monkeypatch.setenv("WEB_TIMEOUT", "0.3")
    monkeypatch.setenv("WEB_RETRIES", "1")
    searx.delay = 1.0
    r = run("search", "slow", "--topic", "t")
    assert r.code == web.EXIT_UNREACHABLE and "did not answer within 0.3 s (2 attempts)" in one_line(r.err)


def test_body_trickling_slower_than_the_timeout(run, fire, monkeypatch, md_root):
    monkeypatch.setenv("WEB_TIMEOUT", "0.4")
    monkeypatch.setenv("WEB_RETRIES", "0")
    fire.fail_next(Reply(200, json.dumps(page_body("https://e.org/a", article_markdown())), trickle=0.02))
    r = run("scrape", "https://e.org/a", "--topic", "t")
    assert r.code == web.EXIT_UNREACHABLE and "did not answer within 0.4 s" in one_line(r.err)
    assert leftovers(md_root) == []


def test_429_with_retry_after_seconds_is_honoured(run, fire, md_root):
    fire.set_articles("https://example.org/a")
    fire.fail_next(Reply(429, {"success": False, "error": "slow down"}, headers={"Retry-After": "1"}))
    r = run("scrape", "https://example.org/a", "--topic", "t")
    assert r.code == 0 and r.err == "" and len(fire.requests) == 2          # retried quietly, then saved
    assert fire.requests[1]["time"] - fire.requests[0]["time"] >= 0.95     # not before the second it asked for


def test_429_with_retry_after_as_http_date_is_honoured(run, searx):
    when = email.utils.formatdate(time.time() + 2, usegmt=True)
    searx.fail_next(Reply(429, "Too Many Requests", headers={"Retry-After": when}, content_type="text/html"))
    r = run("search", "q", "--max", "1")
    assert r.code == 0 and r.err == "" and len(searx.requests) == 2
    assert searx.requests[1]["time"] - searx.requests[0]["time"] >= 0.9


def test_5xx_twice_then_success(run, searx):
    searx.fail_next(Reply(503, "unavailable", content_type="text/plain"), Reply(502, "bad gateway",
                                                                               content_type="text/plain"))
    r = run("search", "q", "--max", "1", "--json")
    assert r.code == 0 and r.err == "" and r.json["ok"] is True and len(searx.requests) == 3


def test_5xx_always_is_exit_4(run, fire, md_root):
    fire.fail_next(*[Reply(502, "<html>Bad Gateway</html>", content_type="text/html") for _ in range(3)])
    r = run("scrape", "https://example.org/a", "--topic", "t")
    assert r.code == web.EXIT_UNREACHABLE and "answered HTTP 502 (3 attempts)" in one_line(r.err)
    assert leftovers(md_root) == []


@pytest.mark.parametrize("status, code, message", [
    (400, web.EXIT_USAGE, "SearXNG: refused the query 'q': nope — check the query"),
    (404, web.EXIT_UNEXPECTED, "/search answered HTTP 404: '{\"error\": \"nope\"}' — something else answers there: "
                               "check SEARXNG_URL"),
])
def test_other_4xx_are_never_retried(run, searx, status, code, message):
    searx.fail_next(Reply(status, {"error": "nope"}))
    r = run("search", "q", "--max", "1")
    assert len(searx.requests) == 1 and r.code == code and message in one_line(r.err)


def test_html_from_a_proxy_where_json_was_due_is_exit_5(run, fire, md_root):
    fire.fail_next(Reply(200, "<html><body>Proxy login</body></html>", content_type="text/html"))
    r = run("scrape", "https://example.org/a", "--topic", "t")
    assert r.code == web.EXIT_UNEXPECTED
    assert "Firecrawl: sent something that is not JSON (HTTP 200): '<html><body>Proxy login" in one_line(r.err)
    assert leftovers(md_root) == []


def test_truncated_json_is_exit_5(run, fire, md_root):
    fire.fail_next(Reply(200, '{"success": true, "data": {"markdown": "Tide po'))
    r = run("scrape", "https://example.org/a", "--topic", "t")
    assert r.code == web.EXIT_UNEXPECTED and "not JSON" in one_line(r.err) and leftovers(md_root) == []


def test_body_over_the_cap_is_exit_5(run, searx):
    huge = json.dumps({"query": "q", "results": [make_hit(f"https://big.org/{i}", content="x" * 2000)
                                                 for i in range(3000)]})
    assert len(huge) > web.SEARCH_CAP
    searx.fail_next(Reply(200, huge))
    r = run("search", "q")
    assert r.code == web.EXIT_UNEXPECTED and "response too large (over 5 MB)" in one_line(r.err)


def test_gzip_bomb_is_capped_too(run, searx):
    searx.fail_next(Reply(200, b"{" + b" " * (web.SEARCH_CAP + 10) + b"}", gzip_body=True))
    r = run("search", "q")
    assert r.code == web.EXIT_UNEXPECTED and "response too large" in r.err


def test_firecrawl_success_false_is_a_page_failure_and_the_batch_goes_on(run, fire, md_root):
    fire.set_page("https://a.org/1", Reply(200, {"success": False, "error": "Internal error"}))
    fire.set_articles("https://b.org/2")
    r = run("scrape", "https://a.org/1", "https://b.org/2", "--topic", "t", "--json")
    assert r.code == web.EXIT_PARTIAL
    assert [f["kind"] for f in r.json["failed"]] == ["upstream"] and len(r.json["saved"]) == 1


def test_md_root_not_writable_is_exit_3(run, fire, monkeypatch, tmp_path):
    if os.geteuid() == 0:   # root writes through permissions; /sys refuses every new folder
        monkeypatch.setenv("WEB_MD_ROOT", "/sys")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        monkeypatch.setenv("WEB_MD_ROOT", str(locked))
    r = run("init", "goal", "--topic", "t")
    assert r.code == web.EXIT_CONFIG and "storage: cannot write" in one_line(r.err)
    assert "make the md root writable or point WEB_MD_ROOT elsewhere" in r.err
    assert fire.requests == []


def _wait_for(predicate, timeout=60):
    """True as soon as `predicate` holds; the long deadline only matters on a slow or loaded machine."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_sigint_mid_batch_keeps_finished_pages_and_leaves_nothing_partial(fire, md_root, tmp_path):
    fire.delay = 0.25
    urls = [f"https://int.org/{i}" for i in range(10)]
    fire.set_articles(*urls)
    web_dir = md_root / "t" / "web"
    # SIGINT as a terminal delivers it, whatever the test runner's own SIGINT is (ignored in a background job)
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "web.py"), "scrape", *urls, "--topic", "t",
                             "--workers", "2", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert _wait_for(lambda: web_dir.exists() and len([p for p in web_dir.iterdir() if p.name.startswith("int")]) >= 3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "interrupted" in err.decode() and "Traceback" not in err.decode()
    report = json.loads(out)
    assert report["ok"] is False and report["interrupted"] is True
    pages = sorted(p.name for p in web_dir.iterdir() if p.suffix == ".md" and not p.name.startswith("_"))
    assert 3 <= len(pages) < 10 and not [p for p in web_dir.iterdir() if ".tmp" in p.name]
    for name in pages:   # every kept page is whole
        text = (web_dir / name).read_text("utf-8")
        assert web.split_saved(text)[0]["source"].startswith("https://int.org/") and text.endswith("\n")
    events = [json.loads(line) for line in (web_dir / "_ledger.jsonl").read_text("utf-8").splitlines()]
    assert sorted(os.path.basename(e["path"]) for e in events if e["outcome"] == "saved") == pages
    assert sorted(os.path.basename(e["path"]) for e in report["saved"]) == pages
    accounted = {e["url"] for e in report["saved"]} | {e["url"] for e in report.get("failed", [])} | \
        set(report["not_attempted"])
    assert accounted == set(urls) and len(report["saved"]) + len(report["not_attempted"]) == 10   # each URL once


def test_two_processes_scraping_into_one_topic_lose_nothing(fire, md_root):
    # 20 URLs each, 10 shared, all with the same slug stem: every name must be claimed once
    first = [f"https://same.org/p?id={i}" for i in range(20)]
    second = [f"https://same.org/p?id={i}" for i in range(10, 30)]
    fire.set_articles(*first, *second)
    fire.delay = 0.02
    procs = [subprocess.Popen([sys.executable, os.path.join(ROOT, "web.py"), "scrape", *urls, "--topic", "t",
                               "--workers", "4", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for urls in (first, second)]
    reports = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    web_dir = md_root / "t" / "web"
    pages = [p for p in web_dir.iterdir() if p.suffix == ".md" and not p.name.startswith("_")]
    sources = sorted(web.split_saved(p.read_text("utf-8"))[0]["source"] for p in pages)
    assert sources == sorted(set(first + second))                  # each URL saved exactly once
    assert len({p.name for p in pages}) == 30 and not [p for p in web_dir.iterdir() if ".tmp" in p.name]
    saved = sum(len(r.get("saved", [])) for r in reports)
    skipped = sum(len(r.get("skipped", [])) for r in reports)
    assert saved == 30 and saved + skipped == 40
    lines = (web_dir / "_ledger.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 40 and all(json.loads(line)["command"] == "scrape" for line in lines)


def test_a_torn_last_ledger_line_is_ignored_and_closed(run, fire, md_root):
    web_dir = md_root / "t" / "web"
    web_dir.mkdir(parents=True)
    (web_dir / "_ledger.jsonl").write_bytes(b'{"run":null,"command":"search","query":"q"}\n{"run":null,"comm')
    fire.set_articles("https://example.org/a")
    assert run("scrape", "https://example.org/a", "--topic", "t").code == 0
    events = read_ledger(web_dir / "_ledger.jsonl")
    assert [e["command"] for e in events] == ["search", "scrape"]


def test_no_traceback_even_for_an_internal_error(monkeypatch, run, searx):
    monkeypatch.setattr(web, "fuse_hits", lambda outcomes: 1 / 0)
    r = run("search", "q")
    assert r.code == web.EXIT_INTERNAL and "internal error: ZeroDivisionError" in one_line(r.err)


def test_ctrl_c_outside_a_network_wait_is_held_until_the_next_wait():
    gate = web.InterruptGate()
    gate._on_sigint(signal.SIGINT, None)                  # while a page and its ledger line are written
    assert gate.pending
    with pytest.raises(KeyboardInterrupt):
        gate.wait({})                                     # raised at the next wait, before it blocks
    waiting = web.InterruptGate()
    waiting.open = True
    with pytest.raises(KeyboardInterrupt):
        waiting._on_sigint(signal.SIGINT, None)           # during a wait: at once


def test_ctrl_c_in_this_process_reports_what_was_finished(run, fire, md_root):
    import threading
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)   # as a terminal starts Python
    hold = threading.Event()
    fire.set_page("https://b.org/2", Reply(200, page_body("https://b.org/2", article_markdown("b")), hold=hold))
    fire.set_articles("https://a.org/1", "https://c.org/3")

    def interrupt_when_b_is_loading():
        if _wait_for(lambda: fire.in_flight == 1 and len(leftovers(md_root)) == 1):
            os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt_when_b_is_loading, daemon=True).start()
    try:
        r = run("scrape", "https://a.org/1", "https://b.org/2", "https://c.org/3", "--topic", "t", "--workers", "1",
                "--json")
    finally:
        hold.set()
        signal.signal(signal.SIGINT, previous)
    assert r.code == web.EXIT_INTERRUPTED
    assert r.err == ("web.py: interrupted — 1 page saved and kept; to go on, run the same command again "
                     "(pages already saved are skipped)\n")   # no --limit was given: none is spoken of
    assert r.json["interrupted"] is True and r.json["ok"] is False
    assert [e["url"] for e in r.json["saved"]] == ["https://a.org/1"]
    assert r.json["not_attempted"] == ["https://b.org/2", "https://c.org/3"]


# --- the one line each failure of the box prints, whole -----------------------------------------

@pytest.mark.parametrize("service, replies, code, line", [
    ("searx", [Reply(503, "busy", content_type="text/plain")] * 3, web.EXIT_UNREACHABLE,
     "SearXNG: at {url} answered HTTP 503 (3 attempts) — the service is failing: check its logs on the webtools box"),
    ("searx", [Reply(429, "slow down", content_type="text/html")] * 3, web.EXIT_CONFIG,
     "SearXNG: its limiter refused the request (429 Too Many Requests, 3 attempts) — let this client through: add its "
     "address to pass_ip in limiter.toml, or set server.limiter: false on a private instance"),
    ("fire", [Reply(429, {"success": False, "error": "slow"})] * 3, web.EXIT_UNREACHABLE,
     "Firecrawl: rate-limited the request (429, 3 attempts) — lower WEB_WORKERS or wait a minute"),
    ("fire", [Reply(502, "bad gateway", content_type="text/html")] * 3, web.EXIT_UNREACHABLE,
     "Firecrawl: at {url} answered HTTP 502 (3 attempts) — the service is failing: check its logs on the webtools box"),
    ("fire", [Reply(200, b"{" * 50, reset_after=10)] * 3, web.EXIT_UNREACHABLE,
     "Firecrawl: at {url} dropped the connection mid-response (ERROR) (3 attempts) — is the webtools box "
     "up? check FIRECRAWL_URL"),   # ERROR: the exception's name, which the platform decides; the setting in effect
    ("searx", [Reply(400, {"error": "bad pageno"})], web.EXIT_USAGE,
     "SearXNG: refused the query 'q': bad pageno — check the query and the --categories/--language/--time-range values"),
    ("searx", [Reply(200, {"query": "q"})], web.EXIT_UNEXPECTED,
     "SearXNG: sent JSON without results: '{\"query\": \"q\"}' — is SEARXNG_URL pointing at SearXNG's root?"),
    ("fire", [Reply(200, ["not", "an", "object"])], web.EXIT_UNEXPECTED,
     "Firecrawl: sent unexpected JSON: '[\"not\", \"an\", \"object\"]' — is FIRECRAWL_URL pointing at Firecrawl's API?"),
    ("fire", [Reply(200, {"success": True, "data": "x"})], web.EXIT_UNEXPECTED,
     "Firecrawl: sent success without data: '{\"success\": true, \"data\": \"x\"}' — is FIRECRAWL_URL pointing at "
     "Firecrawl's v1 API?"),
])
def test_each_failure_of_the_box_is_one_whole_line(run, searx, fire, service, replies, code, line):
    server = searx if service == "searx" else fire
    server.fail_next(*replies)
    r = run("search", "q", "--max", "1") if service == "searx" else run("scrape", "https://example.org/a")
    expected = re.escape(f"web.py: {line}\n").replace(re.escape("{url}"), re.escape(server.url))
    assert r.code == code and re.fullmatch(expected.replace("ERROR", r"\w+"), r.err), r.err


def test_a_refused_connection_and_a_slow_box_name_the_variable_to_check(run, monkeypatch):
    r = run("search", "q")
    assert r.err == ("web.py: SearXNG: at http://127.0.0.1:9 refused the connection (3 attempts) — is the webtools "
                     "box up? check WEBTOOLS_HOST/SEARXNG_PORT\n")
    monkeypatch.setenv("WEB_RETRIES", "0")
    r = run("scrape", "https://example.org/a")
    assert r.err == ("web.py: Firecrawl: at http://127.0.0.1:9 refused the connection (1 attempt) — is the webtools "
                     "box up? check WEBTOOLS_HOST/FIRECRAWL_PORT\n")
