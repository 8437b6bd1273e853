"""refresh, line by line: what each outcome prints and records, the header a new version keeps, the
Ctrl-C report, a page that moved by its source URL, a page now another page's text, a private page,
and the summary status and the manifest give — the survivors of a mutation run, pinned."""

import json
import os
import signal
import threading

import pytest

import web
from conftest import read_ledger
from standins import Reply, captured_reply, page_body
from test_history import PAGES, TODAY, article, every_outcome, refresh_topic


def shown(md_root, name):
    return web.display_path(md_root / "s" / "web" / name)


def test_every_outcome_prints_its_line_and_the_totals(run, fire, md_root):
    path, names = refresh_topic(run, fire, md_root, PAGES)
    every_outcome(fire)
    r = run("refresh", "--topic", "s")
    assert (r.code, r.err) == (web.EXIT_PARTIAL, "")
    assert r.out.splitlines() == [
        f"changed    [2] {shown(md_root, 'changes-org-b.v2.md')} (was changes-org-b.md)  https://changes.org/b",
        "           1 quote no longer on the live page",
        '           "Sea stars regrow lost arms over a year"',
        "moved      [4] → https://elsewhere.org/home  https://moves.org/d",
        "           1 quote no longer on the live page",
        '           "Sunflower stars were hit by wasting disease"',
        "gone       [3] target-status: the site answered 404 Not Found  https://gone.org/c",
        "           1 quote no longer on the live page",
        '           "Ochre stars live for twenty years or more"',
        "gone       [6] upstream: Firecrawl: DNS resolution failed for hostname: nohost.org. "
        "[SCRAPE_DNS_RESOLUTION_ERROR]  https://nohost.org/f",
        "           1 quote no longer on the live page",
        '           "Leather stars smell of garlic when handled"',
        "failed     [5] timeout: Firecrawl: Scrape timed out  https://slow.org/e",
        "unchanged  [1]",
        f"refreshed 6 pages cited by {web.display_path(path)}: 1 changed, 1 moved, 2 gone, 1 failed, 1 unchanged · "
        "4 quotes, 0 numbers no longer on the live page"]


def test_the_json_answer_and_the_ledger_carry_each_pages_outcome(run, fire, md_root):
    path, names = refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:3]))
    fire.set_page("https://changes.org/b", article("https://changes.org/b", "Sea stars regrow arms. 2"))
    fire.set_page("https://gone.org/c", captured_reply("notfound.json"))
    answer = run("refresh", "--topic", "s", "--json").json
    assert list(answer)[:2] == ["schema", "ok"] and answer["schema"] == "web.refresh/2" and answer["ok"] is False
    assert isinstance(answer["elapsed_ms"], int) and answer["synthesis"] == web.display_path(path)
    gone = next(e for e in answer["pages"] if e["outcome"] == "gone")
    assert gone == {"n": 3, "url": "https://gone.org/c", "outcome": "gone", "path": shown(md_root, "gone-org-c.md"),
                    "cited": True, "kind": "target-status", "error": "the site answered 404 Not Found",
                    "lost": {"quotes": ["Ochre stars live for twenty years or more"], "numbers": []}}
    events = {e["url"]: e for e in read_ledger(md_root / "s" / "web" / "_ledger.jsonl") if e["command"] == "refresh"}
    changed = events["https://changes.org/b"]
    assert (changed["outcome"], changed["path"], changed["previous"], changed["lost"], changed["synthesis"],
            changed["cited"]) == ("changed", shown(md_root, "changes-org-b.v2.md"), shown(md_root, "changes-org-b.md"),
                                  [1, 0], path.name, True)
    assert len({e["batch"] for e in events.values()}) == 1
    store = web.TopicStore(web.Config({"WEB_MD_ROOT": str(md_root)}, box=False), "s")
    store.refresh()
    for url, name in (("https://same.org/a", "same-org-a.md"), ("https://changes.org/b", "changes-org-b.v2.md")):
        assert events[url]["sha256"] == store.sha_of(str(md_root / "s" / "web" / name))   # the text now live


