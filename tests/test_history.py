"""A topic outlives its run: every run's synthesis is its own file, a page fetched again with other
text is a new version beside the old, each synthesis is checked against the versions it cites,
refresh says what changed on the live pages, and the hooks keep what earlier runs wrote."""

import hashlib
import json
import os

import pytest

import web
from conftest import read_ledger
from standins import Reply, captured_reply, page_body
from test_gate import captured

TODAY = f"{web.now_utc():%Y-%m-%d}"
GOAL = "how do sea stars fare"
FILLER = " ".join(f"word{i}" for i in range(40))


def article(url, text, title="Sea stars"):
    """A Firecrawl answer for `url` whose page says `text` (and enough words not to count as empty)."""
    return page_body(url, f"# {title}\n\n{text}\n\n{FILLER}\n", title=title)


A, B, C = "https://a.org/stars", "https://b.org/pools", "https://c.org/census"


def start_run(run, topic="s", goal=GOAL, sources=4):
    answer = run("init", goal, "--topic", topic, "--max-sources", sources, "--json").json
    return answer["run"], answer


def synthesis_text(run_id, summary, findings):
    return (f"# Sea stars\n\n> goal: {GOAL}\n> topic: s · run {run_id} · {TODAY}\n\n## Summary\n\n{summary}\n\n"
            f"## Findings\n\n" + "".join(f"- {f}\n" for f in findings))


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def hook(run, event, payload):
    """A hook as Claude Code runs it (here in-process): (its JSON answer or None, stderr)."""
    r = run("hook", event, stdin=json.dumps(payload))
    assert r.code == 0
    return (json.loads(r.out) if r.out.strip() else None), r.err


def decision(run, payload):
    answer = hook(run, "pre", payload)[0]
    return answer and answer["hookSpecificOutput"]


def tool_call(name, cwd, tool_name, **tool_input):
    payload = captured(name, cwd=str(cwd))
    payload["tool_name"], payload["tool_input"] = tool_name, tool_input
    return payload


def auditor_answer(cwd, path, text="Problems: 0"):
    payload = captured("posttooluse-agent.json", cwd=str(cwd))
    payload["tool_input"] = dict(payload["tool_input"], subagent_type="citation-auditor", prompt=f"Synthesis: {path}")
    payload["tool_response"] = dict(payload["tool_response"], content=[{"type": "text", "text": text}])
    return payload


def files_of(root):
    """{path: bytes} of every file under a folder (the lock and the caches in web/.index aside)."""
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".index"]
        for name in names:
            if name != ".lock":
                with open(os.path.join(folder, name), "rb") as handle:
                    found[os.path.join(folder, name)] = handle.read()
    return found


def ledger(md_root, topic="s"):
    return read_ledger(md_root / topic / "web" / "_ledger.jsonl")


# --- every run's synthesis is its own file; init and status know the goal's history -----------------------

