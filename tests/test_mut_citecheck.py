"""What the mutation run found that no cite-check test held: how a synthesis is cut into blocks, sentences and
`;`-clauses, which words a block quote quotes, who a quote is credited to, how a derived number is recomputed
and shown, which passage of a page is shown beside a sentence (with its "…" when it starts past the page's first
character), a number with three digits before its comma, and what the review list and --json give. Each
test pins the message, warning or review line a writer (or Claude) reads."""

import pytest

import web

from test_citecheck import (CENSUS2, EVENTS, HEADER, KO4, LOPEZ, PAGES, QUOTE, REEF1, checker, cite_check_json,
                            synthesis, topic_on_disk)

CITY = f"{CENSUS2} puts the growing city at 48,500 residents"   # a clause only the census page holds


@pytest.fixture
def check(tmp_path):
    return checker(tmp_path, PAGES, EVENTS)


def own_warnings(result):
    """The warnings about the sentences (the run's pages never cited left out)."""
    return [w for w in result.warnings if w[1] != "never-cited"]


def review_of(run, md_root, findings, **parts):
    """The review list of cite-check's report on a synthesis with these findings: its lines, the count first."""
    path = topic_on_disk(md_root) / "reefs-synthesis.md"
    path.write_text(synthesis(findings, **parts), encoding="utf-8")
    lines = run("cite-check", path).out.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("review: ")):-1]


REEF_PASSAGE = ("[1] Marine biologists at the Coral Institute reported that the reef had recovered within two seasons "
                "after the 2016 bleaching.")


# --- blocks and sentences -----------------------------------------------------------------------------------

def test_a_line_under_a_lone_table_row_is_a_finding_of_its_own_that_must_cite(check):
    result = check(synthesis(f"- Recovery was fast {REEF1}.\n\n| Surveys counted 1,240 colonies {REEF1} |\n"
                             f"Reefs recover slowly."))
    assert result.errors == [(15, "uncited-finding", "finding has no citation to a saved source")]


def test_a_citation_after_a_word_past_the_full_stop_is_that_words_not_the_sentence_befores(run, md_root):
    assert review_of(run, md_root, f"- Between 5 and 9 species of parrotfish grazed the plots. X {REEF1}.") == [
        "review: 1 sentence to reread against the passage shown",
        "L12 uncited-sentence: Between 5 and 9 species of parrotfish grazed the plots. — [1] Between 5 and 9 species "
        "of parrotfish grazed the plots."]


# --- block quotes: the words they quote ---------------------------------------------------------------------

def test_a_block_quote_is_checked_with_its_first_letter_even_a_capital_x(check):
    result = check(synthesis(f"- Recovery was fast {REEF1}.\n\n> X-rays showed {QUOTE}\n\n— Survey team {REEF1}"))
    assert result.errors == [(14, "quote-not-found", f'quote "X-rays showed {QUOTE}" is not in web/reef.md')]


def test_a_citation_inside_a_later_paragraph_of_a_block_quote_leaves_the_words_after_it_checked(check):
    result = check(synthesis(
        f"- Recovery was fast {REEF1}.\n\n> Marine biologists at the Coral Institute reported that {QUOTE} {REEF1}\n"
        f">\n> Surveys counted 1,240 colonies {REEF1} in 2019, up from 990 colonies in 2017."))
    assert result.errors == [(16, "quote-not-found", 'quote "Surveys counted 1,240 colonies in 2019, up from 990 '
                                                     'colonies…" is not in web/reef.md')]
    assert result.coverage["quotes"] == {"verified": 1, "not_found": 1, "no_citation": 0, "exempt": 0}


# --- speakers ------------------------------------------------------------------------------------------------

def test_a_speaker_named_only_by_a_title_is_still_looked_for_in_the_page(check):
    result = check(synthesis(f'- The Director said "{QUOTE}" {REEF1}.'))
    assert own_warnings(result) == [(12, "speaker-not-in-page", "the cited page does not mention Director")]


def test_a_title_in_capitals_is_dropped_from_the_speakers_name(check):
    result = check(synthesis(f'- MX Jordan Lee said "{QUOTE}" {REEF1}.'))
    assert own_warnings(result) == [(12, "speaker-not-in-page", "the cited page does not mention Jordan Lee")]


# --- derived numbers -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("claim", ["32 (= 26.5 + 5)", "31 (= 26.5 + 5)", "13% (= 5 / 40)", "12% (= 5 / 40)"])
def test_a_number_rounded_from_an_exact_half_holds_whichever_way_it_was_rounded(check, claim):
    result = check(synthesis(f"- The plots came to {claim} in all {REEF1}."))
    assert result.errors == [] and result.coverage["numbers"]["derived"] == 1


