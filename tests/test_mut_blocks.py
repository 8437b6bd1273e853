"""How cite-check reads a synthesis into blocks, where the mutation run found it unpinned: a fence three spaces
in or indented inside a list item hides its code, a reference right after an inline citation is a citation too,
a line opening with a dash after a paragraph is prose, a section opening with a `> Name: …` block quote is not
the title block, a `#` heading after the sections is read for its quotes, a table written right under its
heading is read, a title block indented and wrapped is still the title block, and a synthesis opened through a
symlinked folder is checked against its own topic. Each test pins what a writer (or Claude) reads."""

import os

from test_citecheck import QUOTE, REEF1, WRONG, synthesis, topic_on_disk
from test_mut_citecheck import check   # noqa: F401 (a fixture)
from test_mut_review import report

INVENTED = "the reef was never surveyed at all"
CLAIM = f"- Surveys counted 1,240 colonies {REEF1}."


def problems(result):
    """The errors and the warnings about the text (the run's pages never cited left out)."""
    return result.errors, [w for w in result.warnings if w[1] != "never-cited"]


# --- fences ---------------------------------------------------------------------------------------------------

def test_a_fence_three_spaces_in_hides_its_code(check):
    result = check(synthesis(f'   ~~~\nprint("{INVENTED}")\n   ~~~\n\n{CLAIM}'))
    assert problems(result) == ([], []) and result.coverage["quotes"]["verified"] == 0


def test_a_fence_indented_under_a_list_item_hides_its_code(check):
    result = check(synthesis(f'{CLAIM}\n\n    ~~~\n    print("{INVENTED}")\n    ~~~'))
    assert problems(result) == ([], []) and result.coverage["quotes"]["verified"] == 0


# --- links ----------------------------------------------------------------------------------------------------

def test_a_reference_right_after_an_inline_citation_cites_its_page_too(run, md_root):
    shown, code, lines = report(run, topic_on_disk(md_root),
                                f"- Surveys counted 1,240 colonies {REEF1}[2].\n\n[2]: web/census.md")
    assert code == 0 and lines == [
        f"{shown}: warning: saved source web/zh.md is never cited",
        f"{shown}: warning: saved source web/ko.md is never cited",
        "coverage: 3 sentences, 2 with a citation · quotes: 0 verified, 0 failed, 0 exempt (≤3 words), 0 unchecked "
        "· numbers: 1 verified, 0 derived, 0 not found",
        "citations per source: [1] 2 · [2] 1 · [3] 0 · [4] 0",
        "review: nothing to reread",
        "ok: 0 errors, 2 warnings"]


# --- lines that are prose -------------------------------------------------------------------------------------

def test_a_paragraph_opening_with_a_dash_after_a_paragraph_is_prose_not_an_attribution(check):
    result = check(synthesis(CLAIM, reliability=f"The census page is secondary.\n\n— as divers put it, "
                                                f'"{INVENTED}" {REEF1}.'))
    assert problems(result) == ([(18, "quote-not-found", f'quote "{INVENTED}" is not in web/reef.md')], [])


def test_a_section_opening_with_a_named_block_quote_checks_that_quote(check):
    result = check(synthesis(f"> Note: {WRONG} {REEF1}\n\n{CLAIM}"))
    assert problems(result) == ([(12, "quote-not-found", f'quote "Note: {WRONG}" is not in web/reef.md')], [])


# --- headings -------------------------------------------------------------------------------------------------

def test_a_quote_in_a_top_level_heading_after_the_sections_is_an_error_on_its_line(check):
    result = check(synthesis(CLAIM, extra=f'\n# Appendix: "{QUOTE}"\n'))
    assert problems(result) == ([(18, "quote-in-heading", f'quote "{QUOTE}" in a heading is not checked: move it '
                                                          "into the text under the heading, with its citation")], [])


def test_a_broken_link_in_a_heading_is_an_error_on_its_line(check):
    result = check(synthesis(CLAIM, extra="\n### Data [2](web/gone.md)\n"))
    assert problems(result) == ([(18, "broken-link", "citation [2](web/gone.md) points to a file that does not "
                                                     "exist")], [])


def test_a_table_written_right_under_its_heading_is_read(check):
    result = check(synthesis(f"### Colonies | Year\n| --- | --- |\n| 1,420 colonies {REEF1} | 2019 |\n\n{CLAIM}"))
    assert problems(result) == ([(14, "number-not-found", "number 1,420 is not in web/reef.md")], [])


def test_a_heading_right_above_a_tables_delimiter_row_stays_a_heading(check):
    # in GFM a heading is never a table's header row: its quote is one in a heading, and the table has no header
    result = check(synthesis(f'### "{QUOTE}" | Year\n| --- | --- |\n| colonies {REEF1} | 2019 |\n\n{CLAIM}'))
    assert problems(result)[0] == [(12, "quote-in-heading", f'quote "{QUOTE}" in a heading is not checked: move it '
                                                             "into the text under the heading, with its citation")]


# --- the title block ------------------------------------------------------------------------------------------

def test_a_title_block_indented_one_space_with_a_wrapped_goal_is_still_the_title(check):
    text = synthesis(CLAIM).replace("> goal: how fast do reefs recover\n> topic",
                                    " > goal: how fast do reefs\n > recover after bleaching\n > topic")
    result = check(text)
    assert problems(result) == ([], []) and result.run == "r1" and result.coverage["sentences"] == 3


# --- where the topic is ---------------------------------------------------------------------------------------

def test_a_synthesis_opened_through_a_symlinked_folder_is_checked_against_its_own_pages(run, md_root, tmp_path):
    topic = topic_on_disk(md_root)
    report(run, topic, CLAIM)   # writes the synthesis
    os.symlink(topic, tmp_path / "linked")
    r = run("cite-check", tmp_path / "linked" / "reefs-synthesis.md")
    assert (r.code, r.err) == (0, "") and r.out.splitlines()[-3:] == [
        "citations per source: [1] 2 · [2] 0 · [3] 0 · [4] 0",
        "review: nothing to reread",
        "ok: 0 errors, 3 warnings"]
