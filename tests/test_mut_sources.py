"""Which pages a synthesis answers for, and what cite-check reads of them, where the mutation run found it
unpinned: the pages a run found already saved or refreshed count as its own in the coverage (not a page it skipped
as another's duplicate nor one refresh found moved or gone), never cited is said only of the pages it saved, every
page when the topic has no run; a corpus file in another encoding, or one that begins like a saved page, is read whole; a quote found
only in a corpus file is not given a page's number; a number in a page's link text counts; and the line of a
problem in a footnote whose text starts below its label."""

from test_citecheck import EVENTS, HEADER, PAGES, REEF1, synthesis, topic_on_disk
from test_mut_citecheck import check  # noqa: F401 (a fixture)
from test_mut_review import report


def never_cited(result):
    return [m for _, k, m in result.warnings if k == "never-cited"]


# --- the pages of a run -------------------------------------------------------------------------------------------

EXTRA = {f"web/{name}.md": HEADER.format(f"{name}.example") + f"# {name}\n\nThe {name} page.\n"
         for name in ("tide", "storm", "gone")}
KO2 = {"web/ko.v2.md": PAGES["web/ko.md"].replace("조사는", "새 조사는")}
SAVED_R1 = [{"run": "r1", "command": "scrape", "outcome": "saved", "path": f"md/reefs/{name}"} for name in EXTRA]


def second_run(*events):
    """The ledger of a topic whose run r1 saved seven pages, then run r2 that did `events`."""
    return EVENTS + SAVED_R1 + [{"run": "r2", "command": "init"}] + [dict(e, run="r2") for e in events]


SECOND_RUN = second_run(
    {"command": "scrape", "outcome": "skipped", "reason": "already saved", "path": "md/reefs/web/census.md"},
    {"command": "scrape", "outcome": "skipped", "reason": "duplicate", "path": "md/reefs/web/tide.md"},
    {"command": "refresh", "outcome": "unchanged", "path": "md/reefs/web/zh.md"},
    {"command": "refresh", "outcome": "changed", "path": "md/reefs/web/ko.v2.md", "previous": "md/reefs/web/ko.md"},
    {"command": "refresh", "outcome": "moved", "path": "md/reefs/web/storm.md", "to": "https://elsewhere.example/"},
    {"command": "refresh", "outcome": "failed", "path": "md/reefs/web/gone.md", "kind": "http"})


def test_a_run_answers_for_the_pages_it_found_already_saved_or_refreshed_not_a_duplicate_or_a_moved_one(check):
    result = check(synthesis(f"- Surveys counted 1,240 colonies {REEF1}.").replace("run r1", "run r2"),
                   pages=dict(PAGES, **EXTRA, **KO2), events=SECOND_RUN)
    assert never_cited(result) == []   # the run saved none of them: an earlier run's warning, not this one's
    assert result.coverage["per_source"] == {"web/reef.md": 2, "web/census.md": 0, "web/zh.md": 0, "web/ko.v2.md": 0}


def test_never_cited_names_only_the_pages_the_run_saved(check):
    events = SECOND_RUN + [{"run": "r2", "command": "scrape", "outcome": "saved", "path": "md/reefs/web/gone.md"}]
    result = check(synthesis(f"- Surveys counted 1,240 colonies {REEF1}.").replace("run r1", "run r2"),
                   pages=dict(PAGES, **EXTRA, **KO2), events=events)
    assert never_cited(result) == ["saved source web/gone.md is never cited"]


def test_a_topic_whose_ledger_has_no_run_answers_for_every_saved_page(check):
    result = check(synthesis(f"- Surveys counted 1,240 colonies {REEF1}."), events=[dict(e, run=None) for e in EVENTS[1:]])   # scraped, no init
    assert never_cited(result) == ["saved source web/census.md is never cited", "saved source web/zh.md is never cited",
                                   "saved source web/ko.md is never cited"]
    assert result.coverage["per_source"] == {"web/reef.md": 2, "web/census.md": 0, "web/zh.md": 0, "web/ko.md": 0}


# --- what cite-check reads of a page or corpus file ---------------------------------------------------------------

def test_a_corpus_file_in_another_encoding_is_read_with_its_odd_bytes_replaced(run, md_root):
    topic = topic_on_disk(md_root)
    (topic / "terrain.md").write_bytes("# Relevé\n\nLe relevé de 2019 compte 1,240 colonies.\n".encode("latin-1"))
    shown, code, lines = report(run, topic, "- The field notes count 1,240 colonies in 2019 [C1](terrain.md).")
    assert (code, lines[3:]) == (0, [
        "coverage: 3 sentences, 2 with a citation · quotes: 0 verified, 0 failed, 0 exempt (≤3 words), 0 unchecked "
        "· numbers: 2 verified, 0 derived, 0 not found",
        "citations per source: [1] 1 · [2] 0 · [3] 0 · [4] 0 · [C1] 1",
        "review: nothing to reread",
        "ok: 0 errors, 3 warnings"]), lines


def test_a_corpus_file_is_read_whole_even_a_copy_of_a_saved_page_with_its_header(run, md_root):
    shown, code, lines = report(run, topic_on_disk(md_root), "- The copy says it was fetched on 2026-12-01 "
                                "[C1](reef-copy.md).", files={"reef-copy.md": PAGES["web/reef.md"]})
    assert (code, lines[3:]) == (0, [
        "coverage: 3 sentences, 2 with a citation · quotes: 0 verified, 0 failed, 0 exempt (≤3 words), 0 unchecked "
        "· numbers: 1 verified, 0 derived, 0 not found",
        "citations per source: [1] 1 · [2] 0 · [3] 0 · [4] 0 · [C1] 1",
        "review: nothing to reread",
        "ok: 0 errors, 3 warnings"]), lines


def test_a_quote_only_a_corpus_file_holds_is_given_its_c_label_not_a_saved_pages_number(run, md_root):
    # old-reef.md is no saved page, though its name ends in reef.md, the name of source 1
    quote = "the old survey was never finished"
    shown, code, lines = report(run, topic_on_disk(md_root), f'- Its notes say "{quote}".',
                                files={"old-reef.md": f"# Old notes\n\nSadly {quote}.\n"})
    assert code == 1 and lines[0] == (f'{shown}:12: quote "{quote}" has no citation; it is in old-reef.md: '
                                      f'cite it as [C1](old-reef.md)'), lines


def test_a_number_that_opens_a_link_text_on_a_page_is_found(check):
    page = PAGES["web/reef.md"] + "\nA later count: [8,310 colonies](https://example.org/survey/2023).\n"
    result = check(synthesis(f"- A later survey counted 8,310 colonies {REEF1}."), pages=dict(PAGES, **{
        "web/reef.md": page}))
    assert (result.errors, result.coverage["numbers"]) == ([], {"verified": 1, "derived": 0, "not_found": 0})


def test_a_problem_in_a_footnote_whose_text_starts_below_its_label_is_on_its_own_line(run, md_root):
    shown, code, lines = report(run, topic_on_disk(md_root), f"- Surveys counted 1,240 colonies {REEF1}.[^1]\n\n"
                                                             f"[^1]:\n    Surveys counted 1,420 colonies {REEF1}.")
    assert code == 1 and lines[0] == f"{shown}:15: number 1,420 is not in web/reef.md", lines
