"""Coming back to a topic, second look: a refresh that never forgets, a record of the whole topic (each page
once at its current version, a gone page marked wherever it is listed), init on an existing topic, nothing a
person did lost (an interrupted scrape, a page saved by hand), an update run without guesswork (seen hits
with their outcome, the Since section's dates, labels in prose), our provenance lines never taken for the
page's, and paths where the user stands."""

import os
import threading

import web
from standins import captured_reply, make_hit
from test_faults import _wait_for
from test_history import A, B, C, TODAY, article, start_run, synthesis_text, write
from test_mut_batch import ctrl_c, held  # noqa: F401 (ctrl_c: a fixture)

LONG = " ".join(f"tide{i}" for i in range(800))   # pushes a page past READER_CHARS: it needs a page-reader


def cited_topic(run, fire, md_root, pages, topic="s"):
    """A run that saved `pages` ({url: (quote, number)}) and a synthesis whose findings quote each page and
    state its number; (synthesis path, {url: link})."""
    for url, (quote, number) in pages.items():
        fire.set_page(url, article(url, f"{quote}. It counted {number} stars.\n\n{LONG if url == B else ''}"))
    run_id, _ = start_run(run, topic, sources=len(pages) + 1)
    saved = run("scrape", *pages, "--topic", topic, "--workers", "1", "--json").json["saved"]
    links = {e["url"]: f"[{e['n']}](web/{os.path.basename(e['path'])})" for e in saved}
    findings = [f'"{quote}", and it counted {number} stars {links[url]}.' for url, (quote, number) in pages.items()]
    path = write(md_root / topic / f"how-do-sea-stars-fare-{TODAY}-synthesis.md",
                 synthesis_text(run_id, findings[0], findings))
    assert run("cite-check", path).code == 0
    return path, links


PAGES = {A: ("Every pool held a sea star", 120), B: ("Pools dried out in the August heat", 12)}


def test_a_second_refresh_reports_what_the_first_found_and_the_record_shows_it(run, fire, md_root):
    cited_topic(run, fire, md_root, PAGES)
    fire.set_page(B, article(B, "The pools are full again. " + LONG))
    first, second = (run("refresh", "--topic", "s", "--json").json for _ in range(2))
    for answer in (first, second):   # the second compares with the version the synthesis quoted, as the first did
        changed = next(p for p in answer["pages"] if p["outcome"] == "changed")
        assert changed["lost"] == {"quotes": ["Pools dried out in the August heat"], "numbers": ["12"]}
        assert changed["path"].endswith("b-org-pools.v2.md") and changed["previous"].endswith("b-org-pools.md")
    assert sorted(os.listdir(md_root / "s" / "web")).count("b-org-pools.v2.md") == 1   # saved once, not twice
    line = (f"refreshed {TODAY}: 2 cited pages, 1 changed ([2]) · 1 quote and 1 number no longer on the live page")
    status = run("status", "--topic", "s", "--json").json
    assert status["refreshed"]["changed"] == [2] and status["refreshed"]["numbers"] == 1
    assert line in run("status", "--topic", "s").out.splitlines()
    checkpoint = run("manifest", "--topic", "s").out.splitlines()
    assert line in checkpoint and line in (md_root / "s" / "web" / "_manifest.md").read_text("utf-8").splitlines()
    pages = run("manifest", "--topic", "s", "--json").json["saved"]   # each page once, at its current version
    assert [(p["n"], p["title"], p.get("note")) for p in pages] == [(1, "Sea stars", None), (2, "Sea stars", "needed")]
    assert status["notes"]["need"][0]["path"] == web.display_path(md_root / "s" / "web" / "b-org-pools.v2.md")
    run_id, _ = start_run(run)   # an update run: its synthesis cites the new version
    write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-2-synthesis.md",
          synthesis_text(run_id, '"The pools are full again" [2](web/b-org-pools.v2.md).', []))
    assert "refreshed" not in run("status", "--topic", "s", "--json").json