def test_a_capital_x_is_not_a_times_sign(check):
    result = check(synthesis(f"- The plots held 45 (= 5 X 9) species {REEF1}."))
    assert result.errors == [(12, "wrong-derivation", "derived number 45: (= 5 X 9) is not arithmetic")]


@pytest.mark.parametrize("written, gives", [
    ("6.35%", "12.5%"),      # nearer 12.5 than 0.125: shown as the percentage
    ("6.25%", "0.125%"),     # nearer 0.125: shown as the fraction it computes
    ("6.3125%", "0.125%"),   # as near to both: the fraction
])
def test_a_wrong_percentage_is_shown_as_the_reading_nearer_what_was_written(check, written, gives):
    result = check(synthesis(f"- Of the 40 plots, {written} (= 5 / 40) recovered {REEF1}."))
    assert result.errors == [(12, "wrong-derivation", f"derived number {written}: (= 5 / 40) gives {gives}")]


# --- quotes cited beside pages that lack them, and ;-clauses -------------------------------------------------

def test_a_quote_cited_through_a_footnote_names_the_footnotes_page_that_lacks_it(check):
    result = check(synthesis(f'- "{QUOTE}" [^1].\n- The census counted 48,500 residents {CENSUS2}.',
                             extra=f"\n[^1]: {REEF1} and {CENSUS2}\n"))
    assert own_warnings(result) == [(12, "quote-partly-cited", f'quote "{QUOTE}" is in web/reef.md but not in '
                                     "web/census.md: move web/census.md to the words it supports, or drop it")]


@pytest.mark.parametrize("findings", [
    f'- The census counted 48,500 residents {CENSUS2}"{QUOTE}" {REEF1}.',       # a quote glued to the citation before
    f'- "{QUOTE}" {REEF1};{CITY}.',                                            # a citation glued to the `;` before
    f'- "{QUOTE}" {REEF1} X {CENSUS2}.',                                        # one word of its own
])
def test_a_page_cited_for_a_clause_of_its_own_is_not_asked_to_hold_the_quote(check, findings):
    result = check(synthesis(findings))
    assert result.errors == [] and own_warnings(result) == []


def test_a_page_cited_in_the_clause_of_the_quote_must_hold_it(check):
    result = check(synthesis(f'- "{QUOTE}" {REEF1} {CENSUS2}, as the census says.'))
    assert own_warnings(result) == [(12, "quote-partly-cited", f'quote "{QUOTE}" is in [1] but not in [2]: move [2] '
                                                               "to the words it supports, or drop it")]


@pytest.mark.parametrize("findings", [
    f"- Reefs recover within two seasons {REEF1}; {CITY}.",
    f"- Reefs recover within two seasons {REEF1};{CITY}.",
    f'- Recovery was fast {REEF1}. "{QUOTE}" {REEF1}; {CITY}.',    # a second sentence, after a quote
])
def test_a_sentence_whose_semicolon_clauses_each_cite_a_page_that_holds_them_is_not_weak(run, md_root, findings):
    assert review_of(run, md_root, findings) == ["review: nothing to reread"]


def test_citations_run_together_with_a_comma_cite_one_clause(run, md_root):
    assert review_of(run, md_root, f"- Reefs recover within two seasons {REEF1}, {CITY}.") == [
        "review: 1 sentence to reread against the passage shown",
        "L12 weak 45%: Reefs recover within two seasons [1], [2] puts the growing city at 48,500 residents. — "
        + REEF_PASSAGE]


def test_a_semicolon_inside_a_quotation_does_not_cut_the_sentence_into_clauses(run, md_root):
    findings = f'- Recovery was fast {REEF1}. Reefs recover within two seasons, "as the census {REEF1}; {CITY}".'
    assert review_of(run, md_root, findings) == [
        "review: 1 sentence to reread against the passage shown",
        'L12 weak 42%: Reefs recover within two seasons, "as the census [1]; [2] puts the growing city at 48,500 '
        'residents". — ' + REEF_PASSAGE]


@pytest.mark.parametrize("label", ["the reef report", "the reef; report"])
def test_a_semicolon_inside_a_links_label_does_not_cut_the_sentence_into_clauses(run, md_root, label):
    findings = f"- Reefs recover within two seasons [{label}](web/reef.md) {CITY}."
    assert review_of(run, md_root, findings) == [
        "review: 1 sentence to reread against the passage shown",
        "L12 weak 45%: Reefs recover within two seasons [1] [2] puts the growing city at 48,500 "
        "residents. — " + REEF_PASSAGE]


def test_a_weak_sentence_borrowing_its_paragraphs_citation_is_reviewed_outside_the_findings(run, md_root):
    extra = f"\n## Context\n\nReefs recover within two seasons {REEF1}. Tourism matters.\n"
    assert review_of(run, md_root, f"- Recovery was fast {REEF1}.", extra=extra) == [
        "review: 1 sentence to reread against the passage shown",
        "L20 weak 0%: Tourism matters. — [1] holds none of its words"]


