"""README's examples are what the code prints: tests/docs.py replays the session and regenerates them."""

import difflib
import io
import os
import re
import sys

import pytest

import docs
import web


def in_this_process(monkeypatch):
    """A docs runner that calls web.main here, as if web.py lived in the session's project folder."""
    def runner(project, env, argv, stdin):
        for name in [n for n in os.environ if n.startswith(("WEB_", "SEARXNG_", "FIRECRAWL_", "CLAUDE_"))]:
            monkeypatch.delenv(name)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(web, "PROJECT_ROOT", project)
        monkeypatch.chdir(project)
        out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8"))
        web._opener = None
        code = web.main(argv[1:])
        out.flush()
        err.flush()
        return code, out.buffer.getvalue().decode("utf-8"), err.buffer.getvalue().decode("utf-8")
    return runner


@pytest.fixture(scope="module")
def session():
    """README's session played once through web.main in this process: ({example: block}, [the paths it
    left or printed])."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        played = docs.session_outputs(in_this_process(monkeypatch))
    return played


def readme_text(path=docs.README):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


MD_README = os.path.join(docs.ROOT, "md", "README.md")


def test_readme_examples_and_tables_are_what_the_code_prints(session):
    """README's blocks come from real processes (tests/docs.py --write); this replays the same session
    through web.main in this process, so that a change in any output shows here."""
    readme = readme_text()
    changed = docs.differences(readme, session[0], docs.tables())
    assert not changed, "README differs from what the code prints; run python3 tests/docs.py --write:\n" + "".join(
        "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), name, "code"))
        for name, old, new in changed)


def test_each_commands_help_is_what_a_person_read_when_it_was_kept():
    """`web.py -h` and every `web.py COMMAND -h`, whole (tests/fixtures/help/, written by tests/docs.py --write):
    a word of help changed by accident shows here, in this process."""
    changed = docs.help_differences()
    assert not changed, "-h differs from tests/fixtures/help/; if meant, run python3 tests/docs.py --write:\n" + "".join(
        "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), name, "code"))
        for name, old, new in changed)


def test_every_example_is_shown_once_and_every_marker_is_generated():
    with open(docs.README, encoding="utf-8") as handle:
        examples, tables = docs.markers(handle.read())
    assert sorted(examples) == sorted({name for name, action, _ in docs.SESSION if action in docs.SHOWN})
    assert sorted(tables) == sorted(docs.tables())


def test_excerpts_mark_what_they_leave_out():
    text = "a\nb\nc\nd\n"
    assert docs.excerpt(text, None) == text
    assert docs.excerpt(text, 2) == "a\nb\n…\n"
    assert docs.excerpt(text, (2, 3)) == "…\nb\nc\n…\n"
    assert docs.excerpt(text, (3, 4)) == "…\nc\nd\n"
    assert docs.excerpt(text, 4) == text


def test_the_check_ignores_only_what_varies_between_runs():
    """Ports do not vary: the session shows the stand-ins' as SHOWN_PORTS, so a README with others differs."""
    assert docs.normalise("http://127.0.0.1:40123/x run 20261201T020411Z-1a2f on 2026-12-01 \"elapsed_ms\":31") == \
        "http://127.0.0.1:40123/x run RUN on DATE \"elapsed_ms\":0"
    assert docs.normalise("Y2  - 2026/12/01 [[2026, 12, 1]]") == "Y2  - DATE [[DATE]]"
    assert docs.normalise("523 words, 1,240 sea stars") == "523 words, 1,240 sea stars"


