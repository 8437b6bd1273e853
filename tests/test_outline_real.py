"""web.py outline on real pages as the real Firecrawl returned them: fifteen (Sphinx, DocBook, AsciiDoc,
Publican) and seven of other generators (texi2html, groff, mdBook, rustdoc, Doxygen, javadoc, GTK-Doc)
against their HTML's own headings; and one small test per rule those pages need."""

import os

import pytest

import web
from outline_corpus import FIXTURES, heading_line, normalised, page_score, read_page, read_truth, totals

MORE = os.path.join(os.path.dirname(FIXTURES), "realcorpus")
TRUTH, MORE_TRUTH = read_truth(), read_truth(MORE)
PAGES = [(FIXTURES, name) for name in sorted(TRUTH)] + [(MORE, name) for name in sorted(MORE_TRUTH)]
SPHINX = [name for name in TRUTH if "-python3-dev-" in name]
PROSE = "This sentence of running text has well over eight words in it."


def headings(text):
    return [(line, level, title) for line, _, level, _, title in web.outline_facts(text)["headings"]]


@pytest.fixture(scope="module")
def scores():
    """{page: page_score} of every fixture page, outlined once for the module."""
    out = {}
    for folder, name in PAGES:
        text = read_page(name, folder)
        out[name] = page_score(text, dict(TRUTH, **MORE_TRUTH)[name], web.outline_facts(text))
    return out


# --- the real pages -------------------------------------------------------------------------------

def test_the_fixtures_hold_fifteen_pages_of_four_generators_and_seven_of_seven_more():
    assert len(TRUTH) == 15 and len(SPHINX) == 2
    assert {name.split("-docs-")[1].split("-")[0] for name in TRUTH} == {"python3", "postgresql", "git", "debian"}
    assert len(MORE_TRUTH) == 7 and not set(TRUTH) & set(MORE_TRUTH)


@pytest.mark.parametrize("folder, name", PAGES, ids=[name for _, name in PAGES])
def test_a_real_pages_outline_finds_its_headings_and_little_else(scores, folder, name):
    score = scores[name]
    assert score["own"] and score["found"] >= 0.98 * score["own"], score
    assert score["wrong"] <= 0.02 * score["entries"], score


def test_over_all_pages_98_percent_of_headings_are_found_and_98_percent_of_entries_are_headings(scores):
    recall, wrong, starts, pages = totals(scores.values())
    assert recall >= 0.98 and wrong <= 0.02 and starts == pages == 22


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_one_of_the_fifteen_pages_main_text_starts_at_its_top_heading(scores, name):
    assert scores[name]["expected"] and scores[name]["start"] == scores[name]["expected"], scores[name]


@pytest.mark.parametrize("name", sorted(MORE_TRUTH))
def test_a_pages_main_text_starts_at_its_title_or_where_it_is_gone_above_its_first_heading_past_menus(scores, name):
    score = scores[name]
    assert score["start_ok"] and (score["start"] == score["expected"] or not score["titled"]), score


@pytest.mark.parametrize("name", SPHINX)
def test_a_sphinx_pages_main_text_starts_at_its_title_after_the_navigation_block(name):
    text = read_page(name)
    lines = text.split("\n")
    title = next(t for level, t in TRUTH[name] if level == 1)
    menu = lines.index("### Navigation") + 1
    start, end = web.outline_facts(text)["main"]
    assert start == heading_line(lines, normalised(title)) > menu + 20   # the menu's links lie between
    assert end < next(i + 1 for i, line in enumerate(lines) if line.startswith("### [Table of Contents]"))


# --- one rule at a time ---------------------------------------------------------------------------

def test_a_heading_ending_in_a_permalink_is_underlined_after_a_blank_line():
    link = '[¶](https://d.example/t.html#tasks "Permalink to this heading")'
    text = (f"Intro line.\n\nCoroutines and Tasks{link}\n\n{'=' * 80}\n\nText.\n\n"
            f"[Creating Tasks](https://d.example/t.html#id2)\n{link}\n\n{'-' * 100}\n\nMore text.\n")
    assert headings(text) == [(3, 1, "Coroutines and Tasks"), (9, 2, "Creating Tasks")]