# --- the review list in --json --------------------------------------------------------------------------------

def test_a_review_item_citing_no_saved_page_has_no_passage_and_no_share(run, md_root):
    _, answer = cite_check_json(run, md_root, "- Colonies grew by 260 (= 1,240 − 980) [5](web/gone.md).")
    assert answer["review"] == [{"line": 12, "kind": "derived", "sentence": "Colonies grew by 260 (= 1,240 − 980) "
                                 "[5].", "cites": [], "from": None, "share": 0.0, "passage": ""}]


def test_a_review_items_passage_in_json_is_given_up_to_300_characters(run, md_root):
    _, answer = cite_check_json(run, md_root, f"- Lopez blames the reef decline on tourism and coastal erosion "
                                              f"everywhere {REEF1}.")
    assert answer["review"] == [{
        "line": 12, "kind": "weak", "sentence": "Lopez blames the reef decline on tourism and coastal erosion "
                                                "everywhere [1].", "cites": ["1"], "from": "1", "share": 0.25,
        "passage": "Marine biologists at the Coral Institute reported that the reef had recovered within two seasons "
                   "after the 2016 bleaching. Surveys counted 1,240 colonies in 2019, up from 980 colonies in 2017. "
                   "Dr. Maria Lopez said the recovery was faster than any model had predicted."}]


# --- speakers, wherever the quotation and the citation sit ---------------------------------------------------

@pytest.mark.parametrize("sentence", [
    f'"{QUOTE}", Jones wrote {REEF1}.',      # the speaker after the quotation
    f'"{QUOTE}"Jones wrote {REEF1}.',        # ... glued to its closing mark
    f'Jones said"{QUOTE}" {REEF1}.',         # the quotation glued to "said"
    f'Jones {REEF1} said "{QUOTE}".',        # the citation right after the name
])
def test_a_speaker_the_page_never_names_is_found_in_a_later_sentence_however_it_is_written(check, sentence):
    result = check(synthesis(f"- Recovery was fast {REEF1}. {sentence}"))
    assert result.errors == []
    assert own_warnings(result) == [(12, "speaker-not-in-page", "the cited page does not mention Jones")]


def test_a_name_inside_a_quotation_is_not_its_speaker_even_when_the_quotation_is_not_found(check):
    result = check(synthesis(f'- Recovery was fast {REEF1}. "Jones said the reef was dying", but Lopez said '
                             f'"{LOPEZ}" {REEF1}.'))
    assert result.errors == [(12, "quote-not-found", 'quote "Jones said the reef was dying" is not in web/reef.md')]
    assert own_warnings(result) == []


def test_a_letter_in_quotation_marks_before_said_is_not_a_speaker(check):
    result = check(synthesis(f'- Lopez, who graded the reef ‘A’, said "{LOPEZ}" {REEF1}.'))
    assert result.errors == [] and own_warnings(result) == []


def test_a_speakers_name_keeps_a_leading_capital_x(check):
    result = check(synthesis(f'- Xavier Smith said "{QUOTE}" {REEF1}.'))
    assert own_warnings(result) == [(12, "speaker-not-in-page", "the cited page does not mention Xavier Smith")]


# --- the passage shown beside a sentence -----------------------------------------------------------------------

def cite_check_with_page(run, md_root, findings, page, *flags):
    """cite-check (with these flags) of a synthesis with these findings, web/ko.md ([4]) holding this page."""
    topic = topic_on_disk(md_root, dict(PAGES, **{"web/ko.md": HEADER.format("ko.example") + page}))
    path = topic / "reefs-synthesis.md"
    path.write_text(synthesis(findings), encoding="utf-8")
    return run("cite-check", path, *flags)


def review_lines(out):
    """The review list of a cite-check report: its lines, the count first."""
    lines = out.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith("review: ")):-1]


def passage_for(md_root, line):
    """The best passages the auditor is given for the sentence on this line of the topic's synthesis:
    {label: passage}."""
    result = web.cite_check(str(md_root / "reefs" / "reefs-synthesis.md"))
    ranked = {id(s): web.support(s, result.lookup) for s in result.sentences}
    return next(s["best"] for s in web.audit_sentences(result, ranked) if s["line"] == line)


def test_a_passage_that_ends_its_page_has_no_ellipsis(run, md_root):
    _, answer = cite_check_json(run, md_root, f"- The full data set is public and open {REEF1}.")
    assert answer["review"] == [] and answer["sentences"][-1]["best"] == {"1": "The full data set is public."}