def test_a_second_run_of_a_goal_writes_its_own_synthesis_and_init_names_the_earlier_one(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    first, answer = start_run(run)
    path = md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md"
    assert answer["synthesis"] == web.display_path(path) and "earlier" not in answer
    run("scrape", A, "--topic", "s")
    write(path, synthesis_text(first, "The survey counted 120 sea stars [1](web/a-org-stars.md).",
                               ["It counted 120 [1](web/a-org-stars.md)."]))
    assert run("cite-check", path).code == 0
    hook(run, "post", auditor_answer(md_root.parent, path))
    second, answer = start_run(run)
    mine = md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-2-synthesis.md"   # the same day: -2
    assert answer["synthesis"] == web.display_path(mine)
    audit = web.display_path(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-audit.md")
    assert answer["earlier"] == {"path": web.display_path(path), "run": first, "date": TODAY, "status": "passed",
                                 "errors": 0, "checked": TODAY, "audit": {"problems": 0, "current": True, "path": audit}}
    assert answer["earlier_count"] == 1
    human = run("init", GOAL, "--topic", "s").out.splitlines()
    assert f"  earlier synthesis of this goal: {web.display_path(path)} — {TODAY} · passed cite-check on {TODAY} · " \
           f"audited: 0 problems ({audit})" in human
    status = run("status", "--topic", "s", "--json").json
    assert status["next"].startswith("search round 1")                 # never the earlier run's next step
    assert status["synthesis"]["status"] == "unwritten" and status["earlier"]["path"] == web.display_path(path)
    assert "earlier" not in run("init", "another goal", "--topic", "s", "--json").json
    unchecked = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-4-synthesis.md", "# Written, never checked\n")
    human = run("init", GOAL, "--topic", "s").out    # no run claimed that file: it counts, before the runs' own
    assert f"  earlier synthesis of this goal: {web.display_path(path)} — {TODAY} · passed cite-check on {TODAY} · " \
           f"audited: 0 problems ({audit}) · the latest of 2 (the manifest lists them all)\n" in human
    run("manifest", "--topic", "s")
    assert f"- [{unchecked.name}](../{unchecked.name}) — {TODAY} · not checked yet" in \
        (md_root / "s" / "web" / "_manifest.md").read_text("utf-8")


def test_the_manifest_lists_every_synthesis_latest_first_with_its_run_date_and_state(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    first, _ = start_run(run)
    run("scrape", A, "--topic", "s")
    old = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", synthesis_text(
        first, "It counted 120 [1](web/a-org-stars.md).", ["120 sea stars [1](web/a-org-stars.md)."]))
    run("cite-check", old)
    second, _ = start_run(run)
    new = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-2-synthesis.md", synthesis_text(
        second, "It counted 121 [1](web/a-org-stars.md).", ["121 sea stars [1](web/a-org-stars.md)."]))
    run("cite-check", new)
    run("manifest", "--topic", "s")
    text = (md_root / "s" / "web" / "_manifest.md").read_text("utf-8")
    rows = text[text.index("## Syntheses"):].splitlines()[4:6]
    assert rows == [f"- **[{new.name}](../{new.name})** (latest) — run 2, {TODAY} · fails cite-check: 2 errors ({TODAY})",
                    f"- [{old.name}](../{old.name}) — run 1, {TODAY} · passed cite-check on {TODAY}"]
    syntheses = run("manifest", "--topic", "s", "--json").json["syntheses"]   # the latest of each goal: few lines
    assert [(e["file"], e["run"]) for e in syntheses] == [(new.name, second)]


# --- page versions -------------------------------------------------------------------------------------------

def test_three_runs_two_versions_two_syntheses_each_passes_against_its_own_versions(run, fire, md_root):
    web_dir = md_root / "s" / "web"
    fire.set_page(A, article(A, '"Every pool held a star" in 2019, when 120 were counted.'))
    fire.set_page(B, article(B, "Pools dry out in summer."))
    first, _ = start_run(run)
    run("scrape", A, B, "--topic", "s", "--workers", "1")
    v1 = (web_dir / "a-org-stars.md").read_bytes()
    one = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", synthesis_text(
        first, 'Surveyors wrote "Every pool held a star" [1](web/a-org-stars.md).',
        ["120 were counted [1](web/a-org-stars.md).", "Pools dry out [2](web/b-org-pools.md)."]))
    assert run("cite-check", one).code == 0

    second, _ = start_run(run)
    fire.set_page(A, article(A, '"Most pools held a star" in 2025, when 90 were counted.'))
    assert run("refresh", "--topic", "s").code == web.EXIT_PARTIAL
    two = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-2-synthesis.md", synthesis_text(
        second, 'Surveyors now write "Most pools held a star" [1](web/a-org-stars.v2.md).',
        ["90 were counted in 2025 [1](web/a-org-stars.v2.md).", "Pools dry out [2](web/b-org-pools.md)."]))
    check_two = run("cite-check", two, "--json").json
    assert check_two["ok"] and not [w for w in check_two["warnings"] if w["kind"] == "page-changed"]

    start_run(run)
    fire.set_page(A, article(A, "The survey was stopped."))
    run("refresh", "--topic", "s")
    assert sorted(p.name for p in web_dir.glob("a-org-stars*")) == ["a-org-stars.md", "a-org-stars.v2.md",
                                                                   "a-org-stars.v3.md"]
    assert (web_dir / "a-org-stars.md").read_bytes() == v1                  # the version run 1 quoted, as it was
    for synthesis, cited in ((one, "web/a-org-stars.md"), (two, "web/a-org-stars.v2.md")):
        check = run("cite-check", synthesis, "--json").json
        assert check["ok"] and check["errors"] == []                        # it passes as it did
        changed = [w for w in check["warnings"] if w["kind"] == "page-changed"]
        assert len(changed) == 1 and changed[0]["message"].startswith(
            f"[1] {cited} has a newer version, web/a-org-stars.v3.md (fetched {TODAY}), which no longer holds ")
        record = [e for e in ledger(md_root) if e["command"] == "cite-check" and e["file"] == synthesis.name][-1]
        assert record["pages"] == [cited, "web/b-org-pools.md"]             # the versions it checked
    assert changed[0]["message"].endswith('its quote ("Most pools held a star") and 2 of its 2 numbers (90, 2025)')
    assert (web_dir / "a-org-stars.v3.md").read_text("utf-8").count("> version: 3 · previous: a-org-stars.v2.md, "
                                                                    f"fetched {TODAY}  \n") == 1


