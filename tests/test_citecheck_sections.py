"""Every rule of the synthesis format tried in every section where reference/synthesis.md allows it, in
every layout a section may hold (paragraph, list item, table row, block quote, footnote): a rule that
holds in Findings holds in the Summary, under "Since <date>" and beside Reliability too."""

import pytest

from test_citecheck import EVENTS, PAGES, QUOTE, REEF1, WRONG, checker

SECTIONS = ("Summary", "Findings", "Disagreements and gaps", "Since 2026-06-01", "Reliability")
STRICT = ("Summary", "Findings", "Since 2026-06-01")     # the answer and the findings: numbers are errors there
BASE = {name: f"- Surveys counted 1,240 colonies {REEF1}." for name in SECTIONS}
BASE["Summary"] = f"Reefs recover within two seasons {REEF1}."


def synthesis(section, body):
    """A whole synthesis, every section sound, with `body` added to `section`."""
    parts = ["# How fast do reefs recover?", "", "> goal: how fast do reefs recover", "> topic: reefs · run r1", ""]
    for name in SECTIONS:
        parts += [f"## {name}", "", BASE[name], "", body, ""] if name == section else [f"## {name}", "", BASE[name], ""]
    return "\n".join(parts + ["## Sources", "", "1. Reef — [web/reef.md](web/reef.md)", ""])


def layouts(claim):
    """A claim (its citation at the end) as each layout writes it."""
    return {"paragraph": claim, "item": f"- {claim}", "row": f"| claim |\n| --- |\n| {claim} |",
            "quote": f"> {claim}", "footnote": f"{claim[:claim.rindex(' [')]}[^1].\n\n[^1]: The survey {REEF1}."}


@pytest.fixture
def check(tmp_path):
    run = checker(tmp_path, PAGES, EVENTS)
    return lambda section, body: run(synthesis(section, body))


def kinds(found):
    return sorted(kind for _, kind, _ in found)


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("layout", ["paragraph", "item", "row", "quote", "footnote"])
def test_a_quote_is_verified_in_every_section_and_layout(check, section, layout):
    def written(passage):   # a block quote is itself the quotation
        return f"> {passage} {REEF1}" if layout == "quote" else layouts(f'Divers found "{passage}" {REEF1}.')[layout]
    good = check(section, written(QUOTE))
    assert good.errors == [] and good.coverage["quotes"]["verified"] == 1, good.errors
    bad = check(section, written(WRONG))
    assert kinds(bad.errors) == ["quote-not-found"], bad.errors


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("layout", ["paragraph", "item", "row", "footnote"])
def test_a_number_is_checked_in_every_section_an_error_where_it_answers(check, section, layout):
    assert check(section, layouts(f"Surveys counted 1,240 colonies {REEF1}.")[layout]).errors == []
    bad = check(section, layouts(f"Surveys counted 1,420 colonies {REEF1}.")[layout])
    found = bad.errors if section in STRICT else [w for w in bad.warnings if w[1] == "number-not-found"]
    assert kinds(found) == ["number-not-found"] and (section not in STRICT or bad.warnings == [] or
                                                     "number-not-found" not in kinds(bad.warnings))


@pytest.mark.parametrize("section", SECTIONS)
def test_arithmetic_is_recomputed_in_every_section(check, section):
    assert check(section, f"- The count grew by 260 (= 1,240 − 980) {REEF1}.").errors == []
    bad = check(section, f"- The count grew by 270 (= 1,240 − 980) {REEF1}.")
    found = bad.errors if section in STRICT else bad.warnings
    assert "wrong-derivation" in kinds(found)


@pytest.mark.parametrize("section", SECTIONS)
def test_a_citation_must_resolve_and_carry_its_number_in_every_section(check, section):
    assert kinds(check(section, "- More colonies [1](web/reefs.md).").errors) == ["broken-link"]
    assert kinds(check(section, "- Surveys counted 1,240 colonies [2](web/reef.md).").errors) == ["wrong-number"]


def test_a_sources_link_must_resolve_too(tmp_path):
    text = synthesis("Reliability", "") + "2. Reefs — [web/reefs.md](web/reefs.md)\n"
    assert kinds(checker(tmp_path, PAGES, EVENTS)(text).errors) == ["broken-link"]


@pytest.mark.parametrize("section, error", [("Summary", "uncited-answer"), ("Findings", "uncited-finding"),
                                            ("Since 2026-06-01", "uncited-finding"), ("Disagreements and gaps", None),
                                            ("Reliability", None)])
def test_an_uncited_claim_is_an_error_where_every_claim_must_cite(check, section, error):
    result = check(section, "- Most reefs recover within two seasons.")
    assert [k for k in kinds(result.errors) if k.startswith("uncited")] == ([error] if error else [])


@pytest.mark.parametrize("section, reviewed", [("Summary", True), ("Findings", True), ("Since 2026-06-01", True),
                                               ("Disagreements and gaps", True), ("Reliability", False)])
def test_a_claim_borrowing_its_paragraphs_citation_is_reviewed_where_claims_cite_for_themselves(check, section,
                                                                                             reviewed):
    import web
    result = check(section, f"Reefs recover within two seasons {REEF1}. Divers counted every colony by hand there.")
    ranked = {id(s): web.support(s, result.lookup) for s in result.sentences}
    found = [kind for _, kind, _ in web.reviews(result, ranked) if kind == "uncited-sentence"]
    assert found == (["uncited-sentence"] if reviewed else [])


@pytest.mark.parametrize("section", SECTIONS)
def test_a_speaker_the_page_never_names_is_warned_in_every_section(check, section):
    result = check(section, f'- Dr. Ada Quint said "{QUOTE}" {REEF1}.')
    assert "speaker-not-in-page" in kinds(result.warnings)
