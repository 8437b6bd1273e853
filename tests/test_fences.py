"""A code fence read the same in every place fences are read — a synthesis (cite-check), a saved page
(outline) and a reader's answer (the note) — with or without an info string, with backticks or tildes,
longer fences closing only on their own length."""

import pytest

import web
from test_citecheck import EVENTS, PAGES, REEF1, checker, synthesis

FENCES = [("```", "```"), ("```python", "```"), ("~~~text", "~~~"), ("````markdown", "````"), ("  ```sh", "  ```")]
INVENTED = "the reef was never surveyed at all"


def read_as_code(tmp_path, code):
    """True when cite-check, given a finding and this code block after it, finds nothing wrong and no quote to check."""
    result = checker(tmp_path, PAGES, EVENTS)(synthesis(f"- Surveys counted 1,240 colonies {REEF1}.\n\n{code}"))
    return result.errors == [] and result.coverage["quotes"]["verified"] == 0


@pytest.mark.parametrize("opener, closer", FENCES)
def test_cite_check_leaves_code_unchecked_whatever_its_fence(tmp_path, opener, closer):
    assert read_as_code(tmp_path, f'{opener}\nprint("{INVENTED}", 1,420)\n{closer}\n')


@pytest.mark.parametrize("opener, closer", FENCES)
def test_cite_check_reads_prose_again_once_the_fence_closes(tmp_path, opener, closer):
    body = f'{opener}\ncode\n{closer}\n\n- Divers said "{INVENTED}" {REEF1}.\n'
    assert [e[1] for e in checker(tmp_path, PAGES, EVENTS)(synthesis(body)).errors] == ["quote-not-found"]


def test_a_shorter_fence_does_not_close_a_longer_one(tmp_path):
    body = f'````\n```\n- "{INVENTED}" {REEF1}.\n```\n````\n\n- Surveys counted 1,240 colonies {REEF1}.\n'
    assert checker(tmp_path, PAGES, EVENTS)(synthesis(body)).errors == []


@pytest.mark.parametrize("opener, closer", FENCES)
def test_the_outline_finds_no_heading_inside_code_whatever_its_fence(opener, closer):
    lines = ["# Title", "", "Some prose here about the page and what it holds for a reader.", "", opener,
             "# a comment in code", "## another", closer, "", "## Real heading", "", "More prose follows here."]
    assert [h[2] for h in web.page_headings(lines)] == ["Title", "Real heading"]


@pytest.mark.parametrize("opener, closer", [("```", "```"), ("```markdown", "```"), ("~~~text", "~~~")])
def test_a_readers_answer_in_a_fence_of_any_kind_is_unwrapped(opener, closer):
    answer = 'Contributes: x\nPassages:\n- L3: "a"\n'
    assert web.unfenced(f"{opener}\n{answer}{closer}\n").strip() == answer.strip()


# A fence line with an info string opens a fence and never closes one: inside ``` a "```python" is code
# (a code example that shows markdown), and the plain ``` after it closes the fence.
INNER = [("```", "```python"), ("~~~", "~~~text"), ("````", "````markdown")]


@pytest.mark.parametrize("fence, inner", INNER)
def test_cite_check_reads_a_fence_line_with_an_info_string_inside_code_as_code(tmp_path, fence, inner):
    assert read_as_code(tmp_path, f'{fence}\n{inner}\nprint("{INVENTED}")\n{fence}\n')


@pytest.mark.parametrize("fence, inner", INNER)
def test_the_outline_reads_a_fence_line_with_an_info_string_inside_code_as_code(fence, inner):
    lines = ["# Title", "", "Some prose here about the page and what it holds for a reader.", "", fence, inner,
             "# a comment in code", fence, "", "## Real heading", "", "More prose follows here."]
    assert [h[2] for h in web.page_headings(lines)] == ["Title", "Real heading"]