def test_a_new_version_keeps_the_pages_query_relevance_and_published_day(run, fire, md_root, tmp_path):
    fire.set_page("https://a.org/1", page_body("https://a.org/1", "First text about sea stars. " * 10, title="A",
                                               publishedTime="2024-05-06"))
    run("init", "goal", "--topic", "s")
    picks = tmp_path / "picks.json"
    picks.write_text(json.dumps([{"url": "https://a.org/1", "query": "sea stars", "relevance": "the field count"}]))
    run("scrape", "--topic", "s", "--from", picks)
    fire.set_page("https://a.org/1", page_body("https://a.org/1", "Second text about sea stars. " * 10, title="A"))
    assert run("refresh", "--topic", "s", "--all").code == web.EXIT_PARTIAL
    header = web.read_header(md_root / "s" / "web" / "a-org-1.v2.md")
    assert (header["query"], header["relevance"], header["published"]) == ("sea stars", "the field count",
                                                                           "2024-05-06")
    assert json.loads(fire.requests[-1]["raw"])["onlyMainContent"] is True


def test_a_page_that_answers_from_another_source_url_has_moved(run, fire, md_root):
    refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:1]))
    body = article("https://same.org/a", "Sea stars eat mussels at low tide. 1")
    del body["data"]["metadata"]["url"]
    body["data"]["metadata"]["sourceURL"] = "https://other.org/a"
    fire.set_page("https://same.org/a", body)
    page = run("refresh", "--topic", "s", "--json").json["pages"][0]
    assert (page["outcome"], page["to"]) == ("moved", "https://other.org/a")


@pytest.mark.parametrize("url, final, moved", [
    ("https://a.org/x", "http://a.org/x", False), ("https://a.org/x", "https://www.a.org/x/", False),
    ("https://a.org/x", "https://a.org/x?utm_source=feed", False), ("https://a.org/x", "https://a.org/y", True),
    ("https://a.org/x", "https://b.org/x", True), ("https://a.org/x", None, False), ("https://a.org/x", "", False)])
def test_which_redirects_are_a_move(url, final, moved):
    assert web.moved_elsewhere(url, final) is moved


def test_a_page_whose_text_is_now_another_saved_pages_is_changed_and_named(run, fire, md_root):
    refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:2]))
    fire.set_page("https://changes.org/b", article("https://changes.org/b", "Sea stars eat mussels at low tide. 1"))
    r = run("refresh", "--topic", "s", "--json")
    page = next(e for e in r.json["pages"] if e["url"] == "https://changes.org/b")
    assert (page["outcome"], page["same_as"]) == ("changed", shown(md_root, "same-org-a.md"))
    assert f"changed    [2] {shown(md_root, 'changes-org-b.md')} (same text as {shown(md_root, 'same-org-a.md')})" \
           in run("refresh", "--topic", "s").out


def test_a_page_saved_with_allow_private_is_refreshed_only_with_it(run, fire, md_root):
    # an address web.py only names to the Firecrawl stand-in on loopback; the guard refuses any connection to it
    fire.set_page("http://10.1.2.3/wiki", article("http://10.1.2.3/wiki", "The intranet counted 120 stars."))
    run("init", "goal", "--topic", "s")
    run("scrape", "http://10.1.2.3/wiki", "--topic", "s", "--allow-private")
    page = run("refresh", "--topic", "s", "--all", "--json").json["pages"][0]
    assert (page["outcome"], page["kind"], page["error"]) == (
        "failed", "invalid-url", "private address — if it is your own intranet page, add --allow-private")
    assert run("refresh", "--topic", "s", "--all", "--allow-private").code == 0


