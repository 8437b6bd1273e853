"""How cite-check reads a synthesis's headings and lines, and what status says of a topic's syntheses, where the
mutation run found it unpinned: a line underlined with === or --- is a heading (=== the title, --- a section)
unless it is a list item, a block quote, a link definition, a table line, code or the end of a paragraph; a
fence under a list item hides its code; a list item or footnote opening with a block quote is read as that
quote; an attribution line under a block quote carries its own line; consecutive link definitions each
count, and a table header that reads like one is still a table; a paragraph under a nested item belongs to
the outer one; quotes match across soft hyphens and spaced parentheses; and each synthesis of a topic gets its run's
goal and day, oldest run first, a file no run wrote first of all (dated by its file, in UTC)."""

import datetime
import os
import time

import pytest

import web
from test_citecheck import PAGES, QUOTE, REEF1, synthesis
from test_mut_blocks import CLAIM, INVENTED, problems
from test_mut_citecheck import check   # noqa: F401 (a fixture)

NOT_IN_REEF = f'quote "{INVENTED}" is not in web/reef.md'


def heading_error(line):
    return (line, "quote-in-heading", f'quote "{QUOTE}" in a heading is not checked: move it into the text under '
                                      "the heading, with its citation")


# --- underlined headings ----------------------------------------------------------------------------------------

def test_a_title_underlined_with_equals_signs_is_the_title(check):
    text = synthesis(CLAIM).replace("# How fast do reefs recover?\n", f'How fast do reefs recover? "{QUOTE}"\n===\n')
    assert problems(check(text)) == ([], [])


def test_a_section_underlined_with_dashes_is_a_section_and_its_quote_an_error(check):
    text = synthesis(CLAIM).replace("## Answer\n", f'Answer: "{QUOTE}"\n---\n')
    assert problems(check(text)) == ([heading_error(6)], [])


@pytest.mark.parametrize("line", [f'- "{QUOTE}" {REEF1}.', f'> "{QUOTE}" {REEF1}.', f'  > "{QUOTE}" {REEF1}.',
                                  f'"{QUOTE}" | {REEF1}', f'    "{QUOTE}" {REEF1}.'])
def test_a_list_item_quote_table_line_or_code_over_a_rule_is_no_heading(check, line):
    result = check(synthesis(f"{CLAIM}\n\n{line}\n---\n"))
    assert problems(result)[0] == []


def test_the_second_line_of_a_list_item_over_a_rule_is_no_heading(check):
    result = check(synthesis(f'- Surveys counted 1,240 colonies {REEF1}.\n  They said "{QUOTE}" {REEF1}.\n---\n'))
    assert problems(result) == ([], []) and result.coverage["quotes"]["verified"] == 1


def test_a_rule_after_a_blank_line_keeps_the_section(check):
    result = check(synthesis(f"{CLAIM}\n\n\n---\n\n- Water was warm."))
    assert problems(result) == ([(17, "uncited-finding", "finding has no citation to a saved source")], [])


def test_a_link_definition_over_a_rule_is_still_a_definition(check):
    result = check(synthesis(f"{CLAIM} See [the census][2].\n\n[2]: web/census.md\n---\n"))
    assert problems(result) == ([], []) and result.coverage["per_source"]["web/census.md"] == 1


# --- fences under a list item -----------------------------------------------------------------------------------

def test_a_fence_three_spaces_in_under_a_list_item_hides_its_code(check):
    result = check(synthesis(f'{CLAIM}\n\n   ~~~\n   print("{INVENTED}")\n   ~~~'))
    assert problems(result) == ([], []) and result.coverage["quotes"]["verified"] == 0


def test_a_fence_five_spaces_in_under_a_list_item_hides_its_code(check):
    result = check(synthesis(f'{CLAIM}\n\n     ~~~\n     print("{INVENTED}")\n     ~~~'))
    assert problems(result) == ([], []) and result.coverage["quotes"]["verified"] == 0


# --- list items, footnotes, definitions, tables, block quotes ---------------------------------------------------

def test_a_list_item_opening_with_a_block_quote_is_that_quote_alone(check):
    result = check(synthesis(f'- > "{QUOTE}" {REEF1}'))
    assert problems(result) == ([], []) and (result.coverage["sentences"], result.coverage["cited"]) == (3, 2) \
        and result.coverage["quotes"]["verified"] == 1


def test_a_footnote_opening_with_a_block_quote_is_that_quote_alone(check):
    result = check(synthesis(f'{CLAIM}[^1]\n\n[^1]: > "{QUOTE}" {REEF1}'))
    assert problems(result) == ([], []) and (result.coverage["sentences"], result.coverage["cited"]) == (4, 3) \
        and result.coverage["quotes"]["verified"] == 1


def test_a_broken_link_in_an_attribution_line_under_a_quote_is_reported_on_its_line(check):
    result = check(synthesis(CLAIM, reliability=f'> "{QUOTE}"\n\n— Reef survey [2](web/gone.md)'))
    assert problems(result) == ([(18, "broken-link", "citation [2](web/gone.md) points to a file that does not "
                                                     "exist")], []) and \
        result.coverage["unchecked"] == [{"line": 16, "quote": QUOTE, "why": "its citation is broken"}]


def test_each_of_two_consecutive_link_definitions_counts(check):
    result = check(synthesis(f"{CLAIM} See [the census][2] and [the reef][3].\n\n[2]: web/census.md\n"
                             "[3]: web/gone.md"))
    assert problems(result) == ([(12, "broken-link", "citation [the reef](web/gone.md) points to a file that does "
                                                     "not exist")], []) and \
        result.coverage["per_source"]["web/census.md"] == 1


