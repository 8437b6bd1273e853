"""What the mutation run found that no cite-check test held in its citation rules: one label for two unnumbered
files (or two labels for one), the hint a broken link gets and other problems do not, a quote cited to several
wrong pages or held only by a corpus file, a quote whose citation is broken elsewhere in its item, a block
quote opening a footnote or nested in a list item, numbers after a quote in a later sentence, an HTML
quotation's missing citation, long or short link titles and headings, and the line of an unpaired quotation
mark. Each test pins the errors a writer (or Claude) reads."""

import json

import pytest

from test_citecheck import CENSUS2, KO4, PAGES, QUOTE, REEF1, WRONG, ZH3, synthesis, topic_on_disk
from test_mut_citecheck import check   # noqa: F401 (a fixture)
from test_mut_review import report

SAME = "Surveys counted 1,240 colonies"   # in both files of lab/


# --- labels of files without a number -----------------------------------------------------------------------

def test_one_label_for_two_unnumbered_files_or_two_labels_for_one_is_a_label_mismatch(run, md_root):
    lab = {f"lab/{name}.md": f"# {name}\n\n{SAME}.\n" for name in ("a", "b")}   # a subfolder: no C number
    shown, code, lines = report(run, topic_on_disk(md_root), f"- {SAME} [C1](lab/a.md).\n- {SAME} [C1](lab/a.md).\n"
                                f"- {SAME} [C1](lab/b.md).\n- {SAME} [C2](lab/a.md).\n- {SAME} [C2](lab/b.md).",
                                files=lab)
    assert code == 1 and lines == [
        f"{shown}:14: citation [C1] points to lab/b.md here but to lab/a.md earlier",
        f"{shown}:15: lab/a.md is cited as [C2] here but as [C1] earlier",
        f"{shown}:16: citation [C2] points to lab/b.md here but to lab/a.md earlier"] + [
        f"{shown}: warning: saved source web/{name}.md is never cited" for name in ("census", "zh", "ko")] + [
        "coverage: 7 sentences, 6 with a citation · quotes: 0 verified, 0 failed, 0 exempt (≤3 words), 0 unchecked "
        "· numbers: 5 verified, 0 derived, 0 not found",
        "citations per source: [1] 1 · [2] 0 · [3] 0 · [4] 0 · lab/a.md 3 · lab/b.md 2",
        "review: nothing to reread",
        "FAIL: 3 errors, 3 warnings"]


def test_label_mismatches_are_errors_of_that_kind_in_json(run, md_root):
    topic = topic_on_disk(md_root)
    (topic / "lab").mkdir()
    (topic / "lab" / "a.md").write_text(f"# a\n\n{SAME}.\n", encoding="utf-8")
    (topic / "lab" / "b.md").write_text(f"# b\n\n{SAME}.\n", encoding="utf-8")
    path = topic / "reefs-synthesis.md"
    path.write_text(synthesis(f"- {SAME} [C1](lab/a.md).\n- {SAME} [C1](lab/b.md).\n- {SAME} [C2](lab/a.md)."),
                    encoding="utf-8")
    errors = json.loads(run("cite-check", path, "--json").out)["errors"]
    assert [(e["line"], e["kind"]) for e in errors] == [(13, "label-mismatch"), (14, "label-mismatch")]


# --- hints --------------------------------------------------------------------------------------------------

def test_a_link_outside_the_topic_gets_no_did_you_mean_hint_even_when_a_page_has_its_name(check):
    result = check(synthesis(f"- Recovery was fast [1](../elsewhere/reef.md)."))
    assert result.errors == [(12, "outside-topic", "citation [1](../elsewhere/reef.md) points outside the topic")]


# --- quotes and their pages ---------------------------------------------------------------------------------

def test_a_quote_cited_to_two_wrong_pages_names_both_as_written(check):
    result = check(synthesis(f'- "{QUOTE}" {CENSUS2} {ZH3}.'))
    assert result.errors == [(12, "quote-not-found", f'quote "{QUOTE}" is on [1] (web/reef.md), not [2] or [3]')]


def test_an_invented_quote_cited_to_three_pages_names_them_by_label(check):
    result = check(synthesis(f'- "{WRONG}" {CENSUS2} {ZH3} {KO4}.'))
    assert result.errors == [(12, "quote-not-found", f'quote "{WRONG}" is not in [2], [3] or [4]')]


def test_an_uncited_quote_held_by_a_corpus_file_is_to_be_cited_by_its_c_label(check):
    lagoon = "the lagoon water stays warm"
    result = check(synthesis(f"- Recovery was fast {REEF1}.", reliability=f'Observers wrote "{lagoon}" at the time.'),
                   pages={**PAGES, "lab.md": f"# Lab\n\n{lagoon}\n"})
    assert result.errors == [(16, "quote-no-citation", f'quote "{lagoon}" has no citation; it is in lab.md: '
                                                       f'cite it as [C1](lab.md)')]