def test_a_gone_page_is_marked_wherever_it_is_listed_and_cite_check_warns_where_it_is_cited(run, searx, fire, md_root):
    path, links = cited_topic(run, fire, md_root, PAGES)
    fire.set_page(A, captured_reply("notfound.json"))
    assert [p["outcome"] for p in run("refresh", "--topic", "s", "--json").json["pages"]] == ["gone", "unchanged"]
    assert run("status", "--topic", "s", "--json").json["refreshed"]["gone"] == [1]
    answer = run("manifest", "--topic", "s", "--json").json
    assert [p.get("gone") for p in answer["saved"]] == [TODAY, None]
    assert run("manifest", "--topic", "s").out.splitlines()[2].endswith(
        f" — flags: short — gone from the web (refresh {TODAY})")
    assert f"| short, gone from the web {TODAY} | {A} |" in (md_root / "s" / "web" / "_manifest.md").read_text("utf-8")
    searx.set_results("stars", [make_hit(A)])
    assert run("search", "stars", "--topic", "s", "--json").json["seen"] == [{"rank": 1, "url": A, "n": 1, "gone": TODAY}]
    warnings = run("cite-check", path, "--json").json["warnings"]
    assert [w for w in warnings if w["kind"] == "page-gone"] == [{
        "line": 8, "kind": "page-gone", "message": f"[1] web/a-org-stars.md was gone from the web when refresh fetched "
        f"it on {TODAY}: the synthesis rests on its saved copy — say so, or cite another page"}]


def test_refresh_all_counts_the_pages_the_synthesis_cites_apart(run, fire, md_root):
    cited_topic(run, fire, md_root, PAGES)
    fire.set_page(C, article(C, "A census of the pools, never cited."))
    run("scrape", C, "--topic", "s")
    last = run("refresh", "--topic", "s", "--all").out.splitlines()[-1]
    assert last.startswith("refreshed 3 pages, 2 cited by ") and ": 3 unchanged" in last
    assert f"refreshed {TODAY}: 3 pages, none changed" in run("status", "--topic", "s").out


# --- init on a topic that exists, or one that looks like a typo --------------------------------------------------

def test_init_on_a_topic_holding_pages_says_so_and_the_checkpoint_never_says_saved_none(run, fire, md_root):
    cited_topic(run, fire, md_root, PAGES)
    first = run("status", "--topic", "s", "--json").json["run"]
    answer = run("init", "another question", "--topic", "s/", "--json").json   # the shell's completion: s/
    assert answer["topic"] == {"pages": 2, "syntheses": 1, "run": first, "date": TODAY, "goal": "how do sea stars fare"}
    assert run("init", "a third question", "--topic", "s").out.splitlines()[-1] == (
        f"  the topic holds 2 pages and 1 synthesis file; its last run {answer['run']}, {TODAY}: another question")
    checkpoint = run("manifest", "--topic", "s").out.splitlines()
    assert checkpoint[0].endswith(" · round 1 of 1 · 0 of 12 pages saved")   # rounds count from 1 everywhere
    assert checkpoint[1] == "saved: none in this run; the topic holds 2 pages (the manifest lists them)"


def test_init_asks_did_you_mean_for_a_name_close_to_a_topic_and_refuses_one_named_from_the_md_root(run, md_root):
    run("init", "g", "--topic", "demo")
    r = run("init", "g", "--topic", "dmeo")
    assert (r.code, r.err) == (2, "web.py: usage: there is no topic 'dmeo': did you mean demo? — to start a new topic "
                                  "dmeo all the same, add --new-topic\n")
    assert not (md_root / "dmeo").exists()
    assert run("init", "g", "--topic", "dmeo", "--new-topic").code == 0 and (md_root / "dmeo" / "web").is_dir()
    r = run("init", "g", "--topic", "md/demo")
    assert (r.code, r.err) == (2, "web.py: usage: the topic 'md/demo' starts with the md root's name, md/ — name it "
                                  "within the md root: --topic demo\n")
    assert not (md_root / "md").exists()


# --- nothing a person did is lost ---------------------------------------------------------------------------------

def test_an_interrupted_scrape_records_what_it_did_not_reach_and_status_offers_it(run, fire, md_root, ctrl_c):
    run("init", "g", "--topic", "t", "--max-sources", "3")
    holds = [held(fire, B), held(fire, C)]
    fire.set_articles(A)
    threading.Thread(target=lambda: _wait_for(lambda: fire.in_flight == 2) and ctrl_c(), daemon=True).start()
    try:
        r = run("scrape", A, B, C, "--topic", "t", "--workers", "3")
    finally:
        for hold in holds:
            hold.set()
    assert r.code == web.EXIT_INTERRUPTED
    status = run("status", "--topic", "t", "--json").json
    assert (status["round"], status["scraped"], status["saved"], status["limit"]) == (1, False, 1, 2)
    assert [(e["url"], e["kind"]) for e in status["retry"]] == [(B, "interrupted"), (C, "interrupted")]
    run("manifest", "--topic", "t")
    manifest = (md_root / "t" / "web" / "_manifest.md").read_text("utf-8")
    assert [line.endswith("| picked, not reached (interrupted) |") for line in manifest.splitlines()
            if B in line or C in line] == [True, True]