def test_word_totals_and_the_budget_count_a_pages_current_version_only(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    start_run(run, sources=2)
    run("scrape", A, "--topic", "s")
    fire.set_page(A, article(A, "The survey counted 120 sea stars, and the next one 130, across the pools."))
    assert run("scrape", A, "--topic", "s", "--force", "--json").json["saved"][0]["version"] == 2
    words = web.read_page_facts(md_root / "s" / "web" / "a-org-stars.v2.md")["words"]
    status = run("status", "--topic", "s", "--json").json
    assert status["saved"] == 1 and "budget spent" not in status["stop"]    # one page, in two versions
    assert f"to read: {words} words" in run("manifest", "--topic", "s").out
    manifest = (md_root / "s" / "web" / "_manifest.md").read_text("utf-8")
    assert f"| {GOAL} | 2 pages, 1 round | 1 | 1 | 0 search requests for 0 queries, 2 scrapes | {words} |" in manifest
    assert [s["words"] for s in run("manifest", "--topic", "s", "--json").json["saved"]] == [words]


def test_a_note_belongs_to_the_version_it_read(run, fire, md_root):
    long_text = " ".join(f"Sentence {i} about sea stars in the pools." for i in range(600))
    fire.set_page(A, article(A, long_text))
    start_run(run)
    run("scrape", A, "--topic", "s")
    page = md_root / "s" / "web" / "a-org-stars.md"
    web_dir = md_root / "s" / "web"
    (web_dir / "notes").mkdir()
    write(web_dir / "notes" / "a-org-stars.md", "Contributes: x\n")
    assert run("status", "--topic", "s", "--json").json["notes"] == {"done": [1]}
    fire.set_page(A, article(A, long_text + " A sentence added later."))
    run("scrape", A, "--topic", "s", "--force")
    notes = run("status", "--topic", "s", "--json").json["notes"]
    assert notes["need"][0]["path"] == web.display_path(web_dir / "a-org-stars.v2.md")   # the old note is stale
    cwd = md_root.parent
    answer = decision(run, tool_call("pretooluse-read.json", cwd, "Read", file_path=str(page)))
    assert answer["permissionDecision"] == "deny" and (
        f"its current version is {web.display_path(web_dir / 'a-org-stars.v2.md')}: launch page-reader on it"
        in answer["permissionDecisionReason"])
    reader = tool_call("pretooluse-agent.json", cwd, "Agent", subagent_type="page-reader", run_in_background=False,
                       description="read [1]", prompt=f"Goal: x\nPage: {page}")
    answer = decision(run, reader)
    assert answer["permissionDecision"] == "deny" and "has a reader's note already" in answer["permissionDecisionReason"]
    reader["tool_input"]["prompt"] = f"Goal: x\nPage: {web_dir / 'a-org-stars.v2.md'}"
    assert decision(run, reader)["permissionDecision"] == "allow"          # the current version gets its reader


def test_force_on_an_unchanged_page_writes_nothing_and_says_so(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    start_run(run)
    run("scrape", A, "--topic", "s")
    before = files_of(md_root / "s" / "web")
    r = run("scrape", A, "--topic", "s", "--force")
    assert r.code == 0 and r.out == f"skipped  unchanged: {web.display_path(md_root / 's' / 'web' / 'a-org-stars.md')}  {A}\n"
    after = files_of(md_root / "s" / "web")
    assert {k: v for k, v in after.items() if not k.endswith("_ledger.jsonl")} == \
        {k: v for k, v in before.items() if not k.endswith("_ledger.jsonl")}


# --- refresh -----------------------------------------------------------------------------------------------------

def refresh_topic(run, fire, md_root, pages):
    """A run that saved `pages` ({url: text}) and a synthesis quoting each page's first sentence."""
    for url, text in pages.items():
        fire.set_page(url, article(url, text))
    first, _ = start_run(run, sources=len(pages) + 1)
    run("scrape", *pages, "--topic", "s", "--workers", "1")
    names = {url: os.path.basename(run("scrape", url, "--topic", "s", "--json").json["skipped"][0]["path"])
             for url in pages}
    findings = [f'"{text.split(".")[0]}" [{n}](web/{names[url]}).' for n, (url, text) in enumerate(pages.items(), 1)]
    path = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md",
                 synthesis_text(first, findings[0], findings))
    assert run("cite-check", path).code == 0
    return path, names


PAGES = {"https://same.org/a": "Sea stars eat mussels at low tide. 1",
         "https://changes.org/b": "Sea stars regrow lost arms over a year. 2",
         "https://gone.org/c": "Ochre stars live for twenty years or more. 3",
         "https://moves.org/d": "Sunflower stars were hit by wasting disease. 4",
         "https://slow.org/e": "Bat stars are common in kelp forests here. 5",
         "https://nohost.org/f": "Leather stars smell of garlic when handled. 6"}


def every_outcome(fire):
    """The cited pages of PAGES as the web has them now: one changed, one gone, one moved, one timing
    out, one whose host is gone; the first unchanged."""
    fire.set_page("https://changes.org/b", article("https://changes.org/b", "Sea stars regrow arms. 2"))
    fire.set_page("https://gone.org/c", captured_reply("notfound.json"))
    fire.set_page("https://moves.org/d", article("https://elsewhere.org/home", "Welcome to our new site."))
    fire.set_page("https://slow.org/e", captured_reply("timeout.json"))
    fire.set_page("https://nohost.org/f", Reply(200, {"success": False, "code": "SCRAPE_DNS_RESOLUTION_ERROR",
                                                      "error": "DNS resolution failed for hostname: nohost.org."}))


def test_refresh_says_what_became_of_each_cited_page_and_keeps_every_version(run, fire, md_root):
    path, names = refresh_topic(run, fire, md_root, PAGES)
    before = files_of(md_root / "s")
    status_before = run("status", "--topic", "s", "--json").json
    every_outcome(fire)
    r = run("refresh", "--topic", "s", "--json")
    assert r.code == web.EXIT_PARTIAL
    pages = {e["url"]: e for e in r.json["pages"]}
    shown = {url: web.display_path(md_root / "s" / "web" / name) for url, name in names.items()}
    assert pages["https://same.org/a"] == {"n": 1, "url": "https://same.org/a", "outcome": "unchanged",
                                           "path": shown["https://same.org/a"], "cited": True}
    assert pages["https://changes.org/b"] == {
        "n": 2, "url": "https://changes.org/b", "outcome": "changed", "path": shown["https://changes.org/b"][:-3] + ".v2.md",
        "previous": shown["https://changes.org/b"], "cited": True,
        "lost": {"quotes": ["Sea stars regrow lost arms over a year"], "numbers": []}}
    assert pages["https://gone.org/c"]["outcome"] == "gone" and pages["https://gone.org/c"]["lost"]["quotes"] == [
        "Ochre stars live for twenty years or more"]                       # none of it is on the live page now
    assert pages["https://moves.org/d"]["outcome"] == "moved" and pages["https://moves.org/d"]["to"] == \
        "https://elsewhere.org/home"
    assert pages["https://slow.org/e"]["outcome"] == "failed" and pages["https://slow.org/e"]["kind"] == "timeout"
    assert fire.scraped_urls().count("https://slow.org/e") == 1 + 2         # the first scrape, then tried twice
    assert pages["https://nohost.org/f"]["outcome"] == "gone"               # no such host
    assert r.json["counts"] == {"changed": 1, "moved": 1, "gone": 2, "failed": 1, "unchanged": 1}
    assert r.json["lost"] == {"quotes": 4, "numbers": 0}
    after = files_of(md_root / "s")
    assert all(after[p] == data for p, data in before.items() if not p.endswith("_ledger.jsonl"))   # nothing replaced
    assert sorted(set(after) - set(before)) == [str(md_root / "s" / "web" / "changes-org-b.v2.md")]
    status = run("status", "--topic", "s", "--json").json
    assert (status["saved"], status["limit"]) == (status_before["saved"], status_before["limit"])   # outside the budget
    assert status["refreshed"] == {"date": TODAY, "pages": 6, "cited": 6, "synthesis": path.name, "quotes": 4,
                                   "numbers": 0, "changed": [2], "gone": [3, 6], "moved": [4], "failed": [5]}
    line = (f"refreshed {TODAY}: 6 cited pages, 1 changed ([2]), 1 moved ([4]), 2 gone ([3], [6]), 1 failed ([5]) · "
            "4 quotes and 0 numbers no longer on the live page")
    assert line in run("status", "--topic", "s").out.splitlines()
    run("manifest", "--topic", "s")
    assert line in (md_root / "s" / "web" / "_manifest.md").read_text("utf-8").splitlines()


def test_refresh_for_a_person_lists_what_needs_a_look_first_and_exits_0_when_nothing_changed(run, fire, md_root):
    pages = dict(list(PAGES.items())[:3])
    refresh_topic(run, fire, md_root, pages)
    r = run("refresh", "--topic", "s")
    assert r.code == 0 and r.out.splitlines()[-2:] == [
        "unchanged  [1–3]", f"refreshed 3 pages cited by {web.display_path(md_root / 's' / f'how-do-sea-stars-fare-{TODAY}-synthesis.md')}: "
        "3 unchanged · 0 quotes, 0 numbers no longer on the live page"]
    fire.set_page("https://changes.org/b", article("https://changes.org/b", "Sea stars regrow arms. 2"))
    lines = run("refresh", "--topic", "s").out.splitlines()
    assert lines[:3] == [f"changed    [2] {web.display_path(md_root / 's' / 'web' / 'changes-org-b.v2.md')} (was "
                         f"changes-org-b.md)  https://changes.org/b",
                         "           1 quote no longer on the live page",
                         '           "Sea stars regrow lost arms over a year"']
    assert lines[3] == "unchanged  [1], [3]"


def test_refresh_retries_a_timeout_once(run, fire, md_root):
    pages = dict(list(PAGES.items())[:1])
    refresh_topic(run, fire, md_root, pages)
    url = next(iter(pages))
    fire.fail_next(captured_reply("timeout.json"))                   # Firecrawl's own timeout: the page's, not the box's
    assert run("refresh", "--topic", "s", "--json").json["pages"][0]["outcome"] == "unchanged"
    assert fire.scraped_urls().count(url) == 1 + 2                  # saved once; refreshed: timed out, then answered


def test_refresh_needs_a_synthesis_or_all(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    start_run(run)
    run("scrape", A, "--topic", "s")
    r = run("refresh", "--topic", "s")
    assert r.code == web.EXIT_USAGE and r.err == ("web.py: usage: topic 's' has no synthesis whose pages could be "
                                                 "refreshed — add --all to refresh every saved page\n")
    r = run("refresh", "--topic", "s", "--all", "--json")
    assert r.code == 0 and [(e["n"], e["outcome"]) for e in r.json["pages"]] == [(1, "unchanged")]
    assert "synthesis" not in r.json or r.json["synthesis"] is None


def test_refresh_when_the_box_is_down_is_exit_4_and_the_rest_is_not_attempted(run, fire, md_root, monkeypatch):
    refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:3]))
    monkeypatch.setenv("FIRECRAWL_URL", "http://127.0.0.1:9")
    r = run("refresh", "--topic", "s", "--workers", "1", "--json")
    assert r.code == web.EXIT_UNREACHABLE and len(r.json["not_attempted"]) == 2
    assert r.err.startswith("web.py: Firecrawl: at http://127.0.0.1:9 refused the connection")