def test_refresh_keeps_to_its_workers(run, fire, md_root):
    refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:4]))
    two = fire.open_gate_when(lambda server: server.in_flight == 2)
    assert run("refresh", "--topic", "s", "--workers", "2").code == 0
    assert two["met"] and fire.max_in_flight == 2


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_during_refresh_reports_what_was_done_and_the_rest_in_number_order(run, fire, md_root, as_json):
    refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:4]))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    hold = threading.Event()
    fire.set_page("https://changes.org/b", Reply(200, article("https://changes.org/b", "Regrown. 2"), hold=hold))

    def interrupt_once_b_is_loading():
        for _ in range(2000):
            if fire.in_flight == 1 and len(refresh_events(md_root)) == 1:
                os.kill(os.getpid(), signal.SIGINT)
                return
            threading.Event().wait(0.005)
    threading.Thread(target=interrupt_once_b_is_loading, daemon=True).start()
    try:
        r = run("refresh", "--topic", "s", "--workers", "1", *(["--json"] if as_json else []))
    finally:
        hold.set()
        signal.signal(signal.SIGINT, previous)
    assert r.code == web.EXIT_INTERRUPTED
    assert r.err == "web.py: interrupted — 1 page refreshed and recorded; run refresh again for the rest\n"
    assert len(refresh_events(md_root)) == 1
    if as_json:
        assert (r.json["ok"], r.json["interrupted"], r.json["counts"], r.json["not_attempted"]) == (
            False, True, {"unchanged": 1}, ["https://changes.org/b", "https://gone.org/c", "https://moves.org/d"])
        return
    assert r.out.splitlines() == ["unchanged  [1]", "not attempted  https://changes.org/b",
                                  "not attempted  https://gone.org/c", "not attempted  https://moves.org/d",
                                  f"refreshed 1 page cited by {web.display_path(md_root / 's' / f'how-do-sea-stars-fare-{TODAY}-synthesis.md')}: "
                                  "1 unchanged · 0 quotes, 0 numbers no longer on the live page"]


def refresh_events(md_root):
    return [e for e in read_ledger(md_root / "s" / "web" / "_ledger.jsonl") if e["command"] == "refresh"]


@pytest.mark.parametrize("facts, line", [
    ({"date": "2026-12-01", "pages": 8, "cited": 8, "synthesis": "x-synthesis.md", "quotes": 3, "numbers": 1,
      "changed": [2, 3], "gone": [], "moved": [], "failed": []},
     "refreshed 2026-12-01: 8 cited pages, 2 changed ([2–3]) · 3 quotes and 1 number no longer on the live page"),
    ({"date": "2026-12-01", "pages": 8, "cited": 2, "synthesis": "x-synthesis.md", "quotes": 0, "numbers": 0,
      "changed": [], "gone": [], "moved": [], "failed": []},
     "refreshed 2026-12-01: 8 pages, none changed · 0 quotes and 0 numbers no longer on the live page"),
    ({"date": "2026-12-01", "pages": 8, "cited": 0, "synthesis": None, "quotes": 1, "numbers": 0, "changed": [],
      "gone": [4], "moved": [5, 6], "failed": [1, 2, 8]},
     "refreshed 2026-12-01: 8 pages, 2 moved ([5–6]), 1 gone ([4]), 3 failed ([1–2], [8]) · 1 quote and 0 numbers no "
     "longer on the live page")])
def test_the_refresh_summary_status_and_the_manifest_show(facts, line):
    assert web.render_refreshed(facts) == line


def test_a_topic_whose_synthesis_cites_no_saved_page_has_nothing_to_refresh(run, md_root):
    (md_root / "s").mkdir()
    run("init", "goal", "--topic", "s")
    (md_root / "s" / "notes.md").write_text("# Notes\n\nDivers logged cold water.\n", encoding="utf-8")
    (md_root / "s" / "goal-synthesis.md").write_text(
        "# Goal\n\n## Summary\n\nDivers logged cold water [C1](notes.md).\n\n## Findings\n\n- Cold [C1](notes.md).\n",
        encoding="utf-8")
    r = run("refresh", "--topic", "s")
    assert (r.code, r.err) == (web.EXIT_USAGE, "web.py: usage: nothing to refresh in topic 's' — scrape pages "
                                                "first, or cite saved pages\n")