def test_every_command_and_option_is_documented_outside_the_examples():
    """README has no `-h` dump: each command has its section, and each option is named in the prose or
    tables, not only inside a generated example."""
    with open(docs.README, encoding="utf-8") as handle:
        prose = docs.EXAMPLE.sub("", handle.read())
    parser = web.build_parser()
    commands = next(action for action in parser._actions if action.choices and "search" in action.choices)
    assert set(commands.choices) == set(web.COMMANDS)
    missing = [f"{name} {option}" for name, sub in commands.choices.items() for action in sub._actions
               for option in action.option_strings if option.startswith("--") and option != "--help"
               and option not in prose]
    missing += [f"### {name}" for name in commands.choices if f"\n### {name}\n" not in prose]
    assert not missing, missing
    assert "--version" in prose


def test_the_session_shows_the_stand_ins_ports_as_one_pair_in_one_pass():
    swapped = docs.show_ports("a 127.0.0.1:40001/x b http://127.0.0.1:40002 c 127.0.0.1:8899 d 127.0.0.1:400010",
                              {"40001": "40002", "40002": "40001"})
    assert swapped == "a 127.0.0.1:40002/x b http://127.0.0.1:40001 c 127.0.0.1:8899 d 127.0.0.1:400010"


def test_the_walkthrough_uses_the_ports_of_the_export_line_it_starts_with():
    with open(docs.README, encoding="utf-8") as handle:
        blocks = {m.group(2): m.group(3) for m in docs.EXAMPLE.finditer(handle.read())}
    export = next(line for line in blocks["standins"].splitlines() if line.startswith("export "))
    exported = dict(item.split("=", 1) for item in export.split()[1:])
    assert [int(exported[name].rsplit(":", 1)[1]) for name in docs.SHOWN_PORTS] == list(docs.SHOWN_PORTS.values())
    doctor = blocks["doctor"]
    for name in docs.SHOWN_PORTS:
        assert f"  {name:<17} {exported[name]}  (environment)" in doctor.splitlines()
    assert {port for port in re.findall(r"127\.0\.0\.1:(\d+)", doctor)} == {
        str(port) for port in docs.SHOWN_PORTS.values()}


# --- what README quotes in its prose, checked against the code ----------------------------------------------

PRINTED = docs.printable(os.path.join(docs.ROOT, "web.py"))


def test_every_message_readme_quotes_is_one_the_code_can_print():
    quoted = [span for span in docs.code_spans(readme_text()) if not docs.is_command(span)]
    wrong = {span: docs.message_problem(span, PRINTED) for span in quoted}
    assert not {span: run for span, run in wrong.items() if run is not None}
    nothing_printed = ("", set())   # against a code that prints nothing, every message it checks is wrong:
    assert sum(docs.message_problem(span, nothing_printed) is not None for span in quoted) >= 15   # it saw them


@pytest.mark.parametrize("span, unprinted", [
    ("nothing answers at host:port (a wrong host, or the stand-ins' line not exported?)",
     "(a wrong host, or the stand-ins' line not exported?)"),
    ("web.py: scrape: <url>: the page is gone", "the page is gone"),
    ("FAIL firecrawl … the box is asleep", "the box is asleep"),
    ("SearXNG: refused politely", "SearXNG: refused politely"),
])
def test_a_quoted_message_that_no_code_prints_is_named(span, unprinted):
    assert docs.message_problem(span, PRINTED) == unprinted


@pytest.mark.parametrize("span", ["nothing answers at host:port (refused the connection)",
                                  "FAIL firecrawl … SCRAPE_ALL_ENGINES_FAILED", "audited: N problems",
                                  "docker compose up", "--site D", "hook pre|post|stop"])
def test_placeholders_values_and_commands_are_not_held_against_a_message(span):
    assert docs.is_command(span) or docs.message_problem(span, PRINTED) is None


def test_every_command_line_readme_quotes_names_options_its_command_has():
    parser = web.build_parser()
    commands = [span for span in docs.code_spans(readme_text()) if docs.is_command(span)]
    assert {span: docs.option_problem(span, parser) for span in commands if docs.option_problem(span, parser)} == {}
    assert docs.option_problem("refresh --topic T --al", parser) == "--al"
    assert docs.option_problem('/research "goal" --topic X --deeper', parser) == "--deeper"


