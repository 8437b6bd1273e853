"""cite-check fails closed on quotations: whatever it treats as a quotation, in any layout, is verified
against the pages that cite it, or is an error saying how to write it; and a quote cited beside other pages
is a warning only when its sentence's clauses do not explain those citations. For each layout a faithful and
a fabricated synthesis that differ in that point only."""

import pytest

import web
from test_citecheck import CENSUS2, EVENTS, PAGES, QUOTE, REEF1, WRONG, checker, kinds, synthesis

FIRST = f"- Recovery was fast {REEF1}.\n\n"   # a finding, so that a layout without one is still a synthesis


@pytest.fixture
def check(tmp_path):
    return checker(tmp_path, PAGES, EVENTS)


def warned(result, kind):
    return [m for _, k, m in result.warnings if k == kind]


# --- layouts that are read: the quote is verified against what cites it ------------------------------------

READ = [
    "> {q} {c}",                                          # a block quote without quotation marks is a quotation
    "> “{q}” {c}",                                        # ... with them, the same one quotation
    "> {q}\n\n— Dr. Maria Lopez {c}",                     # cited by an attribution line under it
    "> {q}\n>\n> — Dr. Maria Lopez {c}",                  # ... inside it
    "> {q}\n— Dr. Maria Lopez {c}",                       # ... lazily continued
    "> Biologists reported:\n> > {q}\n>\n> {c}",          # nested in another block quote
    "- The report {c}:\n  > {q}",                         # nested in a list item, cited by the item
    "- The report {c}:\n   > {q}",                        # ... three spaces in
    "- The report {c}:\n\n    > {q}",                     # ... after a blank line, four spaces in
    "- > {q} {c}",                                        # a list item that is a block quote
    "1. > {q} {c}",
    "- Recovery was quick.[^1]\n\n[^1]: > {q} {c}",       # a footnote that is a block quote
    "- It says '{q}' {c}.",                               # straight single quotation marks
    "- It says ＂{q}＂ {c}.",                              # full-width ones
    "- It says 〝{q}〞 {c}.",
    '- ["{q}"](web/reef.md).',                            # a quote in a citation's own text
    '| "{q}" {c} | Count |\n| --- | --- |\n| Reef {c} | 1,240 colonies |',   # a table's header row
]


@pytest.mark.parametrize("layout", READ)
def test_a_quotation_is_verified_in_every_layout_it_can_take(check, layout):
    good = check(synthesis(FIRST + layout.format(q=QUOTE, c=REEF1)))
    assert good.errors == [] and good.coverage["quotes"]["verified"] == 1, good.errors
    bad = check(synthesis(FIRST + layout.format(q=WRONG, c=REEF1)))
    assert [m for _, _, m in bad.errors] == [f'quote "{WRONG}" is not in web/reef.md'], bad.errors


def test_each_paragraph_of_a_block_quote_is_verified_with_its_line(check):
    text = FIRST + "> {a}\n>\n> {b}\n\n— The survey {c}"
    good = check(synthesis(text.format(a=QUOTE, b="Surveys counted 1,240 colonies in 2019", c=REEF1)))
    assert good.errors == [] and good.coverage["quotes"]["verified"] == 2
    bad = check(synthesis(text.format(a=QUOTE, b="Surveys counted 1,420 colonies in 2019", c=REEF1)))
    assert bad.errors == [(16, "quote-not-found",
                           'quote "Surveys counted 1,420 colonies in 2019" is not in web/reef.md')]


def test_a_block_quote_without_any_citation_is_an_error_naming_its_page(check):
    result = check(synthesis(FIRST + f"> {QUOTE}"))
    assert result.errors == [(14, "quote-no-citation", f'quote "{QUOTE}" has no citation; it is in web/reef.md: '
                                                        "cite it as [1](web/reef.md)")]   # not also uncited-finding


def test_a_lazy_line_belongs_to_the_block_quote_it_continues(check):
    assert kinds(check(synthesis(FIRST + f"> {QUOTE}\nand then some words of my own {REEF1}")).errors) == \
        ["quote-not-found"]
    assert check(synthesis(FIRST + f"> {QUOTE} {REEF1}\n\nand then some words of my own {REEF1}")).errors == []