def test_a_refresh_that_changed_nothing_is_ok_and_one_the_box_stopped_lists_what_it_did_not_try(run, fire, md_root,
                                                                                               monkeypatch):
    refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:3]))
    answer = run("refresh", "--topic", "s", "--json").json
    assert (answer["ok"], answer["counts"]) == (True, {"unchanged": 3})
    monkeypatch.setenv("FIRECRAWL_URL", "http://127.0.0.1:9")
    r = run("refresh", "--topic", "s", "--workers", "1", "--json")
    assert r.code == web.EXIT_UNREACHABLE and r.json["ok"] is False
    assert r.json["not_attempted"] == ["https://changes.org/b", "https://gone.org/c"]
    failed = r.json["pages"][0]
    assert (failed["outcome"], failed["kind"], failed["error"]) == (
        "failed", "http", "Firecrawl: at http://127.0.0.1:9 refused the connection (3 attempts) — is the webtools box "
                          "up? check FIRECRAWL_URL")


def test_a_page_whose_final_address_is_elsewhere_has_moved_though_its_source_url_is_the_one_asked(run, fire,
                                                                                                 md_root):
    url = "https://moves.org/d"
    refresh_topic(run, fire, md_root, {url: PAGES[url]})
    answer = article(url, PAGES[url])
    answer["data"]["metadata"]["url"] = "https://elsewhere.org/home"   # Firecrawl's final address; sourceURL asked
    fire.set_page(url, Reply(200, answer))
    page = run("refresh", "--topic", "s", "--json").json["pages"][0]
    assert (page["outcome"], page["to"]) == ("moved", "https://elsewhere.org/home")


def test_a_page_now_behind_a_bot_challenge_is_gone(run, fire, md_root):
    url = "https://same.org/a"
    refresh_topic(run, fire, md_root, {url: PAGES[url]})
    fire.set_page(url, Reply(200, page_body(url, "# Just a moment...\n\nChecking your browser.\n", title="Just a moment...")))
    page = run("refresh", "--topic", "s", "--json").json["pages"][0]
    assert (page["outcome"], page["kind"]) == ("gone", "blocked")


def test_a_page_found_unchanged_only_under_the_save_lock_is_unchanged_with_its_digest(run, fire, md_root, monkeypatch):
    url = "https://same.org/a"
    refresh_topic(run, fire, md_root, {url: PAGES[url]})
    files = web.page_files(md_root / "s" / "web")
    real, calls = web.TopicStore.sha_of, []

    def stale_first(self, path):   # as if another process saved this text between the check and the lock
        calls.append(path)
        return None if len(calls) == 1 else real(self, path)
    monkeypatch.setattr(web.TopicStore, "sha_of", stale_first)
    r = run("refresh", "--topic", "s", "--json")
    assert len(calls) == 2 and r.json["pages"][0]["outcome"] == "unchanged" and r.json["ok"] is True
    saved = [e for e in read_ledger(md_root / "s" / "web" / "_ledger.jsonl") if e["command"] == "scrape"]
    assert refresh_events(md_root)[-1]["sha256"] == saved[0]["sha256"]
    assert web.page_files(md_root / "s" / "web") == files                       # no new version


def test_each_refresh_is_summed_on_its_own_and_says_each_page_as_it_settles(run, fire, md_root):
    refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:2]))
    run("refresh", "--topic", "s")
    r = run("refresh", "--topic", "s", "--workers", "1", tty=True)   # one at a time: in number order
    assert r.err.splitlines() == ["[1] unchanged  https://same.org/a", "[2] unchanged  https://changes.org/b"]
    assert run("status", "--topic", "s", "--json").json["refreshed"]["pages"] == 2


def test_refresh_fetches_the_pages_the_synthesis_cites_and_with_all_every_saved_page(run, fire, md_root):
    url, extra = "https://same.org/a", "https://changes.org/b"
    refresh_topic(run, fire, md_root, {url: PAGES[url]})
    fire.set_page(extra, article(extra, PAGES[extra]))
    assert run("scrape", extra, "--topic", "s").code == 0            # saved, never cited
    assert [p["url"] for p in run("refresh", "--topic", "s", "--json").json["pages"]] == [url]
    assert [p["url"] for p in run("refresh", "--topic", "s", "--all", "--json").json["pages"]] == [url, extra]