def test_a_seen_hit_says_what_became_of_it_when_picked(run, searx, fire, md_root):
    run("init", "g", "--topic", "t", "--max-sources", "1")
    searx.set_results("stars", [make_hit(A), make_hit(B), make_hit(C)])
    run("search", "stars", "--topic", "t")
    fire.set_articles(A, B)
    fire.set_page(C, captured_reply("notfound.json"))
    run("scrape", C, A, B, "--topic", "t", "--limit", "1", "--workers", "1")
    out = run("search", "stars", "--topic", "t").out.splitlines()
    assert out[:3] == [f" 1. [saved 1] {A}", f" 2. [seen] {B} — Title of {B} (picked, not reached)",
                       f" 3. [seen] {C} — Title of {C} (failed: target-status: the site answered 404 Not Found)"]


# --- cite-check: the Since section, labels in prose, our own lines ------------------------------------------------

def test_a_since_section_may_name_the_earlier_synthesis_and_refresh_dates_and_a_label_in_prose_is_no_number(
        run, fire, md_root):
    path, links = cited_topic(run, fire, md_root, PAGES)
    text = path.read_text("utf-8") + (f"\n## Since {TODAY}\n\n- On {TODAY} the count still stood, as [7] and "
                                      f"[13] noted: it counted 120 stars {links[A]}.\n")
    write(path, text)
    assert run("cite-check", path).out.splitlines()[-1] == "ok: 0 errors, 0 warnings"
    write(path, text.replace(f"On {TODAY}", "On 2019-03-04"))
    assert "date 2019-03-04 is not in web/a-org-stars.md" in run("cite-check", path).out


def test_words_only_in_our_relevance_line_are_reviewed_and_a_quote_of_it_is_an_error(run, fire, md_root):
    fire.set_page(A, article(A, "Every pool held a sea star. It counted 120 stars."))
    run_id, _ = start_run(run)
    run("scrape", A, "--topic", "s", "--relevance", "a peer-reviewed field study of stars")
    path = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", synthesis_text(
        run_id, "Every pool held a sea star [1](web/a-org-stars.md).", ["It counted 120 stars [1](web/a-org-stars.md)."])
        + "\n## Reliability\n\n- [1] is a peer-reviewed field study [1](web/a-org-stars.md).\n")
    review = run("cite-check", path, "--json").json["review"]
    assert [(r["kind"], r["sentence"], r["passage"]) for r in review] == [
        ("header-only", "[1] is a peer-reviewed field study [1].", "field, peer, review, study: only in the relevance "
                                                                   "line /research wrote in its header, not in the page")]
    write(path, path.read_text("utf-8").replace("[1] is a peer-reviewed", '[1] is "a peer-reviewed field study of'
                                                                          ' stars"').replace(" study [1]", " [1]"))
    assert run("cite-check", path).out.splitlines()[0].endswith(
        ': quote "a peer-reviewed field study of stars" is in the header /research wrote for [1] '
        "(web/a-org-stars.md), not in the page")


# --- paths where the user is --------------------------------------------------------------------------------------

def test_status_names_the_picks_file_from_where_the_user_stands(run, searx, md_root, monkeypatch):
    run("init", "g", "--topic", "t")
    searx.set_results("stars", [make_hit(A)])
    run("search", "stars", "--topic", "t")
    for folder, shown in ((md_root.parent, "md/t/web/_picks-1.1.json"), (md_root / "t", "web/_picks-1.1.json")):
        monkeypatch.chdir(folder)
        answer = run("status", "--topic", "t", "--json").json
        assert answer["picks"] == shown and f"--from {shown} " in answer["next"]


def test_export_finds_a_synthesis_named_by_its_file_name_in_the_topic(run, fire, md_root):
    path, _ = cited_topic(run, fire, md_root, PAGES)
    r = run("export", "--topic", "s", "--format", "ris", "--cited-in", path.name)
    assert r.code == 0 and r.out.count("TY  - ELEC") == 2


def test_cite_check_in_a_topic_it_cannot_write_still_checks_and_says_it_kept_no_record(run, fire, md_root):
    path, _ = cited_topic(run, fire, md_root, PAGES)
    ledger = (md_root / "s" / "web" / "_ledger.jsonl").read_bytes()
    (md_root / "s" / "web" / ".lock").unlink()
    (md_root / "s" / "web" / ".lock").mkdir()   # the lock cannot be taken, as in a read-only topic
    r = run("cite-check", path)
    assert r.code == 0 and r.out.splitlines()[-1] == "ok: 0 errors, 0 warnings"
    assert r.err.startswith("web.py: cite-check: the result is not recorded in the ledger: storage: cannot write ")
    assert (md_root / "s" / "web" / "_ledger.jsonl").read_bytes() == ledger
