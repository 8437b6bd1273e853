"""What the mutation run found unpinned in cite-check's reading of a synthesis and its links: a line that
continues a paragraph, list item or footnote is read, never hidden as code (an indented `> "…"` line right under
a paragraph is a block quote whose quote is checked; a `~~~` line six spaces in right under an item's or a
footnote's text is text, not a fence); arithmetic over ISO dates is no arithmetic; a page refreshed ten times is
named by its tenth version when it is never cited; a link with its scheme in capitals or to an anchor of the
synthesis cites nothing; a dotfile in web/ is not a saved page; and a link to a file that is not markdown cites
nothing, so a finding citing only it has no citation. Each test pins the errors or report lines a writer (or
Claude) reads."""

import pytest

from test_citecheck import EVENTS, HEADER, PAGES, QUOTE, REEF, REEF1, synthesis, topic_on_disk
from test_mut_blocks import CLAIM, INVENTED, problems
from test_mut_citecheck import check   # noqa: F401 (a fixture)
from test_mut_review import report

NOT_IN_REEF = f'quote "{INVENTED}" is not in web/reef.md'


# --- lines that continue a block are read, not hidden as code -------------------------------------------------

def test_an_indented_quote_line_right_under_a_paragraph_line_is_a_block_quote_whose_quote_is_checked(check):
    # an indented code block cannot interrupt a paragraph: the line is read, and its quote is checked
    result = check(synthesis(CLAIM, answer=f'Reefs recover within two seasons {REEF1}.\n    > "{INVENTED}" {REEF1}.'))
    assert problems(result) == ([(9, "quote-not-found", NOT_IN_REEF)], [])


@pytest.mark.parametrize("findings, line", [
    # a list item's text, then a line six spaces in: the item's content starts two in, so this is its text
    (f'- Recovery was fast {REEF1}.\n      ~~~\n  "{INVENTED}" {REEF1}.\n      ~~~', 13),
    # a footnote's text, then a line six spaces in: text of the footnote too
    (f'- Recovery was fast [^1].\n\n[^1]: The survey {REEF1}.\n      ~~~\n    "{INVENTED}" {REEF1}.\n      ~~~', 15),
])
def test_a_tilde_line_six_spaces_in_right_under_an_items_or_footnotes_text_is_text_not_a_fence(check, findings, line):
    # the sentence `~~~ "…" [1].` starts on the tilde line
    result = check(synthesis(findings))
    assert problems(result) == ([(line, "quote-not-found", NOT_IN_REEF)], [])


# --- derived numbers ------------------------------------------------------------------------------------------

def test_a_difference_of_two_iso_dates_is_not_arithmetic(check):
    result = check(synthesis(f"- The survey ran for 3 (= 2021-03-14 − 2021-03-11) days {REEF1}."))
    errors, warnings = problems(result)
    assert warnings == [] and [e[:2] for e in errors] == [(12, "number-not-found"), (12, "wrong-derivation")]
    assert errors[0][2] == "date 2021-03-11 is not in web/reef.md"
    assert errors[1][2] == "derived number 3: (= 2021-03-14 − 2021-03-11) is not arithmetic"   # shown as written


def test_a_wrong_derivation_written_without_a_space_is_shown_whole(check):
    result = check(synthesis(f"- Colonies grew by 3 (=72 − 70) {REEF1}."))
    assert [e[2] for e in problems(result)[0] if e[1] == "wrong-derivation"] == [
        "derived number 3: (= 72 − 70) gives 2"]


# --- pages never cited ----------------------------------------------------------------------------------------

TIDE = {"web/tide.md" if n == 1 else f"web/tide.v{n}.md": HEADER.format("tide.example") + f"# Tides\n\nVersion {n}.\n"
        for n in range(1, 11)}
TEN_VERSIONS = EVENTS + [{"run": "r1", "command": "scrape", "outcome": "saved", "path": "md/reefs/web/tide.md"}] + [
    {"run": "r1", "command": "refresh", "outcome": "changed", "path": f"md/reefs/web/tide.v{n}.md",
     "previous": "md/reefs/web/tide.md" if n == 2 else f"md/reefs/web/tide.v{n - 1}.md"} for n in range(2, 11)]


def test_a_page_refreshed_ten_times_and_never_cited_is_named_by_its_tenth_version(check):
    result = check(synthesis(CLAIM), pages=dict(PAGES, **TIDE), events=TEN_VERSIONS)
    assert [m for _, k, m in result.warnings if k == "never-cited"] == [
        "saved source web/census.md is never cited", "saved source web/zh.md is never cited",
        "saved source web/ko.md is never cited", "saved source web/tide.v10.md is never cited"]


# --- what a link cites ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["HTTPS://EXAMPLE.ORG/reefs", "Https://example.org/reefs", "#findings"])
def test_a_link_with_its_scheme_in_capitals_or_to_an_anchor_cites_nothing_and_is_no_broken_citation(check, target):
    result = check(synthesis(f"- Surveys counted 1,240 colonies {REEF1}, as [the agency]({target}) reports."))
    assert problems(result) == ([], []) and result.coverage["per_source"]["web/reef.md"] == 2


def test_a_dotfile_in_web_is_not_a_saved_page(run, md_root):
    shown, code, lines = report(run, topic_on_disk(md_root), "- Surveys counted 1,240 colonies [5](web/.reef.md).",
                                files={"web/.reef.md": HEADER.format("reef.example") + REEF})
    assert code == 1 and lines[0] == (f"{shown}:12: citation [5](web/.reef.md) is not a saved page: cite a page "
                                      "of web/ or a corpus file"), lines


def test_a_finding_that_links_only_a_file_that_is_not_markdown_has_no_citation(run, md_root):
    shown, code, lines = report(run, topic_on_disk(md_root), "- Surveys counted 1,240 colonies [the table](counts.csv).",
                                files={"counts.csv": "site,colonies\nnorth,1240\n"})
    assert code == 1 and lines[0] == f"{shown}:12: finding has no citation to a saved source", lines
