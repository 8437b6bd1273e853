"""README's examples are what the code prints: tests/docs.py replays the session and regenerates them."""

import difflib

import docs


def test_readme_examples_and_tables_are_what_the_code_prints():
    with open(docs.README, encoding="utf-8") as handle:
        readme = handle.read()
    fresh = docs.fill(readme, docs.session_outputs(), docs.tables())
    expected, found = docs.normalise(fresh), docs.normalise(readme)
    assert found == expected, "README differs from what the code prints; run python3 tests/docs.py --write:\n" + \
        "".join(difflib.unified_diff(found.splitlines(True), expected.splitlines(True), "README.md", "code"))


def test_every_example_is_shown_and_every_marker_is_generated():
    with open(docs.README, encoding="utf-8") as handle:
        examples, tables = docs.markers(handle.read())
    assert set(examples) == {name for name, _, _ in docs.SESSION}
    assert set(tables) == set(docs.tables())


def test_the_check_ignores_only_what_varies_between_runs():
    assert docs.normalise("http://127.0.0.1:40123/x run 20261201T020411Z-1262 on 2026-12-01 \"elapsed_ms\":31") == \
        "http://127.0.0.1:PORT/x run RUN on DATE \"elapsed_ms\":0"
    assert docs.normalise("523 words, 1,240 sea stars") == "523 words, 1,240 sea stars"
