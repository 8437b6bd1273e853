"""What the mutation run found that no test held in cite-check's report: which files it takes for a synthesis
(a topic folder deeper than the md root, or outside it, holding web/), how a warning about the whole file is
written, how each source is named in "citations per source", the review line of a sentence citing no saved
page, and which sentences the review list leaves out (a sentence ending in `:` before its link, a table's
header row). Each test pins the lines a writer (or Claude) reads."""

import pytest

import web
from test_citecheck import CENSUS2, KO4, REEF1, ZH3, synthesis, topic_on_disk
from test_mut_citecheck import review_of

ALL_FOUR = (f"- Surveys counted 1,240 colonies {REEF1}; the census counted 48,500 residents {CENSUS2}.\n"
            f"- 산호초: {KO4} \"산호초가 두 계절 만에 회복되었다고\".\n- {ZH3} “珊瑚礁在两个季节内恢复”.")   # every page cited


def report(run, topic, findings, files=None):
    """(shown path, exit code, report lines) of cite-check on a synthesis with these findings in `topic`,
    beside these other files of the topic."""
    for name, text in (files or {}).items():
        (topic / name).parent.mkdir(parents=True, exist_ok=True)
        (topic / name).write_text(text, encoding="utf-8")
    path = topic / "reefs-synthesis.md"
    path.write_text(synthesis(findings), encoding="utf-8")
    r = run("cite-check", path)
    assert r.err == ""
    return web.display_path(path), r.code, r.out.splitlines()


# --- which files are a synthesis ----------------------------------------------------------------------------

@pytest.mark.parametrize("parent", ["md/lab", "elsewhere"])
def test_a_synthesis_in_a_topic_folder_holding_web_is_checked_deeper_than_the_md_root_or_outside_it(
        run, tmp_path, parent):
    _, code, lines = report(run, topic_on_disk(tmp_path / parent), ALL_FOUR)
    assert code == web.EXIT_OK and lines == [
        "coverage: 5 sentences, 4 with a citation · quotes: 2 verified, 0 failed, 0 exempt (≤3 words), 0 unchecked "
        "· numbers: 2 verified, 0 derived, 0 not found",
        "citations per source: [1] 2 · [2] 1 · [3] 1 · [4] 1",
        "review: nothing to reread",
        "ok: 0 errors, 0 warnings"]


# --- the report's lines ---------------------------------------------------------------------------------------

def test_a_page_never_cited_is_a_warning_about_the_whole_file_without_a_line_number(run, md_root):
    shown, code, lines = report(run, topic_on_disk(md_root), f"- Surveys counted 1,240 colonies {REEF1}.")
    assert code == web.EXIT_OK and lines[:3] == [f"{shown}: warning: saved source web/census.md is never cited",
                                                 f"{shown}: warning: saved source web/zh.md is never cited",
                                                 f"{shown}: warning: saved source web/ko.md is never cited"]
    assert lines[-1] == "ok: 0 errors, 3 warnings"


def test_citations_per_source_give_a_corpus_file_its_label_whatever_its_name_and_an_unlabelled_file_its_path(
        run, md_root):
    files = {"field-log.v2.md": "# Field log\n\nSurveys counted 1,240 colonies.\n",
             "drafts/plan.md": "# Plan\n\nThe divers plan a second survey.\n"}
    _, _, lines = report(run, topic_on_disk(md_root), f"{ALL_FOUR}\n- The log counts 1,240 colonies "
                         f"[C1](field-log.v2.md).\n- The divers plan a second survey [plan](drafts/plan.md).", files)
    assert "citations per source: [1] 2 · [2] 1 · [3] 1 · [4] 1 · [C1] 1 · drafts/plan.md 1" in lines


def test_a_review_line_for_a_sentence_citing_no_saved_page_shows_no_passage(run, md_root):
    assert review_of(run, md_root, "- Colonies grew by 260 (= 1,240 − 980) [5](web/gone.md).") == [
        "review: 1 sentence to reread against the passage shown",
        "L12 derived: Colonies grew by 260 (= 1,240 − 980) [5]."]


# --- what the review list leaves out --------------------------------------------------------------------------

def test_a_sentence_ending_in_a_colon_before_its_link_introduces_what_follows_and_is_not_reviewed(run, md_root):
    findings = (f"- Divers listed what the reef regained by 2019: [photos](https://reef.example/photos)\n"
                f"  - Surveys counted 1,240 colonies in 2019 {REEF1}.")
    assert review_of(run, md_root, findings) == ["review: nothing to reread"]


def test_a_tables_header_row_labels_its_columns_and_is_not_reviewed_as_a_row_would_be(run, md_root, tmp_path):
    cell = f"Live colonies tallied by volunteer divers {REEF1}"
    header = f"- Recovery was fast {REEF1}.\n\n| Reef site | {cell} |\n|---|---|\n| North reef | 1,240 colonies {REEF1} |"
    assert review_of(run, md_root, header) == ["review: nothing to reread"]
    row = f"- Recovery was fast {REEF1}.\n\n| Reef site | Colonies |\n|---|---|\n| North reef | {cell} |"
    assert review_of(run, tmp_path / "again", row) == [
        "review: 1 sentence to reread against the passage shown",
        "L16 weak 20%: Live colonies tallied by volunteer divers [1] — [1] Surveys counted 1,240 colonies in 2019, "
        "up from 980 colonies in 2017."]
