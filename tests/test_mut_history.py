"""How a topic outlives its run, where the mutation run found it unpinned: every init of a goal claims its own
synthesis name before any is written; a page fetched ten times still has its tenth version as the newest; a quote
with an HTML comment inside is checked without it; cite-check's ledger record, whole; and the manifest cite-check
rewrites: the one `manifest` writes, for a nested topic and whatever the box settings, never one outside md/."""

import hashlib
import shutil

import web
from conftest import read_ledger
from test_citecheck import REEF1, synthesis, topic_on_disk
from test_history import GOAL, TODAY, A, B, article, start_run, synthesis_text, write


# --- every run's synthesis is its own file ---------------------------------------------------------------------

def test_each_init_of_a_goal_claims_its_own_synthesis_though_none_is_written_yet(run, md_root):
    names = [start_run(run)[1]["synthesis"] for _ in range(3)]
    stem = f"how-do-sea-stars-fare-{TODAY}"
    assert names == [web.display_path(md_root / "s" / f"{stem}{n}-synthesis.md") for n in ("", "-2", "-3")]
    assert f"  synthesis: {web.display_path(md_root / 's' / f'{stem}-4-synthesis.md')}" in \
        run("init", GOAL, "--topic", "s").out.splitlines()


# --- what a synthesis may cite --------------------------------------------------------------------------------

def test_a_file_of_web_that_is_not_a_saved_page_is_no_source(run, md_root):
    # the researcher's own notes, web.py's manifest, a folder of its own: none is a page Firecrawl fetched
    topic = topic_on_disk(md_root)
    (topic / "web" / "_notes.md").write_text("Surveys counted 1,240 colonies in 2019.\n", encoding="utf-8")
    (topic / "web" / "old").mkdir()
    (topic / "web" / "old" / "reef.md").write_text("Surveys counted 1,240 colonies in 2019.\n", encoding="utf-8")
    for target in ("web/_notes.md", "web/old/reef.md"):
        path = topic / "reefs-synthesis.md"
        path.write_text(synthesis(f"- Surveys counted 1,240 colonies in 2019 [1]({target}) and {REEF1}."),
                        encoding="utf-8")
        r = run("cite-check", path, "--json")
        assert r.code == web.EXIT_PARTIAL and [e for e in r.json["errors"] if e["kind"] == "not-a-page"] == [{
            "line": 12, "kind": "not-a-page",
            "message": f"citation [1]({target}) is not a saved page: cite a page of web/ or a corpus file"}]


# --- page versions -----------------------------------------------------------------------------------------------

def test_a_page_fetched_ten_times_has_its_tenth_version_as_the_newest(run, fire, md_root):
    fire.set_page(A, article(A, '"Every pool held a star" in survey 1.'))
    first, _ = start_run(run)
    run("scrape", A, "--topic", "s")
    for n in range(2, 11):
        text = f'"Every pool held a star" in survey {n}.' if n < 10 else "The survey was stopped."
        fire.set_page(A, article(A, text))
        assert run("scrape", A, "--topic", "s", "--force", "--json").json["saved"][0]["version"] == n
    path = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", synthesis_text(
        first, 'It said "Every pool held a star" [1](web/a-org-stars.v9.md).',
        ['"Every pool held a star" [1](web/a-org-stars.v9.md).']))
    warnings = run("cite-check", path, "--json").json["warnings"]
    assert [w for w in warnings if w["kind"] == "page-changed"] == [{
        "line": 8, "kind": "page-changed",
        "message": f"[1] web/a-org-stars.v9.md has a newer version, web/a-org-stars.v10.md (fetched {TODAY}), "
                   f'which no longer holds its quote ("Every pool held a star")'}]


def test_a_page_a_run_saved_in_two_versions_is_one_source_named_by_its_newest(run, fire, md_root):
    fire.set_page(A, article(A, '"Every pool held a star" in survey 1.'))
    fire.set_page(B, article(B, '"Pools dried out" in August.', title="Pools"))
    first, _ = start_run(run)
    run("scrape", A, B, "--topic", "s")
    fire.set_page(A, article(A, '"Every pool held a star" in survey 2.'))
    run("scrape", A, "--topic", "s", "--force")                            # the same run saves its next version
    never = {}
    for cited in ("web/a-org-stars.md", "web/a-org-stars.v2.md"):
        path = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", synthesis_text(
            first, f'It said "Every pool held a star" [1]({cited}).', [f'"Every pool held a star" [1]({cited}).']))
        never[cited] = [w["message"] for w in run("cite-check", path, "--json").json["warnings"]
                        if w["kind"] == "never-cited"]
    assert never == {cited: ["saved source web/b-org-pools.md is never cited"] for cited in never}
    path.write_text(synthesis_text(first, 'It said "Pools dried out" [2](web/b-org-pools.md).',
                                   ['"Pools dried out" [2](web/b-org-pools.md).']), encoding="utf-8")
    assert [w["message"] for w in run("cite-check", path, "--json").json["warnings"] if w["kind"] == "never-cited"] \
        == ["saved source web/a-org-stars.v2.md is never cited"]


# --- cite-check: a quote with a comment in it, and the record it leaves ------------------------------------------