def test_a_quote_whose_items_only_citation_is_broken_is_unchecked_not_uncited(check):
    result = check(synthesis(f'- Observers wrote "{QUOTE}". The survey said so [1](web/missing.md).'))
    assert result.errors == [(12, "broken-link", "citation [1](web/missing.md) points to a file that does not exist")]


def test_a_block_quote_opening_a_footnote_after_extra_spaces_is_checked(check):
    result = check(synthesis(f"- Recovery was fast.[^1]\n\n[^1]:   > X-rays showed {QUOTE} {REEF1}"))
    assert result.errors == [(14, "quote-not-found", f'quote "X-rays showed {QUOTE}" is not in web/reef.md')]


def test_a_block_quote_in_a_list_item_is_checked_against_its_own_citation_not_the_items(check):
    result = check(synthesis(f"- Coral recovered fast {CENSUS2}.\n  > X-rays showed {QUOTE}. Surveys counted 1,240 "
                             f"colonies {REEF1}."))
    assert result.errors == [(13, "quote-not-found", f'quote "X-rays showed {QUOTE}. Sur…" is not in web/reef.md')]


def test_a_number_after_a_quote_in_a_later_sentence_is_checked(check):
    result = check(synthesis(f'- Recovery was fast {REEF1}. Observers wrote "{QUOTE}" and counted 9,999 colonies '
                             f"{REEF1}."))
    assert result.errors == [(12, "number-not-found", "number 9,999 is not in web/reef.md")]


def test_an_html_quotation_without_citation_is_one_error_not_also_an_uncited_finding(check):
    result = check(synthesis(f"- The team <q>{QUOTE}</q> said."))
    assert result.errors == [(12, "html-quote", "<q> is not read: put the quotation in quotation marks, "
                                                "with its citation")]


def test_an_html_quotation_is_reported_on_its_own_line(check):
    result = check(synthesis(f"- The team said <q>{QUOTE}</q>\n  at the time {REEF1}."))
    assert result.errors == [(12, "html-quote", "<q> is not read: put the quotation in quotation marks, "
                                                "with its citation")]


# --- link titles and headings -------------------------------------------------------------------------------

def title_error(title):
    return (12, "link-title", f"link title {title} is not read: drop it, or quote the page in the text")


@pytest.mark.parametrize("title, errors", [
    ('"A reef had recovered"', [title_error('"A reef had recovered"')]),    # four words, the first of one letter
    ('"reef had recovered X"', [title_error('"reef had recovered X"')]),    # four words, the last of one letter
    ('"reef had recovered"', []),                                          # three words: a term
    ('"The reef had recovered within two seasons after the 2016 bleaching, said the biologists"',
     [title_error('"The reef had recovered within two seasons after the 2016 ble…')]),
])
def test_a_link_title_of_four_words_or_more_is_an_error_shown_up_to_62_characters(check, title, errors):
    assert check(synthesis(f"- Recovery [1](web/reef.md {title}).")).errors == errors


def test_a_quote_of_three_words_in_a_heading_is_a_term_not_an_error(check):
    assert check(synthesis(f'### "reef had recovered"\n\n- Recovery {REEF1}.')).errors == []


# --- unpaired quotation marks -------------------------------------------------------------------------------

def test_an_unpaired_quotation_mark_is_reported_in_each_item(check):
    result = check(synthesis(f'- The report {REEF1} says "{QUOTE}.\n- The survey {REEF1} says “{QUOTE}.'))
    assert result.errors == [
        (12, "unpaired-quote-mark", 'quotation mark " pairs with none: close the quote or drop the mark'),
        (13, "unpaired-quote-mark", "quotation mark “ pairs with none: close the quote or drop the mark")]


def test_an_unpaired_quotation_mark_is_reported_on_its_own_line(check):
    result = check(synthesis(f'- The report {REEF1} says "{QUOTE}.\n  It was clear.'))
    assert result.errors == [
        (12, "unpaired-quote-mark", 'quotation mark " pairs with none: close the quote or drop the mark')]


# --- block quotes of several paragraphs ---------------------------------------------------------------------

def test_a_block_quotes_uncited_paragraph_is_checked_against_the_quotes_citation_not_its_list_items(check):
    result = check(synthesis(f"- Recovery was fast {CENSUS2}.\n\n  > Marine biologists at the Coral Institute "
                             f"reported that {WRONG}\n  >\n  > Surveys counted 1,240 colonies in 2019 {REEF1}"))
    assert result.errors == [(14, "quote-not-found", 'quote "Marine biologists at the Coral Institute reported that '
                                                     'the r…" is not in web/reef.md')]


def test_a_block_quotes_uncited_paragraph_counts_as_cited(check):
    result = check(synthesis(f"- Recovery was fast {REEF1}.\n\n> Marine biologists at the Coral Institute reported "
                             f"that {QUOTE}\n>\n> Surveys counted 1,240 colonies in 2019 {REEF1}"))
    assert result.errors == [] and (result.coverage["sentences"], result.coverage["cited"]) == (5, 4)
