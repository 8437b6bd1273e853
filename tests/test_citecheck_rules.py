"""cite-check's rules at their edges: for each rule a faithful and a fabricated synthesis that differ in
that point only, each threshold on both sides; then the review list, its JSON, and its size."""

import json

import pytest

import citecheck_corpus
import web
from test_citecheck import (CENSUS2, EVENTS, HEADER, PAGES, QUOTE, REEF1, WRONG, checker, cite_check_json, kinds,
                            synthesis, topic_on_disk)

ZH = "# 珊瑚礁\n\n珊瑚礁高约116米，覆盖率约29%，调查于2021年结束。\n"
KO = "# 산호초\n\n산호 피복률은 약29% 늘었고, 조사는 2021년에 끝났다.\n"
WIDE = "# 珊瑚\n\n礁高约１１６米。\n"
LU = "# Interview\n\nEd Lu, a former astronaut, said the reef had recovered within two seasons.\n"
MORE = {"web/zh2.md": HEADER.format("zh2.example") + ZH, "web/ko2.md": HEADER.format("ko2.example") + KO,
        "web/wide.md": HEADER.format("wide.example") + WIDE, "web/lu.md": HEADER.format("lu.example") + LU}
ALL_PAGES = dict(PAGES, **MORE)
ALL_EVENTS = EVENTS + [{"run": "r1", "command": "scrape", "outcome": "saved", "path": f"md/reefs/{rel}"}
                       for rel in MORE]
ZH5, KO6, WIDE7, LU8 = "[5](web/zh2.md)", "[6](web/ko2.md)", "[7](web/wide.md)", "[8](web/lu.md)"


@pytest.fixture
def check(tmp_path):
    """cite-check of a synthesis text against ALL_PAGES: the CheckResult."""
    return checker(tmp_path, ALL_PAGES, ALL_EVENTS)


def review(result):
    """The review list of a CheckResult, as --json gives it."""
    ranked = {id(s): web.support(s, result.lookup) for s in result.sentences}
    return [web.review_entry(r, result.lookup) for r in web.reviews(result, ranked)]


def warned(result, kind):
    return [m for _, k, m in result.warnings if k == kind]


# --- A1: numbers next to CJK and Hangul letters, full-width digits -----------------------------------

@pytest.mark.parametrize("faithful, fabricated, number", [
    (f"- 礁高约116米 {ZH5}.", f"- 礁高约117米 {ZH5}.", "117"),
    (f"- 覆盖率约29% {ZH5}.", f"- 覆盖率约39% {ZH5}.", "39"),
    (f"- 피복률은 약29% 늘었다 {KO6}.", f"- 피복률은 약39% 늘었다 {KO6}.", "39"),
    (f"- 조사는 2021년에 끝났다 {KO6}.", f"- 조사는 2022년에 끝났다 {KO6}.", "2022"),
    (f"- 礁高约１１６米 {ZH5}.", f"- 礁高约１１７米 {ZH5}.", "117"),        # full-width in the synthesis
    (f"- 礁高约116米 {WIDE7}.", f"- 礁高约117米 {WIDE7}.", "117"),          # full-width in the page
])
def test_numbers_next_to_cjk_letters_are_numbers_on_both_sides(check, faithful, fabricated, number):
    assert check(synthesis(faithful)).errors == []
    assert check(synthesis(faithful)).coverage["numbers"]["verified"] == 1
    assert check(synthesis(fabricated)).errors == [(12, "number-not-found", f"number {number} is not in "
                                                    f"{fabricated.split('](')[1].split(')')[0]}")]


def test_a_digit_inside_a_latin_word_is_still_not_a_number(check):
    result = check(synthesis(f"- The H2O and CO2 levels of reef water rose {REEF1}."))
    assert result.errors == [] and result.coverage["numbers"]["verified"] == 0


def test_a_date_next_to_cjk_letters_is_checked():
    assert web.stated_numbers("调查于2021-03-14结束")[1] == [("2021", "03", "14")]
    assert web.stated_numbers("id x2021-03-14")[1] == []


# --- A2: a citation belongs to the sentence it stands in ---------------------------------------------

