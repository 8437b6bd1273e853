"""scrape --topic, the batch, pinned: each candidate's ledger line (run, round, query, batch, pick) whatever its
outcome; how many pages load beyond --limit and when the progress line of a saved page comes; the number a page
saved before the ledger knew it gets; how long a straggler is waited for; --full-page for every pick; and Ctrl-C —
held while a page and its ledger line are written, reported with every page still loading, with the pages saved at
once beside a higher pick still loading, with the limit that left a page unused, and left alone when ignored."""

import hashlib
import json
import shutil
import signal
import threading
import time
from concurrent.futures import Future

import pytest

import web
from conftest import read_ledger
from standins import Reply, article_page
from test_faults import _wait_for


def shown(md_root, name, topic="t"):
    return web.display_path(md_root / topic / "web" / name)


def scrape_events(md_root):
    """The topic's scrape ledger lines, one batch, with its id and each line's time replaced by B and T."""
    events = [e for e in read_ledger(md_root / "t" / "web" / "_ledger.jsonl") if e["command"] == "scrape"]
    assert len({e["batch"] for e in events}) == 1
    return [dict(e, batch="B", time="T") for e in events]


def loaded_at_once(function, *args):
    """fetch_in_background on a box that answers before the batch looks: the page has loaded when it returns."""
    future = Future()
    try:
        future.set_result(function(*args))
    except BaseException as err:
        future.set_exception(err)
    return future


def held(fire, url):
    """The page answers once the returned event is set (by the test, at the latest when it ends)."""
    hold = threading.Event()
    fire.set_page(url, Reply(200, article_page(url), hold=hold))
    return hold


def saved_line(md_root, name, url, words=262):
    return f"saved    [1] {shown(md_root, name)}  ({words} words)  {url}"


# --- the ledger: one line a candidate, whatever became of it ---------------------------------------------

def test_every_candidate_of_a_runs_batch_has_its_ledger_line_with_run_round_query_batch_and_pick(
        run, fire, md_root, tmp_path, monkeypatch):
    monkeypatch.setattr(web, "fetch_in_background", loaded_at_once)
    assert run("init", "tide pools", "--topic", "t", "--max-sources", "5").code == 0
    run_id = read_ledger(md_root / "t" / "web" / "_ledger.jsonl")[0]["run"]
    (md_root / "t" / "sources.txt").write_text("block blocked.org a content farm\n", encoding="utf-8")
    fire.set_articles("https://a.org/1", "https://b.org/2", "https://c.org/3", "https://d.org/4")
    picks = tmp_path / "picks.json"
    # 10.0.0.1 is refused as private before any request (the loopback guard would refuse a connection anyway)
    picks.write_text(json.dumps([{"url": "https://a.org/1", "query": "tides"},
                                 {"url": "http://10.0.0.1/x", "query": "tides"},
                                 {"url": "https://blocked.org/p", "query": "tides"},
                                 {"url": "https://b.org/2", "query": "rock pools"},
                                 {"url": "https://c.org/3", "query": "tides"},
                                 {"url": "https://d.org/4"}]), encoding="utf-8")
    r = run("scrape", "--topic", "t", "--from", picks, "--limit", "1", "--workers", "2")
    private = "private address — if it is your own intranet page, add --allow-private"
    policy = (f"blocked by {web.display_path(md_root / 't' / 'sources.txt')}:1 (a content farm) — remove the rule, "
              f"or scrape it with --force")
    assert r.code == 0
    assert r.out == (f"{saved_line(md_root, 'a-org-1.md', 'https://a.org/1')}\n"
                     f"failed   invalid-url: {private}  http://10.0.0.1/x\n"
                     f"failed   policy: {policy}  https://blocked.org/p\n"
                     "unused   not needed: --limit 1 was met  https://b.org/2\n"
                     "not attempted  https://c.org/3\n"
                     "not attempted  https://d.org/4\n")
    assert r.err == (f"web.py: scrape: http://10.0.0.1/x: invalid-url: {private}\n"
                     f"web.py: scrape: https://blocked.org/p: policy: {policy}\n")
    assert "http://10.0.0.1/x" not in fire.scraped_urls()   # not even named to Firecrawl
    body = web.split_saved((md_root / "t" / "web" / "a-org-1.md").read_text("utf-8"))[1]
    line = {"run": run_id, "time": "T", "command": "scrape", "round": 1, "batch": "B"}
    assert scrape_events(md_root) == [
        dict(line, url="http://10.0.0.1/x", query="tides", outcome="failed", pick=2, kind="invalid-url",
             error=private),
        dict(line, url="https://blocked.org/p", query="tides", outcome="failed", pick=3, kind="policy",
             error=policy),
        dict(line, url="https://a.org/1", query="tides", outcome="saved", pick=1, path=shown(md_root, "a-org-1.md"),
             sha256=hashlib.sha256(body.encode("utf-8")).hexdigest(), words=262, chars=len(body), flags=[],
             title="Understanding Tide Pools | Coastal Notes"),
        dict(line, url="https://b.org/2", query="rock pools", outcome="unused", pick=4,
             reason="not needed: --limit 1 was met"),
        dict(line, url="https://c.org/3", query="tides", outcome="not_attempted", pick=5),
        dict(line, url="https://d.org/4", query=None, outcome="not_attempted", pick=6)]


