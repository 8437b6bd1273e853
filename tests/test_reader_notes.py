"""Real page-readers' notes on real saved pages: written with only .claude/agents/page-reader.md as instructions,
from pages the real Firecrawl returned (tests/fixtures/realpages/), kept in tests/fixtures/notes/."""

import os
import shutil

import pytest

import web
from test_reader import hook, reader_answer

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
PAGES = {"asyncio-task.md": "docs-python-example-org-docs-python3-dev-html-library-asyncio-task-html.md",
         "re.md": "docs-python-example-org-docs-python3-dev-html-library-re-html.md",
         "transaction-iso.md": "docs-python-example-org-docs-postgresql-doc-15-html-transaction-iso-html.md",
         "git-stash.md": "docs-python-example-org-docs-git-doc-git-stash-html.md"}


def real_note(name):
    with open(os.path.join(FIXTURES, "notes", name), encoding="utf-8") as handle:
        return handle.read()


def page_lines(name):
    return web.read_page_text(os.path.join(FIXTURES, "realpages", PAGES[name])).split("\n")


@pytest.mark.parametrize("name", PAGES)
def test_every_passage_number_and_hedge_of_a_real_note_is_read_and_verbatim_at_its_lines(name):
    note = real_note(name)
    passages = web.note_passages(note)
    assert len(passages) == note.count("\n- L") >= 10   # every line of Passages, Numbers and Hedges, none lost
    assert web.passage_problems(passages, page_lines(name)) == []
    assert len(note) <= 2500   # as the reader's rules ask


# (note, what the reader got right, the mis-quote): each changes one passage of a real note
MISQUOTES = [
    ("asyncio-task.md", "raised in the task at the next opportunity", "raised in the task immediately"),
    ("asyncio-task.md", "`wait()` does not cancel the futures", "`wait()` does cancel the futures"),
    ("asyncio-task.md", '- L327: "New in version 3.11."', '- L327: "New in version 3.12."'),
    ("asyncio-task.md", "the remaining tasks in the group are cancelled", "the remaining tasks in the group are awaited"),
    ("asyncio-task.md", "Task.cancel() does not guarantee", "Task.cancel() does guarantee"),   # after the … cut
    ("asyncio-task.md", "- L1015–1019:", "- L1115–1119:"),
    ("re.md", "they match as much text as possible", "they match as little text as possible"),
    ("re.md", "checks for entire string to be a match", "checks for a prefix to be a match"),
    ("re.md", "will only match 3 characters", "will only match 4 characters"),
    ("re.md", 're.search("c", "abcdef")   \\# Match', 're.search("d", "abcdef")   \\# Match'),
    ("transaction-iso.md", "does not allow phantom reads", "does allow phantom reads"),
    ("transaction-iso.md", "SQLSTATE value of '40001'", "SQLSTATE value of '40002'"),
    ("transaction-iso.md", "are not likely to work correctly", "are likely to work correctly"),
    ("transaction-iso.md", "- L112:", "- L122:"),
    ("git-stash.md", "but do not remove the state", "but do remove the state"),   # a passage in curly quotes
    ("git-stash.md", 'see "push" above.', 'see "pop" above.'),                    # the page's own quotes
    ("git-stash.md", "give a more descriptive message", "give a shorter message"),
    ("git-stash.md", "- L280:", "- L218:"),
]


@pytest.mark.parametrize("name, right, wrong", MISQUOTES)
def test_a_misquote_in_a_real_note_is_caught_and_only_it(name, right, wrong):
    note = real_note(name)
    assert note.count(right) == 1
    misquoted = note.replace(right, wrong)
    changed = [p for p in web.note_passages(misquoted) if p not in web.note_passages(note)]
    assert len(changed) == 1 and web.passage_problems(web.note_passages(misquoted), page_lines(name)) == changed


@pytest.mark.parametrize("fence", [("```", "```"), ("```text", "```"), ("````markdown", "````"), ("~~~", "~~~")])
def test_a_fenced_real_note_is_saved_without_its_fence_and_all_its_passages_verbatim(run, md_root, fence):
    web_dir = md_root / "t" / "web"
    web_dir.mkdir()
    for name, page in PAGES.items():
        shutil.copyfile(os.path.join(FIXTURES, "realpages", page), web_dir / page)
        answer = f"{fence[0]}\n{real_note(name)}{fence[1]}\n"
        passages = len(web.note_passages(real_note(name)))
        assert hook(run, "post", reader_answer(md_root.parent, answer, page=f"md/t/web/{page}")) == ({
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": (
                f"web.py saved the note as {web.display_path(web_dir / 'notes' / page)}: {passages} of {passages} "
                "passages verbatim at their lines.")}}, "")
        saved = (web_dir / "notes" / page).read_text(encoding="utf-8")
        assert f"> checked: {passages} of {passages} passages verbatim at their lines  " in saved
        assert saved.split("\n\n", 1)[1] == real_note(name)
