"""What the mutation run found that no cite-check test held in how a synthesis is cut into sentences and what
each sentence quotes, cites and states: which single quotation marks open or close a quote (a decade's
apostrophe, a quote opening with a one-letter word, a leading apostrophe inside a quote, French guillemets
with spaces, a mark left unpaired at the start of an item or sentence), how table cells are read (each header
cell apart, rows without their outer bars, cells of one character, a citation glued to a full stop inside a
cell), which sentence a citation or footnote reference starting the next sentence belongs to, which numbers a
(= …) derivation owns (two in a sentence, one nested in another), and how an unchecked quote is shown. Each
test pins the errors, coverage or report lines a writer (or Claude) reads."""

import pytest

import web
from test_citecheck import CENSUS2, QUOTE, REEF1, cite_check_json, synthesis, topic_on_disk
from test_mut_citecheck import check   # noqa: F401 (a fixture)

NO_QUOTES = {"verified": 0, "not_found": 0, "no_citation": 0, "exempt": 0}


def counted(result):
    """(sentences, sentences citing for themselves) of a check's coverage."""
    return result.coverage["sentences"], result.coverage["cited"]


def report_lines(run, md_root, text):
    """(shown path, exit code, lines) of cite-check's report on this whole synthesis, on disk."""
    path = topic_on_disk(md_root) / "reefs-synthesis.md"
    path.write_text(text, encoding="utf-8")
    result = run("cite-check", path)
    assert result.err == ""
    return web.display_path(path), result.code, result.out.splitlines()


def unpaired(line, mark='"'):
    return (line, "unpaired-quote-mark", f"quotation mark {mark} pairs with none: close the quote or drop the mark")


# --- single quotation marks and guillemets ------------------------------------------------------------------

def test_the_apostrophe_of_a_decade_opens_no_quote_so_its_number_is_checked(check):
    result = check(synthesis(f"- In the '90s and divers' logs, surveys counted 1,240 colonies {REEF1}."))
    assert result.errors == [(12, "number-not-found", "number 90 is not in web/reef.md")]
    assert result.coverage["quotes"] == NO_QUOTES


def test_a_single_quoted_quote_opening_with_a_one_letter_word_is_checked(check):
    result = check(synthesis(f"- A diver wrote 'I saw the reef recover within two seasons' {REEF1}."))
    assert result.errors == [(12, "quote-not-found",
                              'quote "I saw the reef recover within two seasons" is not in web/reef.md')]


def test_a_leading_apostrophe_inside_a_single_quoted_quote_does_not_close_it(check):
    result = check(synthesis(f"- Divers wrote 'the reef of the '90s had recovered' {REEF1}."))
    assert result.errors == [(12, "quote-not-found", "quote \"the reef of the '90s had recovered\" is not in "
                                                     "web/reef.md")]


def test_french_guillemets_with_spaces_inside_them_close_the_quote(check):
    result = check(synthesis(f"- The report reads « {QUOTE} » {REEF1}."))
    assert result.errors == []
    assert result.coverage["quotes"] == {**NO_QUOTES, "verified": 1}


def test_a_quotation_mark_opening_an_item_or_a_sentence_and_pairing_with_none_is_an_error(check):
    result = check(synthesis(f'- "Surveys counted 1,240 colonies in 2019 {REEF1}.\n'
                             f'- Recovery was fast {REEF1}. “Surveys counted 1,240 colonies in 2019.'))
    assert result.errors == [unpaired(12), unpaired(13, "“")]


# --- table cells --------------------------------------------------------------------------------------------

def test_each_header_cell_is_read_apart_so_an_inch_mark_pairs_with_none(check):
    result = check(synthesis(f'| Site | Depth 5" | Depth 9" |\n|---|---|---|\n'
                             f"| Reef | Surveys counted 1,240 colonies {REEF1} | 2019 |"))
    assert result.errors == [unpaired(12)]
    assert result.coverage["quotes"] == NO_QUOTES