def checked(run, md_root, findings):
    """cite-check's report of a reefs synthesis with these findings, run from the command line."""
    path = topic_on_disk(md_root) / "reefs-synthesis.md"
    path.write_text(synthesis(findings), encoding="utf-8")
    return run("cite-check", path)


def coverage_line(result):
    return next(line for line in result.out.splitlines() if line.startswith("coverage: "))


def test_a_comment_inside_a_quote_is_left_out_of_the_quoted_words(run, md_root):
    r = checked(run, md_root, '- The survey says "the reef had recovered <!-- after the 2016 bleaching --> within '
                              f'two seasons" {REEF1}.\n- It was "the reef had recovered <!-- a note\n  that wraps --> '
                              f'within two seasons" {REEF1}.')
    assert (r.code, coverage_line(r)) == (0, "coverage: 4 sentences, 3 with a citation · quotes: 2 verified, 0 failed, "
                                             "0 exempt (≤3 words), 0 unchecked · numbers: 0 verified, 0 derived, "
                                             "0 not found")


def test_a_block_quote_with_a_comment_across_its_lines_is_quoted_without_it(run, md_root):
    r = checked(run, md_root, f"- The survey {REEF1}:\n\n  > the reef had recovered <!-- a note\n  > that wraps --> "
                              "within two seasons")
    assert (r.code, coverage_line(r)) == (0, "coverage: 4 sentences, 2 with a citation · quotes: 1 verified, 0 failed, "
                                             "0 exempt (≤3 words), 0 unchecked · numbers: 0 verified, 0 derived, "
                                             "0 not found")


def test_the_ledger_records_each_cite_check_with_its_file_digest_outcome_coverage_and_pages(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars in 2019."))
    fire.set_page(B, article(B, "Pools dry out in summer."))
    first, _ = start_run(run)
    run("scrape", A, B, "--topic", "s", "--workers", "1")            # B is the run's, never cited
    path = write(md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md", synthesis_text(
        first, 'The survey "counted 120 sea stars" [1](web/a-org-stars.md).',
        ["It counted 120 in 2019 [1](web/a-org-stars.md).", "The pools dried out."]))
    assert run("cite-check", path).code == 1
    event = read_ledger(md_root / "s" / "web" / "_ledger.jsonl")[-1]
    assert event == {
        "run": first, "time": event["time"], "command": "cite-check", "round": None, "file": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "ok": False, "errors": 1,
        "coverage": {"sentences": 3, "cited": 2,
                     "quotes": {"verified": 1, "not_found": 0, "no_citation": 0, "exempt": 0},
                     "numbers": {"verified": 2, "derived": 0, "not_found": 0}},
        "pages": ["web/a-org-stars.md"]}


# --- the manifest cite-check brings up to date -------------------------------------------------------------------

def manifest_after_cite_check(run, topic_dir, topic):
    """(cite-check's result, the manifest it left, the manifest `manifest --topic` writes next) of a synthesis
    of a topic with a manifest already."""
    path = topic_dir / "reefs-synthesis.md"
    path.write_text(synthesis(f"- Surveys counted 1,240 colonies {REEF1}."), encoding="utf-8")
    manifest = topic_dir / "web" / "_manifest.md"
    assert run("manifest", "--topic", topic).code == 0
    r = run("cite-check", path)
    left = manifest.read_text("utf-8")
    assert run("manifest", "--topic", topic).code == 0
    return r, left, manifest.read_text("utf-8")


def test_cite_check_leaves_the_manifest_that_manifest_writes_even_for_a_nested_topic(run, md_root):
    r, left, written = manifest_after_cite_check(run, topic_on_disk(md_root / "sea"), "sea/reefs")
    assert r.code == 0 and left == written
    assert f"- **[reefs-synthesis.md](../reefs-synthesis.md)** (latest) — {TODAY} · passed cite-check on {TODAY}" \
        in left.splitlines()
    assert sorted(p.name for p in md_root.iterdir()) == ["sea", "t"]


def test_cite_check_needs_no_box_setting_to_bring_the_manifest_up_to_date(run, md_root, monkeypatch):
    monkeypatch.setenv("WEBTOOLS_HOST", "http://box")       # not a bare host: a command that asks the box is exit 2
    r, left, written = manifest_after_cite_check(run, topic_on_disk(md_root), "reefs")
    assert (r.code, r.err) == (0, "") and left == written and f"passed cite-check on {TODAY}" in left


def test_a_topic_copied_out_of_the_md_root_keeps_its_manifest_as_it_was(run, md_root, tmp_path):
    topic = topic_on_disk(md_root)
    path = topic / "reefs-synthesis.md"
    path.write_text(synthesis(f"- Surveys counted 1,240 colonies {REEF1}."), encoding="utf-8")
    run("manifest", "--topic", "reefs")
    copy = shutil.copytree(topic, tmp_path / "archive" / "reefs")
    before = (copy / "web" / "_manifest.md").read_bytes()
    r = run("cite-check", copy / "reefs-synthesis.md")
    assert (r.code, r.err) == (0, "") and r.out.splitlines()[-1] == "ok: 0 errors, 3 warnings"
    assert (copy / "web" / "_manifest.md").read_bytes() == before
    assert read_ledger(copy / "web" / "_ledger.jsonl")[-1]["file"] == "reefs-synthesis.md"