@pytest.mark.parametrize("faithful, fabricated", [
    # at the start of a sentence, followed by its words: it is that sentence's citation
    (f"- Surveys counted 1,240 colonies {REEF1}. {CENSUS2} reports 48,500 residents.",
     f"- Surveys counted 1,240 colonies {CENSUS2}. {REEF1} reports 48,500 residents."),
    (f"- Surveys counted 1,240 colonies {REEF1}. {CENSUS2} and {CENSUS2} report 48,500 residents.",
     f"- Surveys counted 1,240 colonies {CENSUS2}. {REEF1} and {REEF1} report 48,500 residents."),
    # right after the full stop, then a new sentence: it is the sentence before's
    (f"- Surveys counted 1,240 colonies. {REEF1} The census counted 48,500 residents {CENSUS2}.",
     f"- Surveys counted 48,500 colonies. {REEF1} The census counted 48,500 residents {CENSUS2}."),
    (f"- Surveys counted 1,240 colonies.{REEF1} The census counted 48,500 residents {CENSUS2}.",
     f"- Surveys counted 48,500 colonies.{REEF1} The census counted 48,500 residents {CENSUS2}."),
    # at the end of the block, or with a lower-case word only on the next line
    (f"- The census counted 48,500 residents {CENSUS2}. Surveys counted 1,240 colonies. {REEF1}",
     f"- The census counted 48,500 residents {CENSUS2}. Surveys counted 48,500 colonies. {REEF1}"),
    (f"- Surveys counted 1,240 colonies. {REEF1}\n  then the census counted 48,500 residents {CENSUS2}.",
     f"- Surveys counted 48,500 colonies. {REEF1}\n  then the census counted 48,500 residents {CENSUS2}."),
])
def test_a_citation_is_checked_with_the_sentence_it_belongs_to(check, faithful, fabricated):
    good = check(synthesis(faithful))
    assert good.errors == [] and good.coverage["cited"] == 3, good.errors   # of 4: Reliability's cites nothing
    assert "number-not-found" in kinds(check(synthesis(fabricated)).errors)


@pytest.mark.parametrize("text, sentences", [
    ("Claim. [1](a.md) reports it. Next.", ["Claim. ", "[1](a.md) reports it. ", "Next."]),
    ("Claim. [1](a.md) The next one.", ["Claim. [1](a.md) ", "The next one."]),
    ("Claim.[1](a.md) The next one.", ["Claim.[1](a.md) ", "The next one."]),
    ("Claim. [1](a.md), [2](b.md) agree.", ["Claim. ", "[1](a.md), [2](b.md) agree."]),
    ("Claim. [1](a.md)\nreports X.", ["Claim. [1](a.md)\n", "reports X."]),
    ("Claim. [1](a.md)", ["Claim. [1](a.md)"]),
    ("It ended.[sic] Then.", ["It ended.[sic] Then."]),
    ("珊瑚礁恢复了。[1](a.md)调查结束了。", ["珊瑚礁恢复了。[1](a.md)", "调查结束了。"]),
])
def test_where_sentences_and_their_citations_are_cut(text, sentences):
    spans = web.sentence_spans(text, web.find_quotes(text), [m.span() for m in web.CITATION.finditer(text)])
    assert [text[s:e] for s, e in spans] == sentences


# --- A3: every CommonMark and GFM construct is read -----------------------------------------------

@pytest.mark.parametrize("layout", [
    '- > "{q}" {c}.',                                         # a block quote in a list item
    "- The report {c}:\n  > “{q}”",                            # ... on the item's next line
    "- The report {c}.\n\n  It says: “{q}”.",                    # a continuation paragraph of the item
    "- The report {c}.\n  - It says: “{q}”.",                    # a nested list
    "- The report {c}.\n\n    It says: “{q}”.",                  # a continuation indented four spaces
    '| Site | Quote |\n| --- | --- |\n| Reef | "{q}" {c} |',     # a table's body row
    'Site | Quote\n--- | ---\nReef | "{q}" {c}',                # a table without outer pipes
    '- Recovery was quick.[^1]\n\n[^1]: {c} says "{q}".',      # a footnote definition
    '- Recovery was quick: "{q}".[^r]\n\n[^r]: {c}',            # a quote cited through a footnote
    '- Recovery was quick: "{q}" [1].\n\n[1]: web/reef.md',    # a reference-style citation
    '- Recovery was quick: "{q}" [the report][r].\n\n[r]: <web/reef.md> "Reef report"',
])
def test_quotes_are_read_in_every_construct(check, layout):
    good = check(synthesis(layout.format(q=QUOTE, c=REEF1)))
    assert good.errors == [] and good.coverage["quotes"]["verified"] == 1, good.errors
    assert kinds(check(synthesis(layout.format(q=WRONG, c=REEF1))).errors) == ["quote-not-found"]


def test_a_reference_label_matches_whatever_its_case_and_spacing(check):
    text = "- Surveys counted 1,420 colonies [1][The  Reef\nReport].\n\n[the reef report]: web/reef.md"
    assert check(synthesis(text)).errors == [(12, "number-not-found", "number 1,420 is not in web/reef.md")]
    undefined = check(synthesis("- Surveys counted 1,420 colonies [1][other].\n\n[the reef report]: web/reef.md"))
    assert kinds(undefined.errors) == ["uncited-finding"]


def test_each_table_cell_is_checked_against_its_own_citation(check):
    row = "| Site | Count | Residents |\n| --- | --- | --- |\n| Reef | 1,240 colonies {a} | 48,500 people {b} |"
    assert check(synthesis(row.format(a=REEF1, b=CENSUS2))).errors == []
    assert kinds(check(synthesis(row.format(a=CENSUS2, b=REEF1))).errors) == ["number-not-found"] * 2
    uncited = check(synthesis("| Site | Count |\n| --- | --- |\n| Reef | 1,420 colonies |\n\n- x " + REEF1 + "."))
    assert kinds(uncited.errors) == ["uncited-finding"]