def test_the_first_cell_of_a_row_without_outer_bars_is_read_whole(check):
    result = check(synthesis(f"Site | Colonies\n--- | ---\n999 colonies | 1,240 colonies in 2019 {REEF1}"))
    assert result.errors == [(14, "number-not-found", "number 999 is not in web/reef.md")]
    assert counted(result) == (4, 2)


def test_a_cell_of_one_character_between_bars_is_read(check):
    result = check(synthesis(f"| Species grazing the plots {REEF1} |7|\n|---|---|\n| Parrotfish {REEF1} |7|"))
    assert result.errors == [(12, "number-not-found", "number 7 is not in web/reef.md"),
                             (14, "number-not-found", "number 7 is not in web/reef.md")]
    assert counted(result) == (4, 2)


def test_a_citation_glued_to_a_full_stop_in_a_later_cell_ends_the_sentence_before_it(run, md_root):
    shown, code, lines = report_lines(run, md_root, synthesis(
        f"| Site | Notes |\n|---|---|\n| Reef | Reefs recovered within two seasons.{REEF1} Colonies grew by 260 "
        f"(= 1,240 − 980) in two years.{REEF1} |"))
    assert code == 0 and lines == [f"{shown}: warning: saved source web/{name}.md is never cited"
                                   for name in ("census", "zh", "ko")] + [
        "coverage: 5 sentences, 3 with a citation · quotes: 0 verified, 0 failed, 0 exempt (≤3 words), 0 unchecked "
        "· numbers: 2 verified, 1 derived, 0 not found",
        "citations per source: [1] 3 · [2] 0 · [3] 0 · [4] 0",
        "review: 1 sentence to reread against the passage shown",
        "L14 derived: Colonies grew by 260 (= 1,240 − 980) in two years.[1] — [1] Marine biologists at the Coral "
        "Institute reported that the reef had recovered within two seasons after the 2016 bleaching. Surveys counted "
        "1,240 colonies in 2019, up from 980 colonies in 2017.",
        "ok: 0 errors, 3 warnings"]


# --- a citation or footnote reference opening the next sentence ---------------------------------------------

def test_a_citation_opening_the_next_sentence_leaves_the_sentence_before_it_uncited(run, md_root):
    shown, code, lines = report_lines(run, md_root, synthesis(
        f"- The census counted 48,500 residents. {CENSUS2} reports that the city had 12'400 households."))
    assert code == 0 and lines == [
        f"{shown}: warning: saved source web/zh.md is never cited",
        f"{shown}: warning: saved source web/ko.md is never cited",
        "coverage: 4 sentences, 2 with a citation · quotes: 0 verified, 0 failed, 0 exempt (≤3 words), 0 unchecked "
        "· numbers: 2 verified, 0 derived, 0 not found",
        "citations per source: [1] 1 · [2] 1 · [3] 0 · [4] 0",
        "review: 1 sentence to reread against the passage shown",
        "L12 uncited-sentence: The census counted 48,500 residents. — [2] The census of 2020 counted 48 500 "
        "residents.",
        "ok: 0 errors, 2 warnings"]


def test_a_footnote_reference_opening_the_next_sentence_is_that_sentences_citation(run, md_root):
    shown, code, lines = report_lines(run, md_root, synthesis(
        "- Reefs recovered within two seasons. [^1] Surveys counted 1,240 colonies in 2019.",
        extra=f"\n[^1]: Survey data {REEF1}\n"))
    assert code == 0 and lines == [
        f"{shown}: warning: saved source web/census.md is never cited",
        f"{shown}: warning: saved source web/zh.md is never cited",
        f"{shown}: warning: saved source web/ko.md is never cited",
        "coverage: 5 sentences, 3 with a citation · quotes: 0 verified, 0 failed, 0 exempt (≤3 words), 0 unchecked "
        "· numbers: 2 verified, 0 derived, 0 not found",
        "citations per source: [1] 2 · [2] 0 · [3] 0 · [4] 0",
        "review: 1 sentence to reread against the passage shown",
        "L12 uncited-sentence: Reefs recovered within two seasons. — [1] Marine biologists at the Coral Institute "
        "reported that the reef had recovered within two seasons after the 2016 bleaching.",
        "ok: 0 errors, 3 warnings"]


