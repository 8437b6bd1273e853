"""The first hour: what a newcomer meets — the README's first screen, honest progress and reports,
exit codes that follow the table, and messages that name the setting in effect and point at the fix."""

import json
import os
import signal
import threading

import pytest

import web
from conftest import ROOT
from standins import Reply, article_page
from test_hardening import snapshot


def test_the_readmes_first_screen_holds_the_set_up_with_the_tests_and_the_demo():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        first_screen = "".join(handle.readlines()[:60])
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as handle:
        ci = next(line.strip() for line in handle if "pytest" in line and not line.startswith("#"))
    assert ci in first_screen                                   # the very command CI runs
    assert "python3 tests/standins.py" in first_screen and "python3 web.py doctor" in first_screen
    assert "needs nothing installed" in first_screen


# --- exit codes and the report of what was done ------------------------------------------------------------

@pytest.mark.parametrize("url, why", [("example.org/page", "no scheme — add https://, e.g. https://example.org/page"),
                                      ("ftp://example.org/x", "not http/https (ftp)")])
def test_one_bad_url_typed_by_hand_is_bad_input(run, fire, md_root, url, why):
    before = snapshot(md_root)
    for argv in ([url], [url, "--topic", "t"]):
        r = run("scrape", *argv)
        assert (r.code, r.err) == (web.EXIT_USAGE, f"web.py: usage: {url}: {why}\n") and fire.requests == []
    assert snapshot(md_root) == before


def test_ctrl_c_reports_what_was_saved_on_stdout_whatever_stdout_is(run, fire, md_root):
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)   # as a terminal starts Python
    hold = threading.Event()
    fire.set_articles("https://a.org/1", "https://c.org/3")
    fire.set_page("https://b.org/2", Reply(200, article_page("https://b.org/2"), hold=hold))

    def interrupt_once_b_is_loading():
        for _ in range(2000):
            if fire.in_flight == 1 and (md_root / "t" / "web" / "a-org-1.md").exists():
                os.kill(os.getpid(), signal.SIGINT)
                return
            threading.Event().wait(0.005)
    threading.Thread(target=interrupt_once_b_is_loading, daemon=True).start()
    try:
        r = run("scrape", "https://a.org/1", "https://b.org/2", "https://c.org/3", "--topic", "t", "--workers", "1",
                "--limit", "3")
    finally:
        hold.set()
        signal.signal(signal.SIGINT, previous)
    assert r.code == web.EXIT_INTERRUPTED
    assert r.out.splitlines()[0].startswith("saved    [1] ") and "not attempted  https://c.org/3" in r.out
    assert r.err == ("web.py: interrupted — 1 page saved and kept; to go on, run the same command again (pages "
                     "already saved are skipped; lower --limit by 1)\n")          # --limit was given: it is named


def test_a_long_report_says_the_rest_in_one_line_and_a_url_listed_twice_once(run, fire, md_root, tmp_path):
    run("init", "goal", "--topic", "t", "--max-sources", "2")
    urls = [f"https://many.org/{i}" for i in range(10)]
    fire.set_articles(*urls)
    picks = tmp_path / "picks.json"
    picks.write_text(json.dumps(urls[:1] + urls), encoding="utf-8")       # the first listed twice
    lines = run("scrape", "--topic", "t", "--from", picks, "--workers", "1").out.splitlines()
    assert lines[2] == f"skipped  duplicate candidate (listed twice)  {urls[0]}"
    assert lines[3:] == [f"not attempted  {url}" for url in urls[2:7]] + [
        "not attempted  … and 3 more (--json lists them)"]                  # 8 of them: 5, then the rest
    run("init", "goal", "--topic", "u", "--max-sources", "2")
    assert len(run("scrape", "--topic", "u", "--from", picks, "--workers", "1", "--json").json["not_attempted"]) == 8


# --- box settings: only where they are used, and named as they are in effect -------------------------------

@pytest.mark.parametrize("argv", [["status", "--topic", "t"], ["manifest", "--topic", "t"],
                                  ["export", "--topic", "t", "--format", "ris"], ["init", "goal", "--topic", "u"]])
def test_commands_that_send_no_request_ignore_box_settings_they_never_use(run, fire, md_root, monkeypatch, argv):
    fire.set_articles("https://a.org/1")
    run("init", "goal", "--topic", "t")
    run("scrape", "https://a.org/1", "--topic", "t")
    for name, value in (("WEBTOOLS_HOST", "http://x"), ("SEARXNG_PORT", "abc"), ("WEB_TIMEOUT", "-1"),
                        ("WEB_WORKERS", "0")):
        monkeypatch.setenv(name, value)
    assert run(*argv).code == 0
    page = md_root / "t" / "web" / "a-org-1.md"
    assert run("outline", page).code == 0
    r = run("search", "q")
    assert (r.code, r.err) == (web.EXIT_USAGE, "web.py: config: WEBTOOLS_HOST='http://x' is not valid — set a bare "
                                               "host name or IP, e.g. 10.0.0.5 (no scheme, no path)\n")


def test_a_reply_from_something_else_at_the_box_names_the_url_asked_and_what_answered(run, searx):
    searx.fail_next(Reply(404, b"", content_type="text/html"))
    r = run("search", "q", "--max", "1")
    assert (r.code, r.err) == (web.EXIT_UNEXPECTED, f"web.py: SearXNG: {searx.url}/search answered HTTP 404 with an "
                                                    f"empty body — something else answers there: check SEARXNG_URL\n")


def test_hints_name_host_and_port_when_no_url_is_set(run, monkeypatch):
    monkeypatch.setenv("SEARXNG_PORT", "9")
    monkeypatch.setenv("WEB_RETRIES", "0")
    assert run("search", "q").err.endswith("check WEBTOOLS_HOST/SEARXNG_PORT\n")


def test_a_topic_written_with_a_trailing_slash_is_that_topic(run, fire, md_root):
    fire.set_articles("https://a.org/1")
    run("init", "goal", "--topic", "demo/")
    assert sorted(p.name for p in md_root.iterdir()) == ["demo", "t"]
    assert run("scrape", "https://a.org/1", "--topic", "demo/").code == 0
    assert run("status", "--topic", "demo//", "--json").json["saved"] == 1