def test_a_thematic_break_right_under_a_table_ends_it(check):
    result = check(synthesis(f"| claim |\n| --- |\n| 1,240 colonies {REEF1} |\n***\n\n{CLAIM}"))
    assert problems(result) == ([], []) and (result.coverage["sentences"], result.coverage["cited"]) == (4, 3)


def test_a_list_item_right_under_a_table_is_a_finding(check):
    result = check(synthesis(f"| claim |\n| --- |\n| 1,240 colonies {REEF1} |\n- Water was warm.\n\n{CLAIM}"))
    assert problems(result) == ([(15, "uncited-finding", "finding has no citation to a saved source")], [])


def test_a_block_quote_four_spaces_in_under_a_list_item_is_checked(check):
    result = check(synthesis(f'{CLAIM}\n\n    > "{INVENTED}" {REEF1}.'))
    assert problems(result) == ([(14, "quote-not-found", NOT_IN_REEF)], [])


def test_a_long_quoted_title_of_a_link_definition_is_an_error_on_its_line(check):
    result = check(synthesis(f'{CLAIM} See [the census][2].\n\n[2]: web/census.md "Census: {QUOTE}"'))
    assert problems(result) == ([(14, "link-title", f'link title "Census: {QUOTE}" is not read: drop it, or quote '
                                                    "the page in the text")], [])


# --- how quotes are compared --------------------------------------------------------------------------------------

def test_a_quote_matches_across_a_soft_hyphen(check):
    result = check(synthesis(f'- The survey found that "the reef had recov\u00adered within two seasons" {REEF1}.'))
    assert problems(result) == ([], []) and result.coverage["quotes"]["verified"] == 1


def test_a_quote_matches_a_page_that_spaces_its_parentheses(check):
    pages = dict(PAGES, **{"web/reef.md": PAGES["web/reef.md"] + "\nDivers counted ( in 2019 ) more parrotfish "
                                                                  "than ever before.\n"})
    result = check(synthesis(f'- The survey says "divers counted (in 2019) more parrotfish than ever" {REEF1}.'),
                   pages=pages)
    assert problems(result) == ([], []) and result.coverage["quotes"]["verified"] == 1


# --- what status says of a topic's syntheses ----------------------------------------------------------------------

def write_synthesis(topic, name, day):
    """A synthesis file last changed at noon (UTC) of `day`."""
    path = topic / name
    path.write_text("# A synthesis\n", encoding="utf-8")
    noon = datetime.datetime.fromisoformat(f"{day}T12:00:00+00:00").timestamp()
    os.utime(path, (noon, noon))
    return path


def init(run, goal, name, day):
    return {"run": run, "time": f"{day}T09:00:00Z", "command": "init", "goal": goal, "synthesis": name}


def entry(name, goal, run, index, day):
    return {"file": name, "goal": goal, "run": run, "index": index, "date": day, "status": "unchecked",
            "errors": None, "checked": None}


def test_status_lists_a_hand_written_synthesis_first_then_each_run_with_its_goal_and_day(tmp_path):
    write_synthesis(tmp_path, "whale-notes-synthesis.md", "2026-05-20")
    write_synthesis(tmp_path, "reefs-synthesis.md", "2026-06-09")
    write_synthesis(tmp_path, "bleaching-synthesis.md", "2026-07-09")
    events = [init("r1", "How fast do reefs recover?", "reefs-synthesis.md", "2026-06-01"),
              init("r2", "Why do reefs bleach?", "never-written-synthesis.md", "2026-06-15"),
              init("r3", "Why do reefs bleach?", "bleaching-synthesis.md", "2026-07-01")]
    assert web.synthesis_status(str(tmp_path), events) == [
        entry("whale-notes-synthesis.md", "whale-notes", None, None, "2026-05-20"),
        entry("reefs-synthesis.md", "how-fast-do-reefs-recover", "r1", 1, "2026-06-01"),
        entry("bleaching-synthesis.md", "why-do-reefs-bleach", "r3", 3, "2026-07-01")]


def test_a_synthesis_no_run_wrote_is_dated_by_its_file_in_utc(tmp_path, monkeypatch):
    path = write_synthesis(tmp_path, "notes-synthesis.md", "2026-05-20")
    late = datetime.datetime.fromisoformat("2026-05-20T23:30:00+00:00").timestamp()
    os.utime(path, (late, late))
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")   # UTC+14: already 21 May there
    time.tzset()
    try:
        found = web.synthesis_status(str(tmp_path), [])
    finally:
        monkeypatch.undo()
        time.tzset()
    assert found == [entry("notes-synthesis.md", "notes", None, None, "2026-05-20")]


def test_a_table_whose_header_row_reads_like_a_link_definition_is_read_as_a_table(check):
    r = check(synthesis(f'{CLAIM}\n\n[2]:web/census.md|x\n|---|---|\n| 1,240 colonies {REEF1} | y |'))
    assert problems(r) == ([], [])


def test_a_paragraph_under_a_nested_list_item_belongs_to_the_outer_finding(check):
    """Indented as far as the nested item, it continues the outer item, whose citation it borrows."""
    r = check(synthesis(f'{CLAIM}\n  - Divers counted them {REEF1}.\n\n  Water was warm.'))
    assert problems(r) == ([], [])


def test_a_quote_line_after_an_attribution_and_a_line_of_text_is_a_quote_of_its_own(check):
    r = check(synthesis(CLAIM, reliability=f'> "{QUOTE}" {REEF1}\n\n— Reef survey {REEF1}\nsaid so\n> {INVENTED}'))
    assert problems(r) == ([(20, "quote-not-found", NOT_IN_REEF)], [])