def test_a_line_ending_in_a_link_over_a_blank_line_and_a_short_rule_is_no_heading():
    assert headings("Read [the guide](https://d.example/guide)\n\n---\n\nNext part.\n") == []


def test_a_line_break_backslash_is_no_part_of_a_heading():
    text = "### Flags[¶](https://d.example/re.html#flags)\\\n\\\nText about flags.\\\n"
    assert headings(text) == [(1, 3, "Flags")]


def test_a_lone_hash_is_never_a_heading():
    assert headings("Some text here.\n\n#\n\nMore text here.\n") == []
    assert headings("##\n") == [(1, 2, "")]   # an empty heading of two marks still is one


def test_comments_in_a_run_of_code_lines_are_no_headings():
    text = ("Here is the file:\n\n\\# Security updates\ndeb http://security.debian.org/ bullseye-security main\n\n"
            "## Debian mirror\n\n# Base repository\ndeb https://deb.debian.org/debian bullseye main\n\n"
            "This file lists all sources of packages for the Stable version of Debian.\n\n## Next part\n\nMore.\n")
    assert headings(text) == [(13, 2, "Next part")]


def test_a_run_of_comments_with_a_lone_hash_is_no_heading_even_after_prose():
    text = "It opens your editor:\n\n# Rebase c0ffeee onto deadbee\n#\n# Commands:\n# p, pick = use commit\n"
    assert headings(text) == []


def test_a_block_opening_with_an_escaped_hash_is_code():
    text = "An example of it:\n\n\\# mdadm.conf\n# Run update-initramfs after updating this file.\nDEVICE /dev/sd\\*\n"
    assert headings(text) == []


@pytest.mark.parametrize("prompt", ["$ git rebase -i HEAD~5", "% make", "\\>>> import re"])
def test_a_comment_right_after_a_shell_or_python_prompt_is_code(prompt):
    assert headings(f"Run this:\n\n{prompt}\n# pick the commits to squash\n") == []


def test_a_comment_in_code_with_blank_lines_around_it_and_more_code_after_is_no_heading():
    assert headings("\\# set it up\nx = load()\n\n# now run it\n\nrun(x)\n") == []


@pytest.mark.parametrize("caption", ["Build the documentation like this::", "**Example 6.2. The build**"])
def test_a_block_after_a_double_colon_or_an_example_caption_is_code(caption):
    text = f"{caption}\n\n# build the docs\nmake html\n\nThat is all there is to building the documentation here.\n"
    assert headings(text) == []


def test_a_heading_after_code_and_a_paragraph_of_prose_is_still_found():
    text = ("\\# a comment\nrun()\n\nThis paragraph of running text explains the example above in detail.\n\n"
            "## Next steps\n\nMore.\n")
    assert headings(text) == [(6, 2, "Next steps")]


def test_a_heading_right_after_code_is_found_when_prose_follows_it():
    text = ("\\>>> re.match(r'\\\\', r'\\\\')\n<re.Match object; span=(0, 1)>\n\n### Writing a Tokenizer\n\n"
            "A [tokenizer or scanner](https://en.wikipedia.org/wiki/Lexical_analysis)\n"
            " analyzes a string to categorize groups of characters.\n")
    assert headings(text) == [(4, 3, "Writing a Tokenizer")]


def test_a_heading_right_after_code_is_found_when_a_list_of_links_follows_it():
    text = "\\>>> main()\nhello\n\n### Navigation\n\n*   [index](https://d.example/genindex.html)\n"
    assert headings(text) == [(4, 3, "Navigation")]


