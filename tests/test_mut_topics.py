"""Topics and their folders, where the mutation run found them unpinned: the one-line errors for a missing md
root, a topic whose web/ is a file or that leads out of the md root, the topic names check_topic takes or refuses
(., X-ended names, exactly 100 characters, a bare /, a completed X/); doctor's md-root probe on a disk with no
room; the page index a topic keeps (a dangling link, a page the ledger recorded, a hand-written file in
web/); and what status and the manifest say of a run: the synthesis an older ledger's run writes, and the scrape
requests it made."""

import json
import os
import signal

import pytest

import web
from conftest import read_ledger
from standins import captured_reply
from test_history import TODAY, A, B, C, article, start_run


def error_of(r):
    """(exit code, stdout, stderr) of a command that failed: nothing on stdout, one line on stderr."""
    return r.code, r.out, r.err


# --- the md root, and a topic's folders -------------------------------------------------------------------------

def test_a_missing_md_root_is_a_storage_error_with_exit_3(run, monkeypatch, tmp_path):
    missing = tmp_path / "nonexistent"
    monkeypatch.setenv("WEB_MD_ROOT", str(missing))
    assert error_of(run("status", "--topic", "t")) == (
        web.EXIT_CONFIG, "", f"web.py: storage: the md root {web.display_path(missing)} does not exist — point "
                             f"WEB_MD_ROOT at an existing folder, or create it\n")


def test_an_md_root_that_is_a_file_is_a_storage_error_with_exit_3(run, monkeypatch, tmp_path):
    (tmp_path / "file").write_text("not a folder\n", encoding="utf-8")
    monkeypatch.setenv("WEB_MD_ROOT", str(tmp_path / "file"))
    assert error_of(run("init", "a goal", "--topic", "t")) == (
        web.EXIT_CONFIG, "", f"web.py: storage: the md root {web.display_path(tmp_path / 'file')} is not a folder — "
                             f"point WEB_MD_ROOT at an existing folder, or create it\n")


def test_a_topic_whose_web_folder_is_a_file_is_a_usage_error_naming_it(run, md_root):
    (md_root / "t" / "web").write_text("a file where the pages would go\n", encoding="utf-8")
    assert error_of(run("status", "--topic", "t")) == (
        web.EXIT_USAGE, "", f"web.py: usage: {web.display_path(md_root / 't' / 'web')} exists and is not a folder — "
                            f"choose another topic\n")


def test_a_topic_that_is_a_symlink_out_of_the_md_root_is_refused_in_one_line(run, md_root, tmp_path):
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", md_root / "escape")
    assert error_of(run("init", "a goal", "--topic", "escape")) == (
        web.EXIT_USAGE, "", "web.py: usage: the topic 'escape' resolves outside the md root (a symlink?) — choose a "
                            "topic that stays under md/\n")
    assert list((tmp_path / "outside").iterdir()) == []


# --- topic names: as typed, and as refused ----------------------------------------------------------------------

@pytest.mark.parametrize("typed, folder", [("X/", "X"), ("LaTeX/", "LaTeX"), ("x" * 100, "x" * 100)])
def test_a_topic_name_ending_in_x_or_a_completed_slash_or_100_characters_long_is_the_folder_it_names(
        run, md_root, typed, folder):
    r = run("init", "a goal", "--topic", typed)
    assert (r.code, r.err) == (0, "")
    assert r.out.splitlines()[2] == f"  pages: {web.display_path(md_root / folder / 'web')}/"
    assert (md_root / folder / "web").is_dir()


@pytest.mark.parametrize("typed, message", [
    (".", "the topic '.' has an empty, . or .. part — give a plain name such as ai/agents"),
    ("ai/./agents", "the topic 'ai/./agents' has an empty, . or .. part — give a plain name such as ai/agents"),
    ("/", "the topic '/' is an absolute path — give a name relative to md/")])
def test_a_dot_part_or_a_bare_slash_is_refused_for_what_it_is(run, md_root, typed, message):
    before = sorted(os.listdir(md_root))
    assert error_of(run("init", "a goal", "--topic", typed)) == (web.EXIT_USAGE, "", f"web.py: usage: {message}\n")
    assert sorted(os.listdir(md_root)) == before


# --- doctor's md-root check ---------------------------------------------------------------------------------------

@pytest.mark.skipif(os.name != "posix", reason="a file-size limit is POSIX's setrlimit")
def test_doctor_finds_an_md_root_with_no_room_for_a_byte_not_writable(md_root):
    import resource
    cfg = web.Config(os.environ, box=False)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # past the limit: the error EFBIG, not a signal
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))        # every file may hold 0 bytes: a disk with no room
    try:
        check = web.doctor_md_root(cfg)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)
    assert check == {"name": "md-root", "ok": False, "detail": f"{web.display_path(md_root)}: File too large",
                     "code": web.EXIT_CONFIG, "fix": "make it writable or set WEB_MD_ROOT"}
    assert sorted(os.listdir(md_root)) == ["t"]


# --- what status and the manifest say of a run ------------------------------------------------------------------