def test_a_tables_header_row_is_read_for_its_quotes_only_and_a_row_without_a_rule_is_prose(check):
    header = '| Site "as surveyed" | Count 2019 |\n| --- | --- |\n| Reef ' + REEF1 + " | x |"
    assert check(synthesis(header)).errors == [] and check(synthesis(header)).coverage["sentences"] == 4
    invented = header.replace("as surveyed", "an invented quote as a header")
    assert check(synthesis(invented)).errors == [
        (12, "quote-no-citation", 'quote "an invented quote as a header" has no citation')]
    no_rule = '| "An invented quote in a plain row" ' + REEF1 + " |"
    assert kinds(check(synthesis(no_rule)).errors) == ["quote-not-found"]


def test_a_number_in_a_nested_list_item_is_checked_against_the_item_above(check):
    assert check(synthesis(f"- Surveys {REEF1}:\n  - counted 1,240 colonies.")).errors == []
    result = check(synthesis(f"- Surveys {REEF1}:\n  - counted 1,420 colonies."))
    assert result.errors == [(13, "number-not-found", "number 1,420 is not in web/reef.md")]


def test_a_finding_may_cite_through_its_footnote_but_the_footnote_must_exist(check):
    good = check(synthesis("- Surveys counted 1,240 colonies.[^s]\n\n[^s]: The survey " + REEF1 + "."))
    assert good.errors == [] and good.coverage["cited"] == 3       # the answer, the finding, the footnote
    wrong = check(synthesis("- Surveys counted 48,500 colonies.[^s]\n\n[^s]: The survey " + REEF1 + "."))
    assert wrong.errors == [(12, "number-not-found", "number 48,500 is not in web/reef.md")]
    missing = check(synthesis("- Surveys counted 1,240 colonies.[^t]\n\n[^s]: The survey " + REEF1 + "."))
    assert kinds(missing.errors) == ["broken-footnote"] and missing.errors[0][2] == "footnote [^t] has no definition"


def test_a_footnote_without_a_citation_does_not_cite(check):
    result = check(synthesis("- Surveys counted 1,240 colonies.[^s]\n\n[^s]: My own remark."))
    assert kinds(result.errors) == ["uncited-finding"]


def test_headings_of_both_kinds_are_not_prose_and_underlined_ones_open_sections(check):
    text = synthesis(f"- Recovery was fast {REEF1}.").replace("## Findings\n", "Findings\n--------\n")
    text = text.replace("## Reliability\n", 'Notes on "recovery"\n===\n\n## Reliability\n')
    result = check(text)
    assert result.errors == [] and result.coverage["quotes"] == {"verified": 0, "not_found": 0, "no_citation": 0,
                                                                 "exempt": 0}
    assert kinds(check(text.replace("Findings\n--------\n", "Findings\n\n")).errors) == ["no-findings",
                                                                                      "uncited-answer"]


def test_indented_code_and_thematic_breaks_are_not_prose(check):
    text = synthesis(f"- Recovery was fast {REEF1}.", reliability='Checked by hand.\n\n    "an invented quote in '
                                                                  'indented code"\n\n***\n\nDone.')
    assert check(text).errors == []
    lazy = synthesis(f"- Recovery was fast {REEF1}.", reliability='Checked by hand.\n    "an invented quote in a '
                                                                  'paragraph line"')
    assert kinds(check(lazy).errors) == ["quote-no-citation"]   # no blank line: the paragraph goes on


def test_the_outline_of_nested_content_keeps_its_unit():
    blocks, _ = web.outline("## Findings\n\n- one\n  > quoted\n\n  more\n  - nested\n- two\n\nafter\n")
    assert [(b.kind, b.text, b.unit.text) for b in blocks] == [
        ("item", "one", "one"), ("quote", "quoted", "one"), ("paragraph", "more", "one"),
        ("item", "nested", "one"), ("item", "two", "two"), ("paragraph", "after", "after")]


# --- A4: quotation marks of every language, apostrophes apart ------------------------------------------

@pytest.mark.parametrize("marks", ["‘{}’", "„{}“", "„{}”", "‹{}›", "»{}«", "«{}»", "‚{}‘"])
def test_quotes_in_every_mark_are_checked(check, marks):
    good = check(synthesis(f"- The reef’s surveyors don’t doubt it: {marks.format(QUOTE)} {REEF1}."))
    assert good.errors == [] and good.coverage["quotes"]["verified"] == 1, good.errors
    assert kinds(check(synthesis(f"- It says {marks.format(WRONG)} {REEF1}.")).errors) == ["quote-not-found"]


@pytest.mark.parametrize("text, quotes", [
    ("The reef’s colonies don’t die.", []),
    ("rock‘n’roll and ‘a b’", [(16, 21, "a b")]),
    ("(‘a b’)", [(1, 6, "a b")]),
    ("‘the reef’s survival’", [(0, 21, "the reef’s survival")]),
    ("„a b“ and ‹c›", [(0, 5, "a b"), (10, 13, "c")]),
])
def test_an_apostrophe_is_not_a_quotation_mark(text, quotes):
    assert web.find_quotes(text) == quotes


