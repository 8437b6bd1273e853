"""scrape, what a user meets around the batch: the two usage errors that name their fix, the header a
saved page gets from Firecrawl's metadata (a redirect known only by its sourceURL, a status without a
content type), the time a --topic --json answer reports, a --from pipe that is too long refused without
waiting for its end, and pages that load on threads that never hold the exit — survivors of a mutation
run, pinned."""

import json
import os
import threading

import pytest

import web
from standins import article_markdown, page_body


def saved_header(md_root, name):
    """The provenance header of a page saved in topic t, up to and with its NOTE line."""
    text = (md_root / "t" / "web" / name).read_text("utf-8")
    return text[:text.index(web.NOTE_LINE) + len(web.NOTE_LINE)].splitlines()


def fixed_lines(url):
    return [f"> source: {url}  ", "> query: (none)  ", f"> fetched: {web.now_utc():%Y-%m-%d}  ", "> relevance: (none)  ",
            "> title: A page  "]


# --- usage errors name their fix --------------------------------------------------------------------------

def test_out_with_topic_is_refused_naming_both_ways_to_save(run, fire, tmp_path):
    r = run("scrape", "https://a.org/", "--topic", "t", "--out", tmp_path / "x.md")
    assert (r.code, r.out, r.err) == (web.EXIT_USAGE, "", "web.py: usage: --out and --topic do not go together — "
                                                          "save into the topic, or to one file\n")
    assert fire.requests == []


def test_json_without_topic_or_out_is_refused_saying_the_page_would_be_printed(run, fire):
    r = run("scrape", "https://a.org/", "--json")
    line = "usage: --json needs --topic or --out — without them the page itself is printed"
    assert (r.code, r.err) == (web.EXIT_USAGE, f"web.py: {line}\n")
    assert r.json == {"schema": "web.scrape/3", "ok": False, "errors": [{"service": "usage", "error": line,
                                                                         "code": web.EXIT_USAGE}]}
    assert fire.requests == []


# --- the header Firecrawl's metadata shapes --------------------------------------------------------------

def test_a_redirect_firecrawl_names_only_by_its_source_url_is_recorded_in_the_header(run, fire, md_root):
    body = page_body("https://a.org/1", article_markdown())
    del body["data"]["metadata"]["url"]   # an answer without the final address: sourceURL says where it ended
    body["data"]["metadata"]["sourceURL"] = "https://b.org/moved"
    fire.set_page("https://a.org/1", body)
    assert run("scrape", "https://a.org/1", "--topic", "t").code == web.EXIT_OK
    assert saved_header(md_root, "a-org-1.md") == fixed_lines("https://a.org/1") + [
        "> status: 200 text/html  ", "> redirected: https://b.org/moved  ", web.NOTE_LINE]


@pytest.mark.parametrize("status, content_type, shown", [
    (200, None, ["> status: 200  "]), (None, "text/html", ["> status: text/html  "]), (None, None, [])])
def test_the_status_line_shows_what_firecrawl_gave_and_nothing_for_what_it_did_not(run, fire, md_root, status,
                                                                                   content_type, shown):
    fire.set_page("https://a.org/1", page_body("https://a.org/1", article_markdown(), status=status,
                                               content_type=content_type))
    assert run("scrape", "https://a.org/1", "--topic", "t").code == web.EXIT_OK
    assert saved_header(md_root, "a-org-1.md") == fixed_lines("https://a.org/1") + shown + [web.NOTE_LINE]


# --- the --topic --json answer ------------------------------------------------------------------------------

def test_a_topic_scrape_answers_in_json_with_the_milliseconds_it_took(run, fire, md_root):
    fire.set_articles("https://a.org/1")
    answer = run("scrape", "https://a.org/1", "--topic", "t", "--json").json
    assert isinstance(answer.pop("elapsed_ms"), int)
    assert answer == {"schema": "web.scrape/3", "ok": True, "saved": [
        {"n": 1, "url": "https://a.org/1", "path": web.display_path(md_root / "t" / "web" / "a-org-1.md"),
         "title": "Understanding Tide Pools | Coastal Notes", "words": answer["saved"][0]["words"]}]}


# --- --from: a pipe longer than the cap ---------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_from_pipe_past_the_cap_is_refused_without_waiting_for_the_pipe_to_end(run, monkeypatch, tmp_path):
    monkeypatch.setattr(web, "FROM_CAP", 1024 * 1024)
    pipe, refused, waited = tmp_path / "picks", threading.Event(), []
    os.mkfifo(pipe)

    def producer():   # a process substitution that keeps writing: more than the cap, and its end only later
        with open(pipe, "wb") as out:
            out.write(json.dumps(["https://a.org/"] * 70000).encode("utf-8")[:web.FROM_CAP + 1])
            waited.append(refused.wait(10))   # the pipe stays open until web.py has answered (or 10 s)

    feeding = threading.Thread(target=producer, daemon=True)
    feeding.start()
    r = run("scrape", "--from", pipe, "--topic", "t")
    refused.set()
    feeding.join(15)
    assert (r.code, r.err) == (web.EXIT_USAGE, f"web.py: usage: --from {pipe} is larger than 1 MiB — give at most "
                                               f"1000 candidates\n")
    assert waited == [True]   # answered while the pipe was still open


# --- fetching ----------------------------------------------------------------------------------------------

def test_pages_load_on_daemon_threads_so_a_straggler_never_holds_the_exit():
    """A page left loading when the budget is met runs on a daemon thread: Python exits without waiting."""
    assert web.fetch_in_background(lambda: threading.current_thread().daemon).result(timeout=10) is True