# --- the hooks keep what web.py and earlier runs wrote -----------------------------------------------------------

@pytest.fixture
def two_runs(run, fire, md_root):
    """A topic with run 1's synthesis (audited), picks and notes, and run 2 started."""
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    first, _ = start_run(run)
    run("scrape", A, "--topic", "s")
    topic = md_root / "s"
    one = write(topic / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", synthesis_text(
        first, "It counted 120 [1](web/a-org-stars.md).", ["120 stars [1](web/a-org-stars.md)."]))
    run("cite-check", one)
    hook(run, "post", auditor_answer(md_root.parent, one))
    write(topic / "web" / "_picks-1.1.json", json.dumps([{"url": A}]))
    write(topic / "web" / "_notes.md", f"## Run {first}: {GOAL}\n\n- run 1's notes\n")
    (topic / "web" / "notes").mkdir()
    write(topic / "web" / "notes" / "a-org-stars.md", "Contributes: x\n")
    run("manifest", "--topic", "s")
    second, _ = start_run(run)
    return topic, one, second, topic / f"how-do-sea-stars-fare-{TODAY}-2-synthesis.md"


@pytest.mark.parametrize("target, reason", [
    ("web/a-org-stars.md", "is a saved page: it stays as it was fetched"),
    ("web/notes/a-org-stars.md", "is a page-reader's note, saved by web.py from the reader's answer"),
    ("web/_ledger.jsonl", "is web.py's record and only web.py writes it"),
    ("web/_manifest.md", "is web.py's record and only web.py writes it"),
    (f"how-do-sea-stars-fare-{TODAY}-audit.md", "is written by web.py"),
    (f"how-do-sea-stars-fare-{TODAY}-synthesis.md", "is run 1's synthesis and is kept as it was: this run writes "),
    ("web/_picks-1.1.json", "holds another round's picks and is kept: write this round's to "),
])
@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_a_write_or_edit_over_what_web_py_or_an_earlier_run_wrote_is_refused(run, md_root, two_runs, target, reason,
                                                                              tool):
    topic = two_runs[0]
    before = files_of(topic)
    fields = {"content": "x"} if tool == "Write" else {"old_string": "1", "new_string": "2"}
    answer = decision(run, tool_call("pretooluse-read.json", md_root.parent, tool, file_path=str(topic / target),
                                     **fields))
    assert answer["permissionDecision"] == "deny" and f"{web.display_path(topic / target)} {reason}" in \
        answer["permissionDecisionReason"]
    assert files_of(topic) == before