def test_a_block_quotes_attribution_names_a_speaker_its_page_must_mention(check):
    assert warned(check(synthesis(FIRST + f"> {QUOTE}\n\n— Dr. Maria Lopez {REEF1}")), "speaker-not-in-page") == []
    assert warned(check(synthesis(FIRST + f"> {QUOTE}\n\n— Dr. John Smith {REEF1}")), "speaker-not-in-page") == \
        ["the cited page does not mention John Smith"]


def test_code_inside_a_quote_is_quoted(check):
    pages = dict(PAGES, **{"web/reef.md": PAGES["web/reef.md"] + "\nThe `SELECT` command acquires a lock.\n"})
    assert check(synthesis('- "The `SELECT` command acquires a lock" ' + REEF1 + "."), pages).errors == []
    assert kinds(check(synthesis('- "The `UPDATE` command acquires a lock" ' + REEF1 + "."), pages).errors) == \
        ["quote-not-found"]


def test_a_semicolon_inside_a_quote_does_not_cut_its_clause(check):
    pages = dict(PAGES, **{"web/reef.md": PAGES["web/reef.md"] + "\nThe reef recovered; the town did not grow.\n"})
    good = check(synthesis(f'- "The reef recovered; the town did not grow" {REEF1}, and 48,500 residents {CENSUS2}.'),
                 pages)
    assert good.errors == [] and good.warnings == [w for w in good.warnings if w[1] == "never-cited"]


# --- layouts that are not read: an error that says how to write it -----------------------------------------

NOT_READ = [   # (layout, how to write it instead, error kind, message)
    (FIRST + "<blockquote>{q} {c}</blockquote>", FIRST + "> {q} {c}", "html-quote",
     "<blockquote> is not read: write the quotation as a `>` block quote, with its citation"),
    ("- The report says <q>{q}</q> {c}.", '- The report says "{q}" {c}.', "html-quote",
     "<q> is not read: put the quotation in quotation marks, with its citation"),
    (FIRST + '### "{q}"\n\n- More {c}.', FIRST + '### The survey\n\n- "{q}" {c}.', "quote-in-heading",
     'quote "{q}" in a heading is not checked: move it into the text under the heading, with its citation'),
    (FIRST + '"{q}"\n---\n\n- More {c}.', FIRST + 'The survey\n---\n\n- "{q}" {c}.', "quote-in-heading",
     'quote "{q}" in a heading is not checked: move it into the text under the heading, with its citation'),
    ('- The report {c} says "{q}.', '- The report {c} says "{q}".', "unpaired-quote-mark",
     'quotation mark " pairs with none: close the quote or drop the mark'),
    ("- The report {c} says {q}”.", "- The report {c} says “{q}”.", "unpaired-quote-mark",
     "quotation mark ” pairs with none: close the quote or drop the mark"),
    ('- The report {c} says "{q}\n\n  and more" here.', '- The report {c} says "{q}"\n\n  and more here.',
     "unpaired-quote-mark", 'quotation mark " pairs with none: close the quote or drop the mark'),
    ('- Recovery [1](web/reef.md "{q}").', '- Recovery [1](web/reef.md "Reef report"): "{q}".', "link-title",
     'link title "{q}" is not read: drop it, or quote the page in the text'),
    ('- Recovery [1].\n\n[1]: web/reef.md "{q}"', '- Recovery: "{q}" [1].\n\n[1]: web/reef.md', "link-title",
     'link title "{q}" is not read: drop it, or quote the page in the text'),
]


@pytest.mark.parametrize("layout, fixed, kind, message", NOT_READ)
def test_a_quotation_where_it_cannot_be_checked_is_one_error_saying_how_to_write_it(check, layout, fixed, kind,
                                                                                   message):
    for quote in (QUOTE, WRONG):   # even a faithful quote: it would pass unchecked
        result = check(synthesis(layout.format(q=quote, c=REEF1)))
        assert [(k, m) for _, k, m in result.errors] == [(kind, message.format(q=quote))], result.errors
    good = check(synthesis(fixed.format(q=QUOTE, c=REEF1)))
    assert good.errors == [] and good.coverage["quotes"]["verified"] == 1, good.errors