# --- what a refresh names, records and says as it goes -----------------------------------------------------------

def test_a_final_address_given_without_its_scheme_is_the_same_page_not_a_move():
    assert web.moved_elsewhere("https://a.org/x", "a.org/x") is False
    assert web.moved_elsewhere("https://a.org/x", "b.org/x") is True


def test_a_gone_page_the_synthesis_cites_in_both_versions_lost_what_it_took_from_each(run, fire, md_root):
    from test_history import A, start_run, synthesis_text, write
    fire.set_page(A, article(A, '"Every pool held a star" in 2019.'))
    first, _ = start_run(run)
    run("scrape", A, "--topic", "s")
    fire.set_page(A, article(A, '"Most pools held a star" in 2025.'))
    run("refresh", "--topic", "s", "--all")
    path = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", synthesis_text(
        first, 'In 2019 the page said "Every pool held a star" [1](web/a-org-stars.md).',
        ['In 2025 it says "Most pools held a star" [1](web/a-org-stars.v2.md).']))
    fire.set_page(A, captured_reply("notfound.json"))
    r = run("refresh", "--topic", "s")
    assert r.out.splitlines() == [
        "gone       [1] target-status: the site answered 404 Not Found  https://a.org/stars",
        "           2 quotes and 2 numbers no longer on the live page: 2019, 2025",
        '           "Every pool held a star"',
        '           "Most pools held a star"',
        f"refreshed 1 page cited by {web.display_path(path)}: 1 gone · 2 quotes, 2 numbers no longer on the live page"]


def test_refresh_on_a_terminal_names_a_changed_page_by_its_new_version_as_it_settles(run, fire, md_root):
    refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:2]))
    fire.set_page("https://changes.org/b", article("https://changes.org/b", "Sea stars regrow arms. 2"))
    r = run("refresh", "--topic", "s", "--workers", "1", tty=True)
    assert r.err.splitlines() == ["[1] unchanged  https://same.org/a",
                                  f"[2] changed  {shown(md_root, 'changes-org-b.v2.md')}"]


def test_a_page_now_another_pages_text_says_what_it_lost_and_the_ledger_keeps_that_texts_digest(run, fire, md_root):
    path, _ = refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:2]))
    fire.set_page("https://changes.org/b", article("https://changes.org/b", "Sea stars eat mussels at low tide. 1"))
    r = run("refresh", "--topic", "s")
    assert r.out.splitlines() == [
        f"changed    [2] {shown(md_root, 'changes-org-b.md')} (same text as {shown(md_root, 'same-org-a.md')})  "
        "https://changes.org/b",
        "           1 quote no longer on the live page",
        '           "Sea stars regrow lost arms over a year"',
        "unchanged  [1]",
        f"refreshed 2 pages cited by {web.display_path(path)}: 1 changed, 1 unchanged · 1 quote, 0 numbers no longer "
        "on the live page"]
    store = web.TopicStore(web.Config({"WEB_MD_ROOT": str(md_root)}, box=False), "s")
    store.refresh()
    changed = next(e for e in refresh_events(md_root) if e["url"] == "https://changes.org/b")
    assert (changed["sha256"], changed["lost"]) == (store.sha_of(str(md_root / "s" / "web" / "same-org-a.md")), [1, 0])


def test_a_firecrawl_that_wants_a_key_fails_the_refresh_as_an_http_error_and_says_so(run, fire, md_root):
    path, _ = refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:2]))
    fire.require_key = "secret"
    r = run("refresh", "--topic", "s", "--workers", "1")
    assert (r.code, r.err) == (web.EXIT_CONFIG, "web.py: Firecrawl: wants an API key (HTTP 401) — set FIRECRAWL_API_KEY\n")
    assert r.out.splitlines() == [
        "failed     [1] http: Firecrawl: wants an API key (HTTP 401) — set FIRECRAWL_API_KEY  https://same.org/a",
        "not attempted  https://changes.org/b",
        f"refreshed 1 page cited by {web.display_path(path)}: 1 failed · 0 quotes, 0 numbers no longer on the live page"]