def test_this_runs_files_and_new_files_may_be_written(run, md_root, two_runs):
    topic, _, second, mine = two_runs
    cwd = md_root.parent
    write(mine, "# draft\n")
    notes = topic / "web" / "_notes.md"
    allowed = [("Write", mine, {"content": "# Sea stars\n"}),
               ("Edit", mine, {"old_string": "draft", "new_string": "Sea stars"}),
               ("Write", topic / "web" / "_picks-2.1.json", {"content": "[]"}),
               ("Edit", notes, {"old_string": "- run 1's notes\n",
                                "new_string": f"- run 1's notes\n\n## Run {second}: {GOAL}\n\n- run 2\n"}),
               ("Write", notes, {"content": notes.read_text("utf-8") + f"\n## Run {second}: {GOAL}\n"})]
    for tool, path, fields in allowed:
        assert decision(run, tool_call("pretooluse-read.json", cwd, tool, file_path=str(path), **fields)) is None
    write(notes, notes.read_text("utf-8") + f"\n## Run {second}: {GOAL}\n\n- run 2's first notes\n")
    own = {"old_string": "- run 2's first notes", "new_string": "- run 2's notes, rewritten"}
    assert decision(run, tool_call("pretooluse-read.json", cwd, "Edit", file_path=str(notes), **own)) is None