def test_cjk_quotes_of_three_characters_are_terms_and_of_four_are_checked(check):
    three = check(synthesis(f"- 记录：「珊瑚虫」 {ZH5}."))
    assert three.errors == [] and three.coverage["quotes"]["exempt"] == 1
    assert kinds(check(synthesis(f"- 记录：「珊瑚虫们」 {ZH5}.")).errors) == ["quote-not-found"]


# --- A5: every link resolves, the Sources list included ------------------------------------------------

def test_a_sources_link_to_a_missing_page_is_an_error_and_an_external_one_is_not_checked(check):
    text = synthesis(f"- Recovery was fast {REEF1}.")
    gone = check(text.replace("[web/reef.md](web/reef.md)", "[web/gone.md](web/gone.md)"))
    assert gone.errors == [(20, "broken-link", "citation [web/gone.md](web/gone.md) points to a file that does not exist")]
    assert check(text.replace("[web/reef.md](web/reef.md)", "[reef](https://reef.example/)")).errors == []
    outside = check(text.replace("[web/reef.md](web/reef.md)", "[x](../other/web/a.md)"))
    assert outside.errors == [(20, "outside-topic", "citation [x](../other/web/a.md) points outside the topic")]


def test_a_page_listed_in_sources_only_is_still_never_cited(check):
    text = synthesis(f"- Growth was 3.5% {CENSUS2}.", answer=f"Cities grow {CENSUS2}.")
    assert "saved source web/reef.md is never cited" in warned(check(text), "never-cited")
    assert check(text).coverage["per_source"]["web/reef.md"] == 0


# --- A6: a quote cited to several pages -----------------------------------------------------------------

def test_a_quote_some_of_its_cited_pages_lack_is_a_warning(check):
    partly = check(synthesis(f'- "{QUOTE}" {REEF1} {CENSUS2}.'))
    assert partly.errors == [] and warned(partly, "quote-partly-cited") == [
        f'quote "{QUOTE}" is in [1] but not in [2]: move [2] to the words it supports, or drop it']
    both = dict(ALL_PAGES, **{"web/census.md": ALL_PAGES["web/census.md"] + f"\nThey wrote that {QUOTE}.\n"})
    assert warned(check(synthesis(f'- "{QUOTE}" {REEF1} {CENSUS2}.'), both), "quote-partly-cited") == []


def test_a_quote_checked_against_its_paragraphs_pages_is_not_partly_cited(check):
    result = check(synthesis(f'- Growth was 3.5% {CENSUS2}. They wrote "{QUOTE}". It was fast {REEF1}.'))
    assert result.errors == [] and warned(result, "quote-partly-cited") == []


# --- A7: speakers without their titles ------------------------------------------------------------------

@pytest.mark.parametrize("sentence, name", [
    (f'Astronaut Ed Lu said "{QUOTE}" {LU8}.', None),
    (f'Astronaut Ed Li said "{QUOTE}" {LU8}.', "Ed Li"),
    (f'According to astronaut Ed Lu, "{QUOTE}" {LU8}.', None),
    (f'According to astronaut Ed Li, "{QUOTE}" {LU8}.', "Ed Li"),
    (f'"{QUOTE}", said former astronaut Ed Lu {LU8}.', None),
    (f'"{QUOTE}", said former astronaut Ed Li {LU8}.', "Ed Li"),
    (f'Professor Lu said "{QUOTE}" {LU8}.', None),
    (f'Professor Lo said "{QUOTE}" {LU8}.', "Lo"),
    (f'Marine biologist Maria Lopez said "the recovery was faster than any model had predicted" {REEF1}.', None),
])
def test_a_speaker_is_matched_without_titles_and_roles(check, sentence, name):
    result = check(synthesis(f"- {sentence}"))
    assert result.errors == []
    assert warned(result, "speaker-not-in-page") == ([f"the cited page does not mention {name}"] if name else [])


def test_a_short_name_must_be_a_whole_word_of_the_page(check):
    pages = dict(ALL_PAGES, **{"web/lu.md": HEADER.format("lu.example") + "# Talk\n\nA lucid diver said the reef had "
                                                                          "recovered within two seasons.\n"})
    result = check(synthesis(f'- Professor Lu said "{QUOTE}" {LU8}.'), pages)
    assert warned(result, "speaker-not-in-page") == ["the cited page does not mention Lu"]


# --- A8: a file that is not a synthesis ---------------------------------------------------------------

@pytest.mark.parametrize("where", ["README.md", "reefs/notes.md", "loose-synthesis.md"])
def test_a_file_that_is_not_a_synthesis_is_a_usage_error(run, md_root, tmp_path, where):
    topic_on_disk(md_root)
    path = (md_root / where) if where.startswith("reefs/") else (tmp_path / where)
    path.write_text(synthesis(f"- Recovery was fast {REEF1}."), encoding="utf-8")
    r = run("cite-check", path)
    assert r.code == web.EXIT_USAGE and r.out == "" and r.err == (
        f"web.py: usage: {web.display_path(path)} is not a synthesis — give md/<topic>/<goal-slug>-<date>-synthesis.md\n")