@pytest.mark.parametrize("text", [
    "Conflicts look like this:\n\n<<<<<<< HEAD:file.txt\nHello world\n=======\nGoodbye\n>>>>>>> 77976da:file.txt\n",
    "It prints:\n\n ?column?\n----------\n        4\n",
])
def test_code_shaped_text_over_a_rule_is_no_setext_heading(text):
    assert headings(text) == []


def test_a_section_of_code_above_the_first_prose_is_main_text():
    text = f"{web.NOTE_LINE}\n\nSYNOPSIS\n--------\n\n_git merge_ \\[-n\\]\n\nDESCRIPTION\n-----------\n\n{PROSE}\n"
    assert web.outline_facts(text)["main"] == [3, 11]


def test_an_atx_heading_goes_on_after_the_line_breaks_firecrawl_puts_after_its_links():
    text = ("### impl<T> [Vec](https://d.example/vec.html \"struct Vec\")\n<T, [Global](https://d.example/g.html)\n"
            "\\>\n\nConstructs a new, empty vector.\n\n#### pub fn [reserve](https://d.example/vec.html#reserve)\n(  \n"
            "    additional: [usize](https://d.example/usize.html)\n  \n)\n\nReserves capacity.\n")
    assert headings(text) == [(1, 3, "impl<T> Vec<T, Global>"), (7, 4, "pub fn reserve( additional: usize )")]


def test_a_heading_of_a_link_then_text_on_the_next_line_ends_at_the_blank_line():
    assert headings("## See [the guide](https://d.example/g)\n for more\n\nText.\n") == [(1, 2, "See the guide for more")]


def test_heading_text_drops_images_and_markdown_escapes_and_keeps_brackets_in_link_text():
    text = ("Struct [std](https://d.example/std)\n::[vec](https://d.example/vec)\n![Copy item path](https://d.example/c.svg)\n"
            "======================================================================\n\n"
            "## fn with\\_capacity(buf: &mut [\\[u8\\]](https://d.example/u8)) -> \\*mut [[T]](https://d.example/s)\n")
    assert headings(text) == [(1, 1, "Struct std::vec"), (6, 2, "fn with_capacity(buf: &mut [u8]) -> *mut [T]")]


def test_headings_in_list_items_are_found_at_the_items_indent():
    text = ("*   *   ### Constructor Summary\n        \n        | Constructor | Description |\n\n"
            "*   Parameterized runs a test many times.\n    \n    ### Tests with single parameter\n    \n"
            "    If your test needs one parameter only, give an array of objects.\n\n        # code, four spaces in\n")
    assert headings(text) == [(1, 3, "Constructor Summary"), (7, 3, "Tests with single parameter")]


def test_a_heading_in_a_tables_first_cell_is_found_when_underlined_as_long_as_its_text():
    text = "| --- | --- |\n| Macros<br>------ |     |\n| #define | [SDL_MAIN](https://d.example/m) |\n| a<br>- |  |\n"
    assert headings(text) == [(2, 2, "Macros"), (4, 2, "a")]
    assert headings("| Macros<br>-- |     |\n") == []   # an underline too short for its text


def test_a_heading_with_a_link_or_code_between_two_code_blocks_is_found():
    text = ("\\# loop\nEND IF;\n\n#### 43.6.4.2. `IF-THEN-ELSE`\n\nIF x THEN\n\n"
            "### Flags[¶](https://d.example/re.html#flags)\n\n\\>>> re.A\n\n## plain comment\n\nmore code\n")
    assert headings(text) == [(4, 4, "43.6.4.2. IF-THEN-ELSE"), (8, 3, "Flags")]


def test_a_paragraph_of_prose_broken_after_its_links_ends_the_code_before_it():
    text = ("\\>>> type(Menu)\n<class 'enum.EnumMeta'>\n\n"
            "Introducing [`__class_getitem__()`](https://d.example/dm.html#cg)\n, and outlining when a "
            "[subscription](https://d.example/ex.html)\n results in it being called instead.\n\n"
            "### 3.3.6. Emulating callable objects\n\nobject.\\_\\_call\\_\\_(_self_)\n")
    assert headings(text) == [(8, 3, "3.3.6. Emulating callable objects")]