@pytest.mark.parametrize("fields", [{"content": "## Run x: only this run\n"},
                                    {"old_string": "- run 1's notes", "new_string": "- run 1's notes, improved"}])
def test_earlier_runs_notes_stay_as_they_were(run, md_root, two_runs, fields):
    notes = two_runs[0] / "web" / "_notes.md"
    tool = "Write" if "content" in fields else "Edit"
    answer = decision(run, tool_call("pretooluse-read.json", md_root.parent, tool, file_path=str(notes), **fields))
    assert answer["permissionDecision"] == "deny" and answer["permissionDecisionReason"] == (
        f"{web.display_path(notes)} holds earlier runs' notes: keep them as they are and add this run's section "
        f"(## Run {two_runs[2]}: <goal>) at the end with Edit")


def test_with_the_gate_off_nothing_is_refused(run, md_root, two_runs, monkeypatch):
    monkeypatch.setenv("WEB_GATE", "off")
    payload = tool_call("pretooluse-read.json", md_root.parent, "Write", file_path=str(two_runs[1]), content="x")
    assert hook(run, "pre", payload)[0] is None


def test_an_earlier_runs_audited_synthesis_is_not_audited_again(run, md_root, two_runs):
    topic, one = two_runs[:2]
    launch = tool_call("pretooluse-agent.json", md_root.parent, "Agent", subagent_type="citation-auditor",
                       run_in_background=False, description="audit", prompt=f"Synthesis: {one}")
    answer = decision(run, launch)
    assert answer["permissionDecision"] == "deny" and answer["permissionDecisionReason"] == (
        f"{web.display_path(one)} is an earlier run's synthesis and its audit, "
        f"{web.display_path(topic / f'how-do-sea-stars-fare-{TODAY}-audit.md')}, is kept as it was: audit this "
        f"run's synthesis")