def test_a_synthesis_of_a_topic_without_pages_yet_is_checked(run, md_root):
    (md_root / "fresh").mkdir(parents=True)
    path = md_root / "fresh" / "goal-synthesis.md"
    path.write_text(synthesis("- Nothing cited."), encoding="utf-8")
    assert run("cite-check", path).code == web.EXIT_PARTIAL


# --- B: the review list ------------------------------------------------------------------------------

@pytest.mark.parametrize("claim, weak", [
    ("Parrotfish zebras", False),              # 1 of 2 content words: 0.5, the threshold, is enough
    ("Parrotfish zebras giraffes", True),      # 1 of 3
])
def test_weak_support_is_under_half_of_the_content_words(check, claim, weak):
    entries = review(check(synthesis(f"- {claim} {REEF1}.")))
    assert [e["kind"] for e in entries] == (["weak"] if weak else [])
    if weak:
        assert entries[0]["share"] == 0.33 and entries[0]["passage"] == \
            "Between 5 and 9 species of parrotfish grazed the plots."


COMPOUND = "- Parrotfish grazed the plots at night near hotels {a}; the census counted 48,500 residents of the town {b}."


def test_a_compound_sentence_whose_clauses_each_match_their_own_page_is_not_weak(check):
    result = check(synthesis(COMPOUND.format(a=REEF1, b=CENSUS2)))
    assert max(share for _, share, _ in web.support(result.sentences[1], result.lookup)) < web.WEAK_SUPPORT
    assert result.errors == [] and review(result) == []
    swapped = check(synthesis(COMPOUND.replace("48,500 residents", "many residents").format(a=CENSUS2, b=REEF1)))
    assert [e["kind"] for e in review(swapped)] == ["weak"]


@pytest.mark.parametrize("second, listed", [
    ("Recovery was fast.", False),                      # two content words: not a claim
    ("Recovery was remarkably fast.", True),            # three
    ("It was 2 seasons.", True),                         # a number
    ('They wrote "it is back".', True),                 # a quote
])
def test_a_claim_without_its_own_citation_is_listed(check, second, listed):
    result = check(synthesis(f"- Reefs recover within two seasons {REEF1}. {second}"))
    assert [e["kind"] for e in review(result)] == (["uncited-sentence"] if listed else [])


def test_sentences_about_the_sources_and_the_sources_list_are_not_reviewed(check):
    for section in ("Reliability", "Method", "Methods", "Limitations"):
        text = synthesis(f"- Reefs recover within two seasons {REEF1}.",
                         reliability=f"Parrotfish zebras giraffes {REEF1}. Recovery was remarkably fast.")
        assert review(check(text.replace("## Reliability", f"## {section}"))) == [], section
    disagreements = synthesis(f"- Reefs recover within two seasons {REEF1}.",
                              extra="\n## Disagreements\n\nRecovery was remarkably fast.\n")
    entries = review(check(disagreements))
    assert [(e["kind"], e["cites"], e["from"], e["passage"]) for e in entries] == [("uncited-sentence", [], None, "")]


def test_a_table_cell_is_not_asked_for_its_own_citation(check):
    table = f"| Site | Count |\n| --- | --- |\n| Reef survey of colonies | 1,240 colonies {REEF1} |"
    assert review(check(synthesis(table))) == []


def test_the_review_lists_derived_numbers_and_leaves_a_partly_cited_quote_to_its_warning(check):
    result = check(synthesis(f'- "{QUOTE}" {REEF1} {CENSUS2}.\n- Colonies grew by 260 (= 1,240 − 980) {REEF1}.'))
    entries = review(result)
    assert [(e["line"], e["kind"], e["cites"], e["from"]) for e in entries] == [(13, "derived", ["1"], "1")]
    assert [line for line, kind, _ in result.warnings if kind == "quote-partly-cited"] == [12]
    assert entries[0]["passage"] == "Surveys counted 1,240 colonies in 2019, up from 980 colonies in 2017."
    assert entries[0]["sentence"] == "Colonies grew by 260 (= 1,240 − 980) [1]."


def entry(line, kind="weak", sentence="s", passage="p"):
    return {"line": line, "kind": kind, "sentence": sentence, "cites": ["1"], "from": "1", "share": 0.25,
            "passage": passage}


def test_the_review_list_is_capped_and_points_to_the_table():
    full = web.render_review([entry(n) for n in range(web.REVIEW_CAP)])
    assert len(full) == web.REVIEW_CAP + 1 and full[-1] == f"L{web.REVIEW_CAP - 1} weak 25%: s — [1] p"
    over = web.render_review([entry(n) for n in range(web.REVIEW_CAP + 1)])
    assert len(over) == web.REVIEW_CAP + 2 and over[-1] == "and 1 more — cite-check --table"
    assert over[0] == f"review: {web.REVIEW_CAP + 1} sentences to reread against the passage shown"
    assert web.render_review([]) == ["review: nothing to reread"]


