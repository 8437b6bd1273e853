"""cite-check's messages point at the fix, and one mistake gives one error: for each message a faithful and
a faulty synthesis, the message asserted by its text; and every shape reference/synthesis.md shows passes."""

import os
import re

import pytest

import web
from test_citecheck import CENSUS2, EVENTS, HEADER, PAGES, QUOTE, REEF1, WRONG, checker, kinds, synthesis

REFERENCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".claude", "skills",
                         "research", "reference", "synthesis.md")


@pytest.fixture
def check(tmp_path):
    return checker(tmp_path, PAGES, EVENTS)


def never_cited(result):
    return [m for _, k, m in result.warnings if k == "never-cited"]


def test_a_quote_cited_to_the_wrong_page_names_the_saved_page_that_holds_it(check):
    assert check(synthesis(f'- "{QUOTE}" {REEF1}.')).errors == []
    assert check(synthesis(f'- "{QUOTE}" {CENSUS2}.')).errors == [
        (12, "quote-not-found", f'quote "{QUOTE}" is on [1] (web/reef.md), not [2]')]
    assert check(synthesis(f'- "{WRONG}" {CENSUS2}.')).errors == [   # on no saved page: where it was looked for
        (12, "quote-not-found", f'quote "{WRONG}" is not in web/census.md')]


def test_pages_past_two_are_named_by_their_labels(check):
    result = check(synthesis(f"- Surveys counted 1,420 colonies {REEF1} {CENSUS2} [3](web/zh.md)."))
    assert result.errors == [(12, "number-not-found", "number 1,420 is not in [1], [2] or [3]")]


@pytest.mark.parametrize("claim, message", [
    ("Cover grew 30% (= (1,240 − 980) / 980)", "derived number 30%: (= (1,240 − 980) / 980) gives 26.5%"),
    ("Cover grew 26.6% (= (1,240 − 980) / 980)", "derived number 26.6%: (= (1,240 − 980) / 980) gives 26.53%"),
    ("Cover grew 30% (= (1,240 − 980) / 980 × 100)", "derived number 30%: (= (1,240 − 980) / 980 × 100) gives 26.5%"),
    ("Colonies grew by 270 (= 1,240 − 980)", "derived number 270: (= 1,240 − 980) gives 260"),
])
def test_a_wrong_percentage_says_what_its_arithmetic_gives_as_a_percentage(check, claim, message):
    assert check(synthesis(f"- {claim} {REEF1}.")).errors == [(12, "wrong-derivation", message)]


@pytest.mark.parametrize("claim", [
    "Cover grew 26.5% (= (1,240 − 980) / 980)", "Cover grew 27% (= (1,240 − 980) / 980)",
    "Cover grew 26.53% (= (1,240 − 980) / 980 × 100)", "Cover grew 26.5% (= 100 × (1,240 − 980) / 980)",
])
def test_a_correct_percentage_derivation_passes_with_or_without_the_times_100(check, claim):
    result = check(synthesis(f"- {claim} {REEF1}."))
    assert result.errors == [] and result.coverage["numbers"]["derived"] == 1


def test_a_wrong_citation_label_is_one_error(check):
    assert check(synthesis(f"- Surveys counted 1,240 colonies {REEF1}.")).errors == []
    assert check(synthesis("- Surveys counted 1,240 colonies [2](web/reef.md).")).errors == [
        (12, "wrong-number", "citation [2](web/reef.md) should be [1]: web/reef.md is source 1 in the manifest")]


@pytest.mark.parametrize("target", ["web/reeff.md", "reef.md", "web/Reef.md"])
def test_a_broken_link_to_a_saved_page_suggests_the_page_and_counts_it_as_cited(check, target):
    answer = f"Cities grow {CENSUS2}."   # the typo is the only citation of web/reef.md
    result = check(synthesis(f"- Surveys counted 1,240 colonies [1]({target}).", answer=answer))
    assert result.errors == [(12, "broken-link", f"citation [1]({target}) points to a file that does not exist: "
                                                 "did you mean web/reef.md?")]
    assert never_cited(result) == ["saved source web/zh.md is never cited", "saved source web/ko.md is never cited"]