# --- nothing the first run wrote changes in the second ---------------------------------------------------------

def test_every_command_of_a_second_run_leaves_the_first_runs_files_as_they_were(run, searx, fire, md_root):
    """init, search, scrape (picks, --force, --out), refresh, manifest, cite-check, export and the hooks,
    across two runs: of run 1's files only the ledger (appended) and the manifest (regenerated, a person's
    text outside its markers kept) change."""
    topic, cwd = md_root / "s", md_root.parent
    long_text = " ".join(f"Sentence {i} about sea stars." for i in range(700))
    for url, text in ((A, "The survey counted 120 sea stars."), (B, long_text), (C, "The census found 80.")):
        fire.set_page(url, article(url, text))
    searx.set_results("sea stars", [{"url": A, "title": "A", "content": "a"}, {"url": B, "title": "B", "content": "b"}])
    searx.set_results("sea star census", [{"url": C, "title": "C", "content": "c"}])

    def a_run(query, picks, synthesis_name, cited):
        run_id, _ = start_run(run, sources=2)
        run("search", query, "--topic", "s")
        picks_file = write(topic / "web" / f"_picks-{len(runs) + 1}.1.json", json.dumps([{"url": u} for u in picks]))
        runs.append(run_id)
        assert run("status", "--topic", "s", "--json").json["picks"] == web.display_path(picks_file)
        assert run("scrape", "--topic", "s", "--from", picks_file, "--limit", 2).code == 0
        run("scrape", A, "--topic", "s", "--force")
        assert run("scrape", C, "--out", topic / f"hand-{len(runs)}.md").code == 0
        for entry in run("manifest", "--topic", "s", "--json").json["saved"]:
            if entry.get("note") == "needed":
                page = topic / "web" / f"{web.url_slug(entry['url'])}.md"
                reply = captured("posttooluse-agent.json", cwd=str(cwd))
                reply["tool_input"] = dict(reply["tool_input"], prompt=f"Page: {page}")
                reply["tool_response"] = dict(reply["tool_response"], content=[{"type": "text", "text": "Contributes: x"}])
                hook(run, "post", reply)
                assert (topic / "web" / "notes" / page.name).exists()
        run("manifest", "--topic", "s")
        path = write(topic / synthesis_name, synthesis_text(run_id, cited, [cited]))
        write_call = tool_call("posttooluse-write.json", cwd, "Write", file_path=str(path), content=path.read_text())
        assert hook(run, "pre", write_call)[0] is None
        hook(run, "post", write_call)
        assert run("cite-check", path, "--table").code == 0
        hook(run, "post", auditor_answer(cwd, path))
        assert os.path.isfile(web.audit_path(str(path)))
        assert run("export", "--topic", "s", "--format", "ris", "--out", topic / f"refs-{len(runs)}.ris").code == 0
        hook(run, "stop", captured("stop.json", cwd=str(cwd)))
        return path

    runs = []
    one = a_run("sea stars", [A, B], f"how-do-sea-stars-fare-{TODAY}-synthesis.md", "It counted 120 [1](web/a-org-stars.md).")
    manifest = topic / "web" / "_manifest.md"
    write(manifest, manifest.read_text("utf-8") + "\nMy own remarks, below the block.\n")
    first = files_of(topic)
    fire.set_page(A, article(A, "The survey counted 121 sea stars."))
    run("refresh", "--topic", "s")
    a_run("sea star census", [C], f"how-do-sea-stars-fare-{TODAY}-2-synthesis.md", "It counted 80 [3](web/c-org-census.md).")
    run("cite-check", one)
    after = files_of(topic)
    changed = sorted(os.path.relpath(p, topic) for p, data in first.items() if after.get(p) != data)
    assert changed == ["web/_ledger.jsonl", "web/_manifest.md"]
    assert after[str(topic / "web" / "_ledger.jsonl")].startswith(first[str(topic / "web" / "_ledger.jsonl")])
    assert after[str(manifest)].endswith(b"\nMy own remarks, below the block.\n")
    assert (topic / "web" / "a-org-stars.v2.md").exists() and (topic / "web" / "_picks-2.1.json").exists()


# --- run state that hand use cannot confuse --------------------------------------------------------------------