def test_a_review_line_cuts_the_sentence_and_the_passage():
    line = web.render_review([entry(7, "derived", "w" * 400, "q" * 400)])[1]
    sentence, passage = line[len("L7 derived: "):].split(" — [1] ")
    assert len(sentence) == web.REVIEW_SENTENCE and sentence.endswith("…")
    assert len(passage) == web.REVIEW_PASSAGE and passage.endswith("…")
    short = web.render_review([entry(7, "derived", "w" * web.REVIEW_SENTENCE, "")])[1]
    assert short == f"L7 derived: {'w' * web.REVIEW_SENTENCE} — [1] holds none of its words"


def test_the_review_is_most_pressing_kind_first_then_by_line(check):
    text = synthesis(f"- Parrotfish zebras giraffes {REEF1}.\n- Colonies grew by 260 (= 1,240 − 980) {REEF1}.\n"
                     f'- "{QUOTE}" {REEF1} {CENSUS2}.\n- Reefs recover {REEF1}. Recovery was remarkably fast.')
    assert [(e["line"], e["kind"]) for e in review(check(text))] == [
        (15, "uncited-sentence"), (12, "weak"), (13, "derived")]


# --- B: the report on disk: text, JSON and size ------------------------------------------------------------

def test_the_text_report_ends_with_the_review_then_the_verdict(run, md_root):
    topic = topic_on_disk(md_root)
    path = topic / "reefs-synthesis.md"
    path.write_text(synthesis(f"- Growth was 3.5% {CENSUS2}.\n- Parrotfish zebras giraffes {REEF1}."), encoding="utf-8")
    lines = run("cite-check", path).out.splitlines()
    assert lines[-3:] == ["review: 1 sentence to reread against the passage shown",
                          "L13 weak 33%: Parrotfish zebras giraffes [1]. — [1] Between 5 and 9 species of parrotfish "
                          "grazed the plots.", "ok: 0 errors, 2 warnings"]
    assert "citations per source: [1] 2 · [2] 1 · [3] 0 · [4] 0" in lines      # by citation number, not first use


def test_the_json_carries_the_review_and_every_cited_sentence_for_an_auditor(run, md_root):
    path, answer = cite_check_json(run, md_root, f"- Parrotfish zebras giraffes {REEF1}.\n- Growth was 3.5% {CENSUS2} "
                                                 f"{REEF1}.")
    assert answer["file"] == web.display_path(path) and answer["ok"] is True
    assert answer["review"] == [{"line": 12, "kind": "weak", "sentence": "Parrotfish zebras giraffes [1].",
                                 "cites": ["1"], "from": "1", "share": 0.33,
                                 "passage": "Between 5 and 9 species of parrotfish grazed the plots."}]
    growth = next(s for s in answer["sentences"] if s["line"] == 13)
    assert growth == {"line": 13, "text": "Growth was 3.5% [2] [1].", "cites": ["2", "1"],
                      "best": {"2": "Growth was 3,5 % per year.", "1": growth["best"]["1"]}}
    assert [s["line"] for s in answer["sentences"]] == [8, 12, 13]      # every cited sentence
    assert all(len(p) <= web.AUDIT_PASSAGE for s in answer["sentences"] for p in s["best"].values())


def test_everything_cite_check_prints_for_an_eight_source_synthesis_fits_the_budget(run, md_root, monkeypatch):
    monkeypatch.setenv("WEB_MD_ROOT", str(md_root))
    path = citecheck_corpus.write_topic(md_root)
    r = run("cite-check", path)
    assert r.code == 0 and len(r.out) <= 6000, r.out
    assert r.out.splitlines()[-2] == "ok: 0 errors, 0 warnings"
    assert r.out.splitlines()[-1].startswith("next: launch the audit in 2 slices")   # 50 citation pairs
    kinds_listed = [line.split(":")[0].split()[1] for line in r.out.splitlines() if line.startswith("L")]
    assert kinds_listed == ["uncited-sentence"] * 3 + ["header-only"] * 2 + ["weak"]   # "peer reviewed": our words
    lengths = [len(line) for line in r.out.splitlines() if line.startswith("L")]
    assert max(lengths) <= 30 + web.REVIEW_SENTENCE + web.REVIEW_PASSAGE


def test_a_full_review_list_still_fits_the_budget(run, md_root):
    topic = topic_on_disk(md_root)
    path = topic / "reefs-synthesis.md"
    long = "Parrotfish zebras giraffes elephants " * 8
    path.write_text(synthesis("\n".join(f"- {long}{n} {REEF1}." for n in range(web.REVIEW_CAP + 5))),
                    encoding="utf-8")
    out = run("cite-check", path).out
    assert out.count("\nL") == web.REVIEW_CAP and "and 5 more — cite-check --table" in out
    review_part = out[out.index("review:"):]
    assert len(review_part) <= 6000 - 600, len(review_part)   # room left for coverage, warnings and the verdict