def test_a_box_that_fails_ends_the_batch_and_each_candidate_has_its_pick_in_the_ledger(run, fire, md_root):
    fire.fail_next(*[Reply(503, "busy", content_type="text/plain")] * 3)   # 3 attempts: WEB_RETRIES is 2
    fire.set_articles("https://a.org/1", "https://b.org/2")
    r = run("scrape", "https://a.org/1", "https://b.org/2", "--topic", "t", "--workers", "1")
    line = (f"Firecrawl: at {fire.url} answered HTTP 503 (3 attempts) — the service is failing: check its logs on "
            f"the webtools box")
    assert (r.code, r.err) == (web.EXIT_UNREACHABLE, f"web.py: {line}\n")
    assert r.out == f"failed   http: {line}  https://a.org/1\nnot attempted  https://b.org/2\n"
    shape = {"run": None, "time": "T", "command": "scrape", "round": 0, "query": None, "batch": "B"}
    assert scrape_events(md_root) == [
        dict(shape, url="https://a.org/1", outcome="failed", pick=1, kind="http", error=line),
        dict(shape, url="https://b.org/2", outcome="not_attempted", pick=2)]


# --- how many pages load beyond --limit, and the progress once a straggler is left ------------------------------

def test_with_limit_1_one_page_loads_beyond_it_and_the_saved_page_is_announced_when_the_straggler_is_left(
        run, fire, md_root, monkeypatch):
    monkeypatch.setattr(web, "STRAGGLER_GRACE", 0.05)
    hold = held(fire, "https://slow.org/x")
    fire.set_articles("https://b.org/1", "https://c.org/2", "https://d.org/3")
    urls = ["https://slow.org/x", "https://b.org/1", "https://c.org/2", "https://d.org/3"]
    try:
        r = run("scrape", *urls, "--topic", "t", "--limit", "1", "--workers", "3", tty=True)
    finally:
        hold.set()
    assert r.code == 0
    assert r.out == (f"{saved_line(md_root, 'b-org-1.md', 'https://b.org/1')}\n"
                     "unused   not needed: --limit 1 was met  https://slow.org/x\n"
                     "not attempted  https://c.org/2\nnot attempted  https://d.org/3\n")
    assert r.err == f"[1] saved {shown(md_root, 'b-org-1.md')}\n"     # once the straggler is left, not before
    assert sorted(fire.scraped_urls()) == ["https://b.org/1", "https://slow.org/x"]


# --- numbers in the report ---------------------------------------------------------------------------------

def test_a_page_copied_in_from_another_topic_is_skipped_with_the_number_the_manifest_gives_it(run, fire, md_root):
    (md_root / "u").mkdir()
    fire.set_articles("https://old.org/page", "https://new.org/x")
    assert run("scrape", "https://old.org/page", "--topic", "u").code == 0
    (md_root / "t" / "web").mkdir()
    shutil.copy(md_root / "u" / "web" / "old-org-page.md", md_root / "t" / "web" / "old-org-page.md")
    r = run("scrape", "https://old.org/page", "https://new.org/x", "--topic", "t", "--json")
    assert r.code == 0 and len(fire.requests) == 2
    assert r.json["skipped"] == [{"url": "https://old.org/page", "reason": "already saved",
                                  "path": shown(md_root, "old-org-page.md"), "n": 2}]
    assert [(e["n"], e["url"]) for e in r.json["saved"]] == [(1, "https://new.org/x")]
    manifest = run("manifest", "--topic", "t", "--json").json
    assert [(s["n"], s["url"]) for s in manifest["saved"]] == [(1, "https://new.org/x"), (2, "https://old.org/page")]