def test_an_indented_rule_under_code_output_is_no_setext_heading():
    assert headings("SELECT 2;\n\nNOTICE:  --- Call Stack ---\n outer_func\n ------------\n          1\n") == []


def test_a_line_of_symbols_and_breaks_is_no_prose():
    assert web.text_words("| \\[ << \\] | \\[ [>>](https://d.example/2)<br> \\] | |") == 0
    assert web.line_kinds(["| #define | [SDL_MAIN](https://d.example/m) |", "*   [index](https://d.example/i)",
                           "[a](https://d.example/a) - Method in class Assert"], 0) == ["text", "links", "text"]


def test_a_sections_table_of_links_above_the_prose_is_main_text_but_a_menu_is_not():
    menu = "".join(f"*   [entry {i}](https://d.example/{i})\n" for i in range(6))
    table = "| --- | --- |\n| Macros<br>------ |     |\n| #define | [SDL_MAIN](https://d.example/m) |\n\n"
    text = f"{web.NOTE_LINE}\n\n{menu}\n{table}Detailed Description\n--------------------\n\n{PROSE}\n"
    assert web.outline_facts(text)["main"] == [11, 17]   # from the table's heading "Macros"


def test_a_one_top_heading_opens_the_text_above_its_contents_list():
    toc = "".join(f"[43.6.{i}. Part {i}](https://d.example/p#{i})\n\n" for i in range(1, 10))
    text = f"{web.NOTE_LINE}\n\n43.6. Control Structures\n------------------------\n\n{toc}{PROSE}\n\n### 43.6.1. Returning\n\n{PROSE}\n"
    assert web.outline_facts(text)["main"][0] == 3


def test_a_page_of_menus_only_starts_at_its_first_prose_past_them():
    menu = "".join(f"*   [entry {i}](https://d.example/{i})\n" for i in range(12))
    text = f"{web.NOTE_LINE}\n\n{menu}\nHere is a list of all files with brief descriptions:\n\n{menu}"
    assert web.outline_facts(text)["main"] == [16, 29]


def test_sections_of_tables_after_the_last_prose_stay_in_the_main_text():
    rows = "| `Class<?>[]` | `[value](https://d.example/v)` | Categories |\n" * 3
    text = (f"{web.NOTE_LINE}\n\n## Category\n\n{PROSE}\n\n## Required Element Summary\n\n{rows}\n"
            "## See also\n\n[a](https://d.example/a)\n[b](https://d.example/b)\n[c](https://d.example/c)\n")
    assert web.outline_facts(text)["main"] == [3, 11]


def test_a_list_item_of_prose_ends_the_code_before_it():
    text = ("\\# set it up\nx = load()\n\n*   This list item of running text explains the example above in full.\n\n"
            "## Next steps\n\nrun(x)\n")
    assert headings(text) == [(6, 2, "Next steps")]


def test_an_escaped_bracket_before_a_link_opens_no_link():
    text = "#### fn read_at(&self, buf: &mut \\[[u8](https://d.example/u8)\\\n\\], offset: [u64](https://d.example/u64)\n) -> R\n"
    assert headings(text) == [(1, 4, "fn read_at(&self, buf: &mut [u8], offset: u64) -> R")]


@pytest.mark.parametrize("prose", [PROSE + "\n", ""])
def test_a_page_of_menus_only_under_its_title_starts_at_the_title(prose):
    menu = "".join(f"[{i}. Part {i}](https://d.example/{i})\n\n" for i in range(12))
    text = f"{web.NOTE_LINE}\n\n[Next](https://d.example/n)\n\nGNU gettext\n===========\n\n# Contents\n\n{menu}{prose}{menu}"
    assert web.outline_facts(text)["main"][0] == 5
