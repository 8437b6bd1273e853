"""cite-check on a real synthesis: eight documentation pages as the real Firecrawl returned them
(tests/fixtures/realpages) and a synthesis written from them as Claude writes one, following
reference/synthesis.md (tests/fixtures/citecheck): sentences citing two pages with a quote from one, quotes
holding code, block quotes, numbers, a derived percentage, a table and a Reliability section. What cite-check
prints for it must fit Claude's budget and hold only what a careful writer would change or reread."""

import citecheck_corpus
import web

BUDGET = 6000   # characters Claude reads to verify an 8-source synthesis; 3.0.0 printed 9,617 for this one: 12
                # warnings for quotes on the page their clause cites (again in the review list), two false errors


def test_the_real_synthesis_prints_only_what_needs_doing_within_the_budget(run, md_root):
    path = citecheck_corpus.write_real_topic(str(md_root))
    r = run("cite-check", path)
    shown = web.display_path(path)
    assert r.code == web.EXIT_OK and len(r.out) <= BUDGET, len(r.out)
    assert [line for line in r.out.splitlines() if " warning: " in line] == [
        f"{shown}:63: warning: number 15 is not in [1], [2], [3], [4], [5], [6], [7] or [8]",
        f'{shown}:15: warning: quote "prefer to explicitly manage particular points of conflict" is in [1] but not '
        "in [3]: move [3] to the words it supports, or drop it",
        f'{shown}:36: warning: quote "just update your branch to point at the same revision" is in [8] but not in '
        "[5]: move [5] to the words it supports, or drop it"]
    listed = [line.split(":")[0] for line in r.out.splitlines() if line.startswith("L")]
    assert listed == ["L9 weak 33%", "L20 weak 36%", "L57 weak 17%", "L58 weak 38%", "L59 weak 40%"]
    assert r.out.splitlines()[-2:] == ["ok: 0 errors, 3 warnings", (   # 82 citation pairs: an audit in slices
        f'next: launch the audit in 2 slices, all in one message (2 Agent calls with subagent_type "citation-auditor", '
        f'"run_in_background": false, prompt "Synthesis: {shown}" and a second line "Slice: k of 2" for k = 1, 2)')]


def test_the_real_synthesis_verifies_its_quotes_block_quotes_and_numbers(run, md_root):
    coverage = run("cite-check", citecheck_corpus.write_real_topic(str(md_root)), "--json").json["coverage"]
    assert coverage["quotes"] == {"verified": 31, "not_found": 0, "no_citation": 0, "exempt": 4}
    assert coverage["numbers"] == {"verified": 7, "derived": 1, "not_found": 1}
    assert coverage["sentences"] == 45 and coverage["cited"] == 38


def test_a_quote_moved_to_the_wrong_page_of_the_real_synthesis_names_its_page(run, md_root):
    path = citecheck_corpus.write_real_topic(str(md_root))
    mvcc, iso = (f"web/docs-python-example-org-docs-postgresql-doc-15-html-{n}-html.md" for n in ("mvcc-intro",
                                                                                                 "transaction-iso"))
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text.replace(f'"each SQL statement sees a snapshot of data" [1]({mvcc})',
                                  f'"each SQL statement sees a snapshot of data" [2]({iso})', 1))
    r = run("cite-check", path)
    assert r.code == web.EXIT_PARTIAL and r.out.splitlines()[0] == (
        f'{web.display_path(path)}:9: quote "each SQL statement sees a snapshot of data" is on [1] ({mvcc}), not [2]')
    assert r.out.splitlines()[-1] == "FAIL: 1 error, 3 warnings"