@pytest.mark.parametrize("opening", ["(Reuters) ", "“", "¿"])
def test_a_page_that_opens_with_a_mark_gives_a_passage_from_its_very_start(opening):
    # the page's start is a sentence's start: nothing was cut before it, so no "…" and the mark is kept
    body = f"{opening}Reefs recover within two seasons, Lopez said. Divers agreed."
    words = web.content_words("Reefs recover within two seasons")
    passage = f"{opening}Reefs recover within two seasons, Lopez said."
    assert web.passage_in(words, *web.page_tokens(body)) == (1.0, passage)


def test_the_pages_first_word_does_not_count_for_a_passage_far_from_it(run, md_root):
    assert review_of(run, md_root, f"- Parrotfish grazed reef plots while tourists, divers and fishermen watched "
                                   f"{REEF1}.") == [
        "review: 1 sentence to reread against the passage shown",
        "L12 weak 38%: Parrotfish grazed reef plots while tourists, divers and fishermen watched [1]. — [1] Between 5 "
        "and 9 species of parrotfish grazed the plots."]


SURVEY = ("# Survey notes\n\nDivers from three universities joined the expedition in March, logging every dive in a "
          "shared notebook and photographing each transect at low tide so that later teams could compare the same "
          "frames year after year without guessing where the old markers had been. Divers mapped the reef. Reefs "
          "recovered within two seasons after bleaching. Funding ended in 2022.\n")


def test_the_passage_starts_at_the_sentence_holding_the_words_not_at_one_before_it_that_repeats_one(run, md_root):
    findings = f"- Reefs recovered within two seasons, say tourists, anglers, fishermen and boat crews {KO4}."
    assert review_lines(cite_check_with_page(run, md_root, findings, SURVEY).out) == [
        "review: 1 sentence to reread against the passage shown",
        "L12 weak 45%: Reefs recovered within two seasons, say tourists, anglers, fishermen and boat crews [4]. — "
        "[4] Reefs recovered within two seasons after bleaching."]


MARKED_UP = ("# Reef survey\n\nColony counts\n-------------\n\n| Site | Colonies |\n|------|----------|\n"
             "| North reef | 1,240 |\n\nThe **north reef** held the _most_ colonies, as the "
             "[survey data](https://example.org/data) at https://example.org/data/7777 shows.\n")


def test_a_pages_markdown_is_shown_as_plain_text_in_the_passage(run, md_root):
    findings = (f"- The north reef site held 1,240 colonies, say tourists, anglers, fishermen, boat crews and island "
                f"guides {KO4}.")
    assert review_lines(cite_check_with_page(run, md_root, findings, MARKED_UP).out) == [
        "review: 1 sentence to reread against the passage shown",
        "L12 weak 47%: The north reef site held 1,240 colonies, say tourists, anglers, fishermen, boat crews and "
        "island guides [4]. — [4] Site Colonies North reef 1,240 The north reef held the most colonies, as the survey "
        "data at shows."]


def test_a_long_sentence_is_cut_200_characters_past_the_last_word_it_shares_even_one_short_of_its_full_stop(
        run, md_root):
    tail = (" after the bleaching of 2016, while the divers who had mapped every transect kept counting colonies along "
            "the northern wall and the southern flats, year after year, until the money for boats was spent")
    assert len(tail) == 200   # the full stop after it is the 201st character past "seasons"
    page = f"# Survey notes\n\nReefs recovered within two seasons{tail}. Divers agreed.\n"
    assert cite_check_with_page(run, md_root, f"- Reefs recovered within two seasons {KO4}.", page).code == 0
    assert passage_for(md_root, 12) == {"4": f"Reefs recovered within two seasons{tail}…"}


# --- numbers written with a three-digit first group ----------------------------------------------------------

@pytest.mark.parametrize("on_page", ["248\u2009500", "248500", "248,500"])
def test_a_number_with_three_digits_before_its_comma_is_found_however_the_page_groups_it(check, on_page):
    census = f"{HEADER.format('census.example')}# City census 2020\n\nThe census of 2020 counted {on_page} residents.\n"
    result = check(synthesis(f"- The census counted 248,500 residents {CENSUS2}."),
                   pages=dict(PAGES, **{"web/census.md": census}))
    assert result.errors == [] and result.coverage["numbers"]["verified"] == 1


# --- the passage of a page without spaces ----------------------------------------------------------------------

DIVES = "今年夏天潜水员在北方海域记录了每一次下潜并拍摄了每条样带的照片以便后来"   # 35 characters, none of the claim's


def test_a_passage_that_leaves_out_a_pages_first_character_starts_with_an_ellipsis(run, md_root):
    # each Chinese character is a word: the 40 words before 复 start at the page's second character
    page = f"甲{DIVES}珊瑚礁恢复。其后资金用完了。\n"
    assert cite_check_with_page(run, md_root, f"- 珊瑚礁恢复 {KO4}.", page).code == 0
    assert passage_for(md_root, 12) == {"4": f"…{DIVES}珊瑚礁恢复。其后资金用完了。"}