def test_the_checkpoint_counts_saved_and_unused_picks_as_scrapes_and_not_a_url_firecrawl_refused(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars."))
    fire.set_page(B, article(B, "Pools hold salt."))
    fire.set_page(C, captured_reply("bad_url.json", "not_a_url"))
    run_id, _ = start_run(run, topic="t", sources=3)
    run("scrape", A, B, "--topic", "t", "--limit", "1", "--workers", "2")   # A saved, B not needed: 2 scrapes
    run("scrape", C, "--topic", "t")                                        # refused as no URL: no scrape
    r = run("manifest", "--topic", "t")
    web_dir = md_root / "t" / "web"
    refused = "Firecrawl: Bad Request (Invalid url; URL must have a valid top-level domain or be a valid path; " \
              "Invalid URL)"
    assert (r.code, r.err) == (0, "")
    assert r.out.splitlines() == [
        f"t · run {run_id} · round 1 of 1 · 1 of 3 pages saved",
        "saved:",
        "  [1] Sea stars — 49 words — flags: short",
        f"      {A}",
        "failed:",
        f"  invalid-url  {C} — {refused}",
        "to read: 49 words ≈ 64 tokens · requests: 0 search requests for 0 queries, 2 scrapes",
        f"wrote {web.display_path(web_dir / '_manifest.md')} · notes: {web.display_path(web_dir / '_notes.md')} "
        f"(not written yet)"]


def test_a_run_an_older_web_py_started_writes_the_synthesis_named_after_its_goal(run, md_root):
    start_run(run, topic="t")
    path = md_root / "t" / "web" / "_ledger.jsonl"
    [init] = read_ledger(path)
    del init["synthesis"]                    # init recorded no synthesis name before runs had their own file
    path.write_text(json.dumps(init) + "\n", encoding="utf-8")
    synthesis = web.display_path(md_root / "t" / "how-do-sea-stars-fare-synthesis.md")
    lines = run("status", "--topic", "t").out.splitlines()
    assert lines[3:] == [f"synthesis: {synthesis} — not written yet", f"date: {TODAY}",
                         "next: search round 1: write 4–8 queries and run them in one python3 web.py search … "
                         "--topic t --json"]


# --- the page index of a topic -------------------------------------------------------------------------------------

def saved_page(run, fire, url=A):
    fire.set_page(url, article(url, "The survey counted 120 sea stars."))
    assert run("scrape", url, "--topic", "t").code == 0


def checkpoint_saved(run):
    """The saved: lines of the checkpoint manifest prints."""
    lines = run("manifest", "--topic", "t").out.splitlines()
    return lines[lines.index("saved:") + 1:lines.index(next(n for n in lines if n.startswith("to read:")))]


def test_a_dangling_link_among_the_pages_does_not_hide_the_pages_after_it(run, fire, md_root):
    saved_page(run, fire)
    os.symlink(md_root / "gone.md", md_root / "t" / "web" / "0-gone.md")   # its target was deleted
    r = run("scrape", A, "--topic", "t")
    page = web.display_path(md_root / "t" / "web" / "a-org-stars.md")
    assert (r.code, r.out) == (0, f"skipped  already saved: {page}  {A}\n")


@pytest.mark.parametrize("copy", ["a-org-stars copy.md", "Copy of a-org-stars.md", "a-org-stars-old.md"])
def test_a_copy_a_person_made_of_a_page_beside_it_is_not_taken_for_the_page(run, fire, md_root, copy):
    saved_page(run, fire)
    web_dir = md_root / "t" / "web"
    (web_dir / copy).write_bytes((web_dir / "a-org-stars.md").read_bytes())
    r = run("scrape", A, "--topic", "t")
    assert (r.code, r.out) == (0, f"skipped  already saved: {web.display_path(web_dir / 'a-org-stars.md')}  {A}\n")


def test_a_markdown_file_without_a_source_in_web_is_not_a_saved_page(run, fire, md_root):
    saved_page(run, fire)
    (md_root / "t" / "web" / "todo.md").write_text("# To do\n\nRead the census.\n", encoding="utf-8")
    assert checkpoint_saved(run) == ["  [1] Sea stars — 49 words — flags: short", f"      {A}"]


def test_the_page_index_takes_a_recorded_page_from_the_ledger_and_reads_any_other_once(md_root, monkeypatch):
    store = web.TopicStore(web.Config(os.environ, box=False), "t")
    web_dir = md_root / "t" / "web"
    page, recorded = web_dir / "page.md", web_dir / "recorded.md"
    page.write_text(f"> source: {A}  \n> title: Sea stars\n\n# Sea stars\n", encoding="utf-8")
    recorded.write_text(f"> source: {C}  \n\n# Census\n", encoding="utf-8")   # never rewritten: the ledger's facts hold
    web.append_events(str(web_dir), [web.ledger_event(None, "scrape", None, url=B, outcome="saved", path=str(recorded),
                                                      sha256="0" * 64, words=2, chars=10, flags=[], title="Pools")])
    reads, read = [], web.read_page_facts
    monkeypatch.setattr(web, "read_page_facts", lambda path: reads.append(path) or read(path))
    assert store.refresh()[0] == {web.url_key(A): str(page), web.url_key(B): str(recorded)}
    assert store.refresh()[1]["0" * 64] == str(recorded) and reads == [str(page)]   # read once, at the first listing
    page.unlink()
    assert store.refresh()[0] == {web.url_key(B): str(recorded)} and reads == [str(page)]