def test_the_title_and_its_block_state_the_goal_and_are_not_checked(check):
    text = synthesis(f"- Recovery was fast {REEF1}.").replace(
        "# How fast do reefs recover?", '# Is it true that "reefs never die at all"?')
    assert check(text).errors == []
    topic = "> topic: reefs · run r1 · 2026-12-01\n"
    after = text.replace(topic, f"{topic}\n> {WRONG}\n")
    assert kinds(check(after).errors) == ["quote-no-citation"]   # a block quote after a blank line is prose


# --- a quote cited beside other pages: the clauses of its sentence decide ----------------------------------

HOUSEHOLDS = "the city had 12'400 households"


@pytest.mark.parametrize("placed", [
    f'- "{QUOTE}" {REEF1}, and the census counted 48,500 residents {CENSUS2}.',
    f'- The census counted 48,500 residents {CENSUS2}; biologists wrote that "{QUOTE}" {REEF1}.',
    f'- "{QUOTE}" {REEF1}; "{HOUSEHOLDS}" {CENSUS2}.',                       # another clause's quote is its words
    f'- The census {CENSUS2} counted 48,500 residents, and the survey found "{QUOTE}" {REEF1}.',
])
def test_a_quote_whose_other_citations_carry_their_own_clauses_is_not_a_warning(check, placed):
    result = check(synthesis(placed))
    assert result.errors == [] and warned(result, "quote-partly-cited") == []


@pytest.mark.parametrize("unplaced, holder, lacking", [
    (f'- "{QUOTE}" {REEF1} {CENSUS2}.', "[1]", "[2]"),                     # both cited for the quote
    (f'- The census counted 48,500 residents and "{QUOTE}" {CENSUS2} {REEF1}.', "[1]", "[2]"),
    (f'- "{QUOTE}" {REEF1}; {CENSUS2}.', "[1]", "[2]"),                     # a clause with no words of its own
    (f'- The survey {REEF1} found that "{QUOTE}" {CENSUS2}.', "[1]", "[2]"),  # the quote's own clause lacks it
])
def test_a_quote_its_clauses_do_not_explain_is_one_warning_naming_the_fix(check, unplaced, holder, lacking):
    result = check(synthesis(unplaced))
    assert result.errors == [] and warned(result, "quote-partly-cited") == [
        f'quote "{QUOTE}" is in {holder} but not in {lacking}: move {lacking} to the words it supports, or drop it']


def test_a_quote_three_pages_cite_names_each_page_that_lacks_it_once(check):
    pages = dict(PAGES, **{"web/zh.md": PAGES["web/zh.md"] + f"\n{QUOTE}.\n"})
    result = check(synthesis(f'- "{QUOTE}" {REEF1} {CENSUS2} [4](web/ko.md) [3](web/zh.md).'), pages)
    assert warned(result, "quote-partly-cited") == [
        f'quote "{QUOTE}" is in [1] and [3] but not in [2] or [4]: move [2] and [4] to the words each supports, '
        "or drop them"]


def test_a_partly_cited_quote_is_a_warning_not_also_a_review_item(check):
    result = check(synthesis(f'- "{QUOTE}" {REEF1} {CENSUS2}.'))
    ranked = {id(s): web.support(s, result.lookup) for s in result.sentences}
    assert len(warned(result, "quote-partly-cited")) == 1 and web.reviews(result, ranked) == []


def test_the_title_blocks_field_lines_may_stand_apart(check):
    apart = synthesis(f"- Recovery was fast {REEF1}.").replace("> topic:", "\n> topic:")
    assert check(apart).errors == [] and web.outline(apart)[1] == ["goal: how fast do reefs recover",
                                                                    "topic: reefs · run r1 · 2026-12-01"]