def names_in_code():
    """The file names with placeholders web.py's own strings give (help, usage errors, refusals)."""
    return {name.rstrip(".") for string in PRINTED[1] for name in re.findall(r"[\w.<>*/-]*<[\w-]+>[\w.<>*/-]*", string)
            if re.search(r"\.(?:md|json|jsonl|txt)\.?$|/\.?$", name)}


@pytest.mark.parametrize("source", ["README.md", "md/README.md", "web.py"])
def test_every_file_name_quoted_is_one_the_session_made(session, source):
    """`md/T/<goal-slug>-<date>-audit.md`, a drawn folder's entries, web.py's `give md/<topic>/…`: each names
    a file or folder README's session made (or printed), its <goal-slug> the session's goal."""
    names = names_in_code() if source == "web.py" else docs.topic_names(readme_text(os.path.join(docs.ROOT, source)))
    goal_slug = web.text_slug("how do tide pools work")
    missing = [name for name in names if not any(re.search(docs.name_pattern(name, goal_slug), path)
                                                 for path in session[1])]
    assert names and not missing


@pytest.mark.parametrize("name, made", [
    ("<goal-slug>-evidence.md", False), ("<goal-slug>-<date>-evidence.md", True),
    ("md/T/web/_picks-<round>.json", False), ("md/<topic>/web/_picks-<run>.<round>.json", True),
    ("<slug>.vN.md", True), ("<slug>.v4.md", False),
    ("md/demo/how-do-tide-pools-work-2026-12-01-synthesis.md", True), ("notes/<slug>.md", True)])
def test_a_file_name_stands_for_the_files_its_placeholders_fill(name, made):
    paths = ["md/demo/how-do-tide-pools-work-2026-12-05-evidence.md", "md/demo/web/_picks-1.2.json",
             "md/demo/web/example-org-tides.v3.md", "md/demo/how-do-tide-pools-work-2026-12-05-synthesis.md",
             "md/demo/web/notes/guide-example-org-tide-pools.md"]
    assert any(re.search(docs.name_pattern(name, "how-do-tide-pools-work"), path) for path in paths) is made


def test_an_unknown_placeholder_in_a_file_name_is_an_error_not_a_match():
    with pytest.raises(KeyError):
        docs.name_pattern("md/T/<subject>.md", "goal")


def test_a_drawn_folder_gives_each_entry_its_full_path():
    drawing = "```text\nmd/demo/\n  a.md        what a is,\n              continued\n  web/\n    b.md      b\n" \
              "  c.md        c\n```\n"
    assert docs.trees(drawing) == ["md/demo/", "md/demo/a.md", "md/demo/web/", "md/demo/web/b.md", "md/demo/c.md"]


def test_readme_shows_the_demo_run_on_one_day():
    """Examples show the session's day as SHOWN_RUN's; the folder drawing and prose name that day too."""
    days = set(re.findall(r"-(\d{4}-\d{2}-\d{2})(?:-\d+)?-(?:synthesis|audit|evidence)\.md", readme_text()))
    assert days == {f"{docs.SHOWN_RUN[:4]}-{docs.SHOWN_RUN[4:6]}-{docs.SHOWN_RUN[6:8]}"}
    assert docs.show_run(f"run 20990101T000000Z-abcd on {web.now_utc():%Y-%m-%d}") == (
        f"run {docs.SHOWN_RUN} on {days.pop()}")


def test_every_exit_code_readme_names_is_one_web_py_returns():
    assert docs.quoted_exit_codes(readme_text()) <= {code for code, _ in web.EXIT_CODES}
    assert docs.quoted_exit_codes("Exit 0 when all is well, 1 when one failed, or 2 for a typo; 3–5 when the box "
                                  "failed (1–1,000 pages). Then exit 6.") == {0, 1, 2, 3, 4, 5, 6}