def test_a_scrape_without_a_search_counts_as_the_runs_round(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    start_run(run, sources=1)
    run("scrape", A, "--topic", "s")
    status = run("status", "--topic", "s", "--json").json
    assert (status["round"], status["scraped"], status["stop"]) == (1, True, ["budget spent", "max rounds"])
    assert not status["next"].startswith("search round 1") and "--limit 0" not in run("status", "--topic", "s").out


def test_an_already_saved_url_is_reported_as_saved_even_when_the_budget_is_spent(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    start_run(run, sources=1)
    run("scrape", A, "--topic", "s")
    r = run("scrape", A, "--topic", "s", "--json")
    assert r.code == 0 and [s["reason"] for s in r.json["skipped"]] == ["already saved"]
    r = run("scrape", A, B, "--topic", "s")
    assert r.code == web.EXIT_USAGE and r.err == ("web.py: usage: the run's budget is spent: 1 of 1 pages saved; 1 of "
                                                 "the candidates are saved already — add --force to go past it\n")



def test_a_synthesis_that_cites_both_versions_of_a_page_knows_it_changed(run, fire, md_root):
    fire.set_page(A, article(A, '"Every pool held a star" in 2019.'))
    first, _ = start_run(run)
    run("scrape", A, "--topic", "s")
    fire.set_page(A, article(A, '"Most pools held a star" in 2025.'))
    run("refresh", "--topic", "s", "--all")
    path = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", synthesis_text(
        first, 'The June version said "Every pool held a star" [1](web/a-org-stars.md).',
        ['Where it said "Every pool held a star" [1](web/a-org-stars.md), it now says "Most pools held a star" '
         '[1](web/a-org-stars.v2.md).']))
    check = run("cite-check", path)
    assert check.code == 0 and "page-changed" not in run("cite-check", path, "--json").out   # it reports the change
    assert "citations per source: [1] 2 · [1 v2] 1" in check.out.splitlines()           # each version by its label
    assert "warning:" not in check.out                                                  # "The June version": no speaker


def test_the_auditor_is_told_which_earlier_pages_this_run_refreshed(run, fire, md_root):
    path, names = refresh_topic(run, fire, md_root, dict(list(PAGES.items())[:3]))
    second, _ = start_run(run)
    fire.set_page("https://gone.org/c", captured_reply("notfound.json"))
    run("refresh", "--topic", "s")
    mine = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-2-synthesis.md",
                 path.read_text("utf-8").replace("run ", f"run {second} ", 1))
    launch = tool_call("pretooluse-agent.json", md_root.parent, "Agent", subagent_type="citation-auditor",
                       run_in_background=False, description="audit", prompt=f"Synthesis: {mine}")
    prompt = decision(run, launch)["updatedInput"]["prompt"]
    assert "0 of 4 pages saved: none · 0 picks failed · earlier runs' pages refreshed: [1] unchanged [2] " \
           "unchanged [3] gone\n" in prompt


def test_the_checkpoint_of_a_second_run_lists_its_own_pages_not_the_first_runs(run, fire, md_root, two_runs):
    fire.set_page(B, article(B, "The pools held 40 sea stars."))
    run("scrape", B, "--topic", "s")
    answer = run("manifest", "--topic", "s", "--json").json
    assert [s["url"] for s in answer["saved"]] == [B]
    fire.set_page(C, article(C, "The census found 9 sea stars."))
    run("scrape", C, "--topic", "t")                                  # a topic no run was started in
    assert [s["url"] for s in run("manifest", "--topic", "t", "--json").json["saved"]] == [C]


def test_the_checkpoint_answer_marks_a_pick_to_retry_names_the_notes_and_keeps_synthesis_rows_lean(
        run, fire, searx, md_root, two_runs):
    answer = run("manifest", "--topic", "s", "--json").json
    assert answer["notes"] == web.display_path(md_root / "s" / "web" / "_notes.md")
    assert [sorted(row) for row in answer["syntheses"]] == [
        ["audit", "checked", "date", "errors", "file", "run", "status"]]
    run("init", GOAL, "--topic", "deep", "--deep")
    fire.set_page(B, captured_reply("timeout.json"))
    run("scrape", B, "--topic", "deep")
    run("search", "sea stars", "--topic", "deep")                    # round 2: the timeout is worth a retry
    answer = run("manifest", "--topic", "deep", "--json").json
    assert answer["failed"] == [{"url": B, "kind": "timeout", "error": "Firecrawl: Scrape timed out", "retry": True}]
    assert "notes" not in answer