# --- derived numbers ----------------------------------------------------------------------------------------

def test_numbers_after_a_percentage_derivation_are_still_checked(check):
    result = check(synthesis(f"- Colonies grew by 26.5% (= (1,240 − 980) / 980 × 100) between the surveys, "
                             f"over 999 plots {REEF1}."))
    assert result.errors == [(12, "number-not-found", "number 999 is not in web/reef.md")]
    assert result.coverage["numbers"] == {"verified": 3, "derived": 1, "not_found": 1}


def test_two_derivations_in_one_sentence_each_own_their_bracket(check):
    result = check(synthesis(f"- Colonies grew by 260 (= 1,240 − 980) and cover by 26.5% "
                             f"(= (1,240 − 980) / 980 × 100) {REEF1}."))
    assert result.errors == []
    assert result.coverage["numbers"] == {"verified": 5, "derived": 2, "not_found": 0}


def test_the_times_100_of_a_percentage_derivation_is_no_stated_number_even_after_one_nested_in_it(check):
    result = check(synthesis(f"- Cover doubled to 53% (= 26.5% (= 260 / 980 × 100) × 2 × 100) {REEF1}."))
    assert result.errors == [
        (12, "number-not-found", "number 2 is not in web/reef.md"),
        (12, "number-not-found", "number 260 is not in web/reef.md"),
        (12, "wrong-derivation", "derived number 53%: (= 26.5% (= 260 / 980 × 100) × 2 × 100) is not arithmetic")]


# --- unchecked quotes ---------------------------------------------------------------------------------------

def test_an_unchecked_quote_is_shown_up_to_80_characters(run, md_root):
    quote = ("Marine biologists at the Coral Institute reported that the reef had recovered within two seasons "
             "after the bleaching")
    shown, code, lines = report_lines(run, md_root, synthesis(
        f'- The institute wrote "{quote}" [1](web/missing.md).'))
    assert code == 1 and f'  unchecked quote, line 12: "{quote[:80]}" — its citation is broken' in lines




def test_the_ideographic_space_and_cjk_punctuation_are_no_content_words():
    # a sentence's share of words its page holds counts 海, 洋, 珊, 瑚: not 　 (U+3000), 、 or 「」
    assert web.content_words("「海洋　珊瑚」、") == web.content_words("海洋珊瑚") == {web.word_key(c) for c in "海洋珊瑚"}


def test_a_derivation_holding_dates_is_shown_as_written(check):
    result = check(synthesis(f"- Colonies grew by 260 (= 1,240 on 2019-06-01 − 980 on 2017-06-01) {REEF1}."))
    assert [e for e in result.errors if e[1] == "wrong-derivation"] == [(12, "wrong-derivation", (
        "derived number 260: (= 1,240 on 2019-06-01 − 980 on 2017-06-01) is not arithmetic"))]


@pytest.mark.parametrize("findings, first, second", [
    ('- Lopez said "the recovery was faster than any model had predicted."[1](web/reef.md) The census counted '
     "48,500 residents.", 'Lopez said "the recovery was faster than any model had predicted."[1]',
     "The census counted 48,500 residents."),
    ("- 研究人员说：“珊瑚礁在两个季节内恢复了。”调查记录了许多新的珊瑚群落 [3](web/zh.md)。", "研究人员说：“珊瑚礁在两个季节内恢复了。”",
     "调查记录了许多新的珊瑚群落 [3]。"),
])
def test_a_quotation_ending_its_own_sentence_ends_it_though_nothing_spaces_it_from_the_next(run, md_root, findings,
                                                                                          first, second):
    # the auditor is given each sentence with its passages: two sentences here, not one
    _, answer = cite_check_json(run, md_root, findings)
    assert [s["text"] for s in answer["sentences"] if s["line"] == 12] == [first, second]