def test_the_json_of_an_eight_source_synthesis_is_bounded(run, md_root, monkeypatch):
    path = citecheck_corpus.write_topic(md_root)
    answer = run("cite-check", path, "--json").json
    assert answer["ok"] is True and len(answer["review"]) == 6 and "sentences" not in answer
    assert len(json.dumps(answer, ensure_ascii=False)) <= 6000
    result = web.cite_check(str(path))
    sentences = web.audit_sentences(result, {id(s): web.support(s, result.lookup) for s in result.sentences})
    passages = [len(p) for s in sentences for p in s["best"].values()]
    assert web.AUDIT_PASSAGE >= max(passages) > web.REVIEW_PASSAGE        # the auditor gets the longer cut


def test_the_json_review_list_is_capped_as_the_text_one_is(run, md_root):
    path = topic_on_disk(md_root) / "reefs-synthesis.md"
    long = "Parrotfish zebras giraffes elephants " * 8
    path.write_text(synthesis("\n".join(f"- {long}{n} {REEF1}." for n in range(web.REVIEW_CAP + 5))), encoding="utf-8")
    answer = run("cite-check", path, "--json").json
    assert len(answer["review"]) == web.REVIEW_CAP and answer["review_more"] == 5


# --- edges found by mutation testing -------------------------------------------------------------------

@pytest.mark.parametrize("quote", [
    "… the reef had recovered within three seasons",                     # an omission first: the rest still counts
    "after the 2016 bleaching … the reef had recovered within two seasons",  # the parts out of order
])
def test_each_part_of_a_quote_with_omissions_must_occur_in_order(check, quote):
    assert kinds(check(synthesis(f'- "{quote}" {REEF1}.')).errors) == ["quote-not-found"]


def test_a_quote_no_cited_page_holds_names_every_page_it_was_looked_for_in(check):
    result = check(synthesis(f'- "{WRONG}" {REEF1} {CENSUS2}.'))
    assert result.errors == [(12, "quote-not-found", f'quote "{WRONG}" is not in web/reef.md or web/census.md')]


def test_a_compound_sentence_after_another_sentence_is_cut_at_its_own_citations(check):
    first = "- Reefs recover within two seasons " + REEF1 + ". "
    result = check(synthesis(first + COMPOUND[2:].format(a=REEF1, b=CENSUS2)))
    assert result.errors == [] and review(result) == []


def test_a_clause_that_is_a_quote_is_held_by_its_page(check):
    text = f'- The census counted 48,500 residents {CENSUS2}; they wrote "{QUOTE} after the 2016 bleaching" {REEF1}.'
    result = check(synthesis(text))
    assert result.errors == [] and web.clauses_hold(result.sentences[1], result.lookup)
    unheld = check(synthesis(text.replace("The census counted 48,500 residents", "Tortoises ate the hotels")))
    assert not web.clauses_hold(unheld.sentences[1], unheld.lookup)


def test_a_row_without_spaces_around_its_pipes_is_read_cell_by_cell(check):
    assert check(synthesis(f"|Site|Count|\n|---|---|\n|Reef|1,240 colonies {REEF1}|")).errors == []
    assert kinds(check(synthesis(f"|Site|Count|\n|---|---|\n|Reef|1,420 colonies {REEF1}|")).errors) == \
        ["number-not-found"]


def test_a_header_row_at_the_end_of_a_paragraph_leaves_the_paragraph(check):
    blocks, _ = web.outline("## Findings\n\nline one\nline two\nA | B\n--- | ---\nx | y\n")
    assert [(b.kind, b.line, b.text) for b in blocks] == [("paragraph", 3, "line one\nline two"),
                                                          ("header", 5, "A | B"), ("row", 7, "x | y")]
    blocks, _ = web.outline("|---|---|\n| a | b |\n")
    assert [(b.kind, b.text) for b in blocks] == [("row", "| a | b |")]
    assert [b.kind for b in web.outline("Text right at the top.\n")[0]] == ["paragraph"]


def test_a_fence_indented_four_spaces_is_not_a_fence(check):
    text = synthesis(f"- Recovery was fast {REEF1}.", reliability='Checked.\n\n    ```\n\nThey wrote "an invented '
                                                                  'quote after the code".')
    assert kinds(check(text).errors) == ["quote-no-citation"]
    inside = synthesis(f"- Recovery was fast {REEF1}:\n\n  ```\n  \"an invented quote in the item's code\"\n  ```")
    assert check(inside).errors == []


def test_a_single_equals_sign_underlines_a_heading(check):
    text = synthesis(f"- Recovery was fast {REEF1}.").replace("## Findings\n", "Findings\n=\n")
    assert check(text).errors == []


def test_a_sentence_without_content_words_is_not_weak(check):
    assert review(check(synthesis(f"- It is so {REEF1}."))) == []


def test_shown_sentences_use_the_manifest_label_and_keep_broken_links_as_written(check):
    result = check(synthesis(f"- Reefs recover {REEF1}. Colonies grew by 260 (= 1,240 − 980) [the report](web/reef.md)."
                             f"\n- Growth was 3.5% [9](web/gone.md) {CENSUS2}."))
    shown = [web.shown_sentence(s, result.lookup) for s in result.sentences if s.block.section == "Findings"]
    assert shown == ["Reefs recover [1].", "Colonies grew by 260 (= 1,240 − 980) [1].", "Growth was 3.5% [9] [2]."]


