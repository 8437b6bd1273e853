"""web.py outline, the rules mutation testing found untested: which `#` lines in code are headings, headings
in table cells, list items and across Firecrawl's line breaks, the underline after a blank line, and where
the main text ends after the last prose."""

import pytest

import web

PROSE = "This sentence of running text has well over eight words in it."
HEADER = ("> source: https://d.example/page  \n> query: (none)  \n> fetched: 2026-12-01  \n> relevance: r  \n"
          "> title: {title}  \n> status: 200  \n" + web.NOTE_LINE + "\n\n")   # ends on line 7


def headings(text):
    return [(line, level, title) for line, _, level, _, title in web.outline_facts(text)["headings"]]


# --- `#` lines in code ------------------------------------------------------------------------------

def test_two_comment_lines_of_the_same_marks_are_no_headings_even_after_prose():
    assert headings("It opens your editor:\n\n# pick the commits\n# squash the rest\nmake\n") == []


def test_a_line_with_a_link_inside_code_is_a_heading_only_with_a_blank_line_after_it():
    assert headings("\\# set it up\nx = load()\n\n## Flags [¶](https://d.example/f)\ncode_here()\n") == []
    assert headings("\\# set it up\nx = load()\n\n## Flags [¶](https://d.example/f)\n\ncode_here()\n") == [
        (4, 2, "Flags")]


def test_a_comment_right_under_the_first_line_of_code_is_no_heading():
    assert headings("\\# set it up\n## Flags [¶](https://d.example/f)\n\nmore code\n") == []


def test_a_heading_that_ends_the_page_after_code_is_found():
    assert headings("\\# a\nx = 1\n\n# The end") == [(4, 1, "The end")]
    assert headings("\\# a\nx = 1\n\n# The end\n\n\n") == [(4, 1, "The end")]


def test_a_heading_in_code_is_found_when_a_sentence_of_eight_words_follows_it():
    text = "\\# set it up\nx = load()\n\n# Now run it\n\n{}\n"
    assert headings(text.format("This has exactly eight words in it now.")) == [(4, 1, "Now run it")]
    assert headings(text.format("This has only seven words in it.")) == []


# --- headings in table cells, list items, and over Firecrawl's line breaks -------------------------------

def test_a_cell_heading_underlined_with_equals_signs_is_of_level_1_and_half_its_length_is_enough():
    assert headings("| Macros<br>======<br> |  |\n| Tables<br>--- |  |\n") == [(1, 1, "Macros"), (2, 2, "Tables")]


def test_a_rule_right_under_a_cell_heading_underlines_nothing():
    assert headings("| Macros<br>------ |  |\n------\n") == [(1, 2, "Macros")]


def test_a_heading_in_a_numbered_list_item_is_found():
    assert headings("1. ## Install\n\n   Run the installer first of all.\n") == [(1, 2, "Install")]


def test_indented_code_after_a_list_is_no_heading_once_the_text_is_back_at_the_margin():
    text = "*   item text\n\nPlain paragraph at the margin.\n\n    # indented code comment\n"
    assert headings(text) == []


def test_an_atx_heading_goes_on_for_one_line_after_its_link_and_no_further():
    assert headings("## See [the guide](https://d.example/g)\n for more\nBody text here.\n") == [
        (1, 2, "See the guide for more")]
    assert headings("## See [the guide](https://d.example/g)\n for more") == [(1, 2, "See the guide for more")]


def test_a_blank_line_of_spaces_after_a_headings_link_ends_it():
    assert headings("## See [the guide](https://d.example/g)\n    \nfor more\n") == [(1, 2, "See the guide")]


@pytest.mark.parametrize("rule, found", [(28, True), (27, False), (19, False)])
def test_an_underline_after_a_blank_line_is_half_as_long_as_its_text_at_least(rule, found):
    text = "Coroutines and Tasks[¶](https://d.example/tasks.html#ts)"   # 56 characters
    page = f"Intro line.\n\n{text}\n\n{'=' * rule}\n\nText.\n"
    assert headings(page) == ([(3, 1, "Coroutines and Tasks")] if found else [])


# --- the header ----------------------------------------------------------------------------------------

def test_the_header_is_no_page_text_even_when_its_title_ends_like_a_caption_of_code():
    text = HEADER.format(title="Build it like this::") + "# Build\n\nx = 1\n"
    assert web.outline_facts(text)["header"] == 7 and headings(text) == [(9, 1, "Build")]


def test_a_note_line_below_the_first_forty_lines_is_page_text_not_a_header():
    lines = [f"Line {i} of a long page." for i in range(40)]
    assert web.outline_facts("\n".join(lines + [web.NOTE_LINE, PROSE]) + "\n")["header"] == 0
    assert web.outline_facts("\n".join(lines[:39] + [web.NOTE_LINE, PROSE]) + "\n")["header"] == 40


# --- where the main text ends ---------------------------------------------------------------------------

@pytest.mark.parametrize("members", ["[a](https://d.example/a)\nTwo words",
                                     "| [a](https://d.example/a) |\n| [b](https://d.example/b) |"])
def test_a_section_of_members_after_the_last_prose_is_main_text_but_the_links_after_it_are_not(members):
    links = "".join(f"[link {i}](https://d.example/{i})\n" for i in range(5))
    text = HEADER.format(title="Page") + f"## Intro\n\n{PROSE}\n\n## Members\n\n{members}\n\n## See also\n\n{links}"
    assert web.outline_facts(text)["main"] == [9, 16]


def test_words_split_at_a_tables_pipes():
    assert web.text_words("|Name|Type|Default|") == 3