# --- how long a straggler is waited for ----------------------------------------------------------------------

def straggler_batch(fetch_times, started_ago, grace_until=None):
    """A batch with --limit 3 that could meet it (two saved, one in reserve) while its first pick still loads."""
    batch = object.__new__(web.ScrapeBatch)
    batch.limit, batch.saved, batch.ready, batch.grace_until = 3, [{}, {}], {4: None}, grace_until
    straggler = object()
    batch.in_flight, batch.fetch_times = {straggler: (1, {})}, fetch_times
    batch.started = {straggler: time.monotonic() - started_ago}
    return batch


def test_on_a_slow_box_a_straggler_waits_three_times_the_median_of_the_batchs_fetch_times():
    batch = straggler_batch([2.0, 1.0, 2.0, 1.0, 2.0], started_ago=1.0)     # median 2 s, not the faster 1 s
    assert batch.straggler_wait() == pytest.approx(3 * 2.0 - 1.0, abs=0.05)


def test_a_straggler_whose_grace_is_over_is_waited_for_no_longer():
    assert straggler_batch([0.2], 0.3, grace_until=time.monotonic() - 0.5).straggler_wait() == 0.0


# --- Ctrl-C --------------------------------------------------------------------------------------------------

@pytest.fixture
def ctrl_c():
    """SIGINT as a terminal starts Python (default_int_handler); a way to press Ctrl-C from another thread."""
    if not hasattr(signal, "pthread_kill"):
        pytest.skip("a signal to the main thread from another is POSIX")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    main = threading.main_thread().ident
    yield lambda: signal.pthread_kill(main, signal.SIGINT)
    signal.signal(signal.SIGINT, previous)


INTERRUPTED = ("web.py: interrupted — {} saved and kept; to go on, run the same command again (pages already saved "
               "are skipped)\n")


def test_ctrl_c_while_a_page_is_written_is_held_until_its_ledger_line_is_written(run, fire, md_root, monkeypatch,
                                                                                 ctrl_c):
    monkeypatch.setattr(web, "fetch_in_background", loaded_at_once)
    write = web.TopicStore.save

    def save_then_ctrl_c(store, *args, **kwargs):   # the page is on disk, its ledger line not yet
        answer = write(store, *args, **kwargs)
        signal.raise_signal(signal.SIGINT)
        return answer
    monkeypatch.setattr(web.TopicStore, "save", save_then_ctrl_c)
    fire.set_articles("https://a.org/1", "https://b.org/2", "https://c.org/3")
    r = run("scrape", "https://a.org/1", "https://b.org/2", "https://c.org/3", "--topic", "t", "--workers", "1")
    assert (r.code, r.err) == (web.EXIT_INTERRUPTED, INTERRUPTED.format("1 page"))
    assert r.out == (f"{saved_line(md_root, 'a-org-1.md', 'https://a.org/1')}\n"
                     "not attempted  https://b.org/2\nnot attempted  https://c.org/3\n")
    assert [(e["outcome"], e["url"], e["pick"], e.get("path") or e.get("reason")) for e in scrape_events(md_root)] == [
        ("saved", "https://a.org/1", 1, shown(md_root, "a-org-1.md")),   # the page, then what was not reached
        ("not_attempted", "https://b.org/2", 2, "interrupted"), ("not_attempted", "https://c.org/3", 3, "interrupted")]


def test_ctrl_c_with_two_pages_loading_reports_both_not_attempted_in_pick_order(run, fire, md_root, ctrl_c):
    holds = [held(fire, "https://b.org/2"), held(fire, "https://c.org/3")]
    fire.set_articles("https://a.org/1", "https://d.org/4")

    def press_once_b_and_c_load():
        if _wait_for(lambda: fire.in_flight == 2 and len(fire.requests) == 3):
            ctrl_c()
    threading.Thread(target=press_once_b_and_c_load, daemon=True).start()
    try:
        r = run("scrape", "https://a.org/1", "https://b.org/2", "https://c.org/3", "https://d.org/4", "--topic", "t",
                "--workers", "2", "--json")
    finally:
        for hold in holds:
            hold.set()
    assert (r.code, r.err) == (web.EXIT_INTERRUPTED, INTERRUPTED.format("1 page"))
    assert [e["url"] for e in r.json["saved"]] == ["https://a.org/1"] and r.json["interrupted"] is True
    assert r.json["not_attempted"] == ["https://b.org/2", "https://c.org/3", "https://d.org/4"]


