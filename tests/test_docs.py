"""README's examples are what the code prints: tests/docs.py replays the session and regenerates them."""

import difflib
import io
import os
import re
import sys

import pytest

import docs
import web


@pytest.fixture
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


def test_readme_examples_and_tables_are_what_the_code_prints(in_this_process):
    """README's blocks come from real processes (tests/docs.py --write); this replays the same session
    through web.main in this process, so that a change in any output shows here."""
    with open(docs.README, encoding="utf-8") as handle:
        readme = handle.read()
    changed = docs.differences(readme, docs.session_outputs(in_this_process), docs.tables())
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
    assert sorted(examples) == sorted({name for name, _, _ in docs.SESSION})   # each once, none missing
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