def test_a_broken_link_like_no_saved_page_suggests_nothing(check):
    assert check(synthesis("- Surveys counted 1,240 colonies [1](web/tortoises.md).")).errors == [
        (12, "broken-link", "citation [1](web/tortoises.md) points to a file that does not exist")]


def test_a_sentence_whose_only_citation_is_broken_is_not_checked_against_its_neighbours(check):
    result = check(synthesis(f"- Growth was 3.5% {CENSUS2}. Surveys counted 1,240 colonies [1](web/gone.md)."))
    assert result.errors == [(12, "broken-link", "citation [1](web/gone.md) points to a file that does not exist")]


def test_a_finding_whose_quote_has_no_citation_is_one_error(check):
    result = check(synthesis(f'- Biologists wrote "{QUOTE}".'))
    assert result.errors == [(12, "quote-no-citation", f'quote "{QUOTE}" has no citation; it is in web/reef.md: '
                                                        "cite it as [1](web/reef.md)")]
    assert kinds(check(synthesis("- Biologists wrote it.")).errors) == ["uncited-finding"]


@pytest.mark.parametrize("claim", ["Swift Regrowth", "Reef Recovery in Two Seasons", "Recovery"])
def test_a_claim_before_a_quote_is_not_a_speaker(check, claim):
    result = check(synthesis(f'- {claim}: "{QUOTE}" {REEF1}.'))
    assert result.errors == [] and [w for w in result.warnings if w[1] == "speaker-not-in-page"] == []
    named = check(synthesis(f'- Dr. John Smith said "{QUOTE}" {REEF1}.'))
    assert [m for _, k, m in named.warnings if k == "speaker-not-in-page"] == [
        "the cited page does not mention John Smith"]


# --- the shapes reference/synthesis.md shows ---------------------------------------------------------------

SHAPES = {"web/a.md": HEADER.format("a.example") + "# A\n\nMaria Lopez wrote: the reef had recovered within two "
                                                   "seasons.\n",
          "web/b.md": HEADER.format("b.example") + "# B\n\nThe first list has 72 species, the second 69. "
                                                   "Reef fish graze at night near the shore.\n",
          "web/c.md": HEADER.format("c.example") + "# C\n\nAt night, reef fish graze near the shore.\n",
          "notes.md": "# Field notes\n\nDivers logged cold water on the outer reef.\n"}
FILLING = {"the goal, as a title": "How fast do reefs recover?", "goal as given": "how fast do reefs recover",
           "topic": "reefs", "run id": "r1", "date from status": "2026-12-01", "slug": "a", "slug-b": "b",
           "slug-c": "c", "one claim": "Swift Regrowth", "a passage copied verbatim from the page": QUOTE,
           "a claim two sources support": "Reef fish graze near the shore at night",
           "your own arithmetic": "The species lists", "who said it": "Dr. Maria Lopez",
           "a claim from the corpus, with --with-corpus":
           "Divers logged cold water on the outer reef", "corpus-file": "notes", "title": "A",
           "url": "https://a.example/", "the earlier synthesis's date": "2026-06-01"}


def reference_example():
    """The synthesis reference/synthesis.md shows, with the block quote it shows among the findings, its
    placeholders filled in as a writer would."""
    with open(REFERENCE, encoding="utf-8") as handle:
        reference = handle.read()
    example = re.search(r"```markdown\n(.*?)```", reference, re.S).group(1)
    block_quote = "".join(line.strip() + "\n" for line in re.findall(r"(?m)^ {4,}>.*$", reference))
    example = example.replace("\n## Disagreements", f"\n{block_quote}\n## Disagreements")
    return re.sub(r"<([^<>\n]+)>", lambda m: FILLING[m.group(1)], example)


def test_every_shape_the_reference_shows_passes_without_error_or_warning(tmp_path):
    events = [{"run": "r1", "command": "init"}] + [{"run": "r1", "command": "scrape", "outcome": "saved",
                                                    "path": f"md/reefs/web/{n}.md"} for n in "abc"]
    result = checker(tmp_path, SHAPES, events)(reference_example())
    assert result.errors == [] and result.warnings == []
    assert result.coverage["quotes"]["verified"] == 2 and result.coverage["numbers"]["derived"] == 1