def test_a_link_on_the_first_line_of_a_wrapped_item_is_reported_on_that_line(check):
    result = check(synthesis(f"- Recovery was fast [9](web/gone.md)\n  and lasting {REEF1}."))
    assert result.errors == [(12, "broken-link", "citation [9](web/gone.md) points to a file that does not exist")]


def test_a_three_letter_surname_is_enough_and_the_leading_the_is_dropped(check):
    pages = dict(ALL_PAGES, **{"web/lu.md": HEADER.format("lu.example") + "# Talk\n\nLee said the reef had recovered "
                                                                          "within two seasons.\n"})
    assert warned(check(synthesis(f'- Dr. Anna Lee said "{QUOTE}" {LU8}.'), pages), "speaker-not-in-page") == []
    bureau = check(synthesis(f'- The Census Bureau said "{QUOTE}" {LU8} {REEF1}.'), pages)
    assert warned(bureau, "speaker-not-in-page") == ["none of the cited pages mentions Census Bureau"]


def test_words_inside_a_later_sentences_quote_are_not_its_speaker(check):
    text = f'- Reefs recover {REEF1}. Dr. Maria Lopez said "{QUOTE} after the 2016 bleaching" {REEF1}.'
    assert warned(check(synthesis(text)), "speaker-not-in-page") == []


def test_the_synthesis_run_decides_which_pages_must_be_cited(check):
    events = ALL_EVENTS + [{"run": "r2", "command": "init"},
                           {"run": "r2", "command": "scrape", "outcome": "saved", "path": "md/reefs/web/census.md"}]
    result = check(synthesis(f"- Surveys counted 1,240 colonies {REEF1}."), events=events)   # its title says run r1
    assert "saved source web/zh2.md is never cited" in warned(result, "never-cited")


def test_coverage_counts_every_date_and_number_it_could_not_find(check):
    result = check(synthesis(f"- The survey ended on 2021-03-14 and 2021-01-14, with 17 and 18 plots {REEF1}."))
    assert result.coverage["numbers"] == {"verified": 1, "derived": 0, "not_found": 3}


def test_nothing_is_written_for_a_topic_without_a_web_folder_but_the_table(run, md_root):
    (md_root / "fresh").mkdir(parents=True)
    path = md_root / "fresh" / "goal-synthesis.md"
    path.write_text(synthesis("- Nothing cited."), encoding="utf-8")
    assert run("cite-check", path).code == web.EXIT_PARTIAL and not (md_root / "fresh" / "web").exists()
    assert run("cite-check", path, "--table").code == web.EXIT_PARTIAL
    assert (md_root / "fresh" / "goal-evidence.md").read_text("utf-8").startswith("# Evidence for goal-synthesis.md\n")


@pytest.mark.parametrize("date, month", [("2021-01-14", "January"), ("2021-12-14", "December")])
def test_a_date_is_found_with_its_month_in_words_at_both_ends_of_the_year(check, date, month):
    pages = dict(ALL_PAGES, **{"web/reef.md": ALL_PAGES["web/reef.md"] + f"\nA dive on 14 {month} 2021.\n"})
    assert check(synthesis(f"- A dive on {date} {REEF1}."), pages).errors == []


def test_a_failed_quote_of_sixty_characters_is_shown_whole_and_a_longer_one_cut():
    assert web.shown_quote("q" * 60) == "q" * 60 and web.shown_quote("q" * 61) == "q" * 60 + "…"


def test_a_warning_on_a_line_is_reported_with_its_line(run, md_root):
    topic = topic_on_disk(md_root)
    path = topic / "reefs-synthesis.md"
    path.write_text(synthesis(f"- Growth was 3.5% {CENSUS2}.", reliability=f"Of the pages, 13 were primary {REEF1}."),
                    encoding="utf-8")
    assert f"{web.display_path(path)}:16: warning: number 13 is not in web/reef.md" in run("cite-check", path).out


# --- an update run's "Since <date>" section holds findings ------------------------------------------------

def test_an_update_runs_since_section_is_checked_like_the_findings(check):
    faithful = synthesis(f"- Surveys counted 1,240 colonies {REEF1}.",
                         extra=f"\n## Since 2026-06-01\n\n- Surveys counted 1,240 colonies {REEF1}.\n")
    assert check(faithful).errors == []
    since = "\n## Since 2026-06-01\n\n- The count rose to 1,500 colonies " + REEF1 + ".\n- The page was rewritten.\n"
    result = check(synthesis(f"- Surveys counted 1,240 colonies {REEF1}.", extra=since))
    assert [(kind, message) for _, kind, message in result.errors] == [
        ("number-not-found", "number 1,500 is not in web/reef.md"),      # an error there, as in the findings
        ("uncited-finding", "finding has no citation to a saved source")]
    elsewhere = check(synthesis(f"- Surveys counted 1,240 colonies {REEF1}.", extra=since.replace("Since 2026-06-01",
                                                                                                   "Background")))
    assert elsewhere.errors == [] and [k for _, k, _ in elsewhere.warnings if k != "never-cited"] == ["number-not-found"]