def test_pages_with_room_beside_a_higher_pick_still_loading_are_saved_at_once_and_kept_on_ctrl_c(run, fire, md_root,
                                                                                                   ctrl_c):
    hold = held(fire, "https://a.org/1")   # the top pick loads; --limit 3 leaves room for it and the next two
    fire.set_articles("https://b.org/2", "https://c.org/3")
    web_dir = md_root / "t" / "web"

    def press_once_b_and_c_are_saved():
        _wait_for(lambda: (web_dir / "b-org-2.md").exists() and (web_dir / "c-org-3.md").exists(), timeout=5)
        ctrl_c()
    threading.Thread(target=press_once_b_and_c_are_saved, daemon=True).start()
    try:
        r = run("scrape", "https://a.org/1", "https://b.org/2", "https://c.org/3", "--topic", "t", "--limit", "3",
                "--workers", "3")
    finally:
        hold.set()
    assert (r.code, r.err) == (web.EXIT_INTERRUPTED, INTERRUPTED.format("2 pages").replace(
        "skipped)", "skipped; lower --limit by 2)"))
    assert r.out == (f"saved    [1] {shown(md_root, 'b-org-2.md')}  (262 words)  https://b.org/2\n"
                     f"saved    [2] {shown(md_root, 'c-org-3.md')}  (262 words)  https://c.org/3\n"
                     "not attempted  https://a.org/1\n")


def test_ctrl_c_just_as_the_batch_ends_reports_the_page_left_unused_with_the_limit_that_was_met(
        run, fire, md_root, monkeypatch, ctrl_c):
    monkeypatch.setattr(web, "fetch_in_background", loaded_at_once)
    close = web.InterruptGate.__exit__

    def close_then_ctrl_c(gate, *exc):   # Ctrl-C is a plain KeyboardInterrupt again once the gate is closed
        close(gate, *exc)
        signal.raise_signal(signal.SIGINT)
    monkeypatch.setattr(web.InterruptGate, "__exit__", close_then_ctrl_c)
    fire.set_articles("https://a.org/1", "https://b.org/2", "https://c.org/3")
    r = run("scrape", "https://a.org/1", "https://b.org/2", "https://c.org/3", "--topic", "t", "--limit", "1",
            "--workers", "2")
    assert (r.code, r.err) == (web.EXIT_INTERRUPTED, INTERRUPTED.format("1 page").replace(
        "skipped)", "skipped; lower --limit by 1)"))
    assert r.out == (f"{saved_line(md_root, 'a-org-1.md', 'https://a.org/1')}\n"
                     "unused   not needed: --limit 1 was met  https://b.org/2\n"
                     "not attempted  https://c.org/3\n")


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="a signal to the main thread from another is POSIX")
def test_a_batch_started_with_ctrl_c_ignored_runs_to_the_end(run, fire, md_root):
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)   # as a shell script's `&` starts a job
    hold = held(fire, "https://b.org/2")
    fire.set_articles("https://a.org/1", "https://c.org/3")

    def press_while_b_loads():
        if _wait_for(lambda: fire.in_flight == 1 and (md_root / "t" / "web" / "a-org-1.md").exists()):
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        hold.set()
    threading.Thread(target=press_while_b_loads, daemon=True).start()
    try:
        r = run("scrape", "https://a.org/1", "https://b.org/2", "https://c.org/3", "--topic", "t", "--workers", "1",
                "--json")
    finally:
        hold.set()
        left = signal.signal(signal.SIGINT, previous)
    assert (r.code, r.err) == (0, "")
    assert [(e["n"], e["url"]) for e in r.json["saved"]] == [
        (1, "https://a.org/1"), (2, "https://b.org/2"), (3, "https://c.org/3")]
    assert left is signal.SIG_IGN                              # and still ignored afterwards


# --- what the batch asks Firecrawl ---------------------------------------------------------------------------

def test_full_page_asks_firecrawl_for_the_whole_page_of_every_pick_of_a_batch(run, fire, md_root):
    fire.set_articles("https://a.org/1", "https://b.org/2")
    assert run("scrape", "https://a.org/1", "https://b.org/2", "--topic", "t", "--full-page").code == 0
    bodies = sorted((json.loads(request["raw"]) for request in fire.requests), key=lambda body: body["url"])
    assert [(body["url"], body["onlyMainContent"]) for body in bodies] == [
        ("https://a.org/1", False), ("https://b.org/2", False)]
