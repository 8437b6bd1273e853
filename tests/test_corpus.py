"""The researcher's library: corpus files read as text through PDF debris, searched with find, read in parts
by page-readers, labelled for the topic's life and kept as the researcher made them. The fixtures in
tests/fixtures/corpus/ are real conversions: pdftotext of Debian's Policy Manual, Chinese Reference and Korean
history, and a convert.py rendering of the Debian Administrator's Handbook (their README says how)."""

import json
import os
import shutil

import pytest

import web
from conftest import TESTS
from test_gate import captured

CORPUS = os.path.join(TESTS, "fixtures", "corpus")
CASES = json.load(open(os.path.join(CORPUS, "cases.json"), encoding="utf-8"))
DEBRIS = json.load(open(os.path.join(CORPUS, "debris.json"), encoding="utf-8"))


def lines_of(name):
    with open(os.path.join(CORPUS, name), encoding="utf-8") as handle:
        return handle.read().split("\n")


def hook(run, event, payload):
    r = run("hook", event, stdin=json.dumps(payload))
    assert r.code == 0 and r.err == "", r
    return json.loads(r.out) if r.out.strip() else None


def denial(answer):
    out = (answer or {}).get("hookSpecificOutput", {})
    return out.get("permissionDecisionReason") if out.get("permissionDecision") == "deny" else None


# --- text, not layout: real conversions ---------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(DEBRIS))
def test_every_page_number_header_and_footnote_of_a_real_conversion_is_found(name):
    lines, truth = lines_of(name), DEBRIS[name]
    debris, footnotes = web.debris_lines(lines)
    assert web.page_number_lines(lines) == {i - 1 for i in truth["page_numbers"]}
    headers = {i - 1 for i in truth["headers"] + truth.get("separators", [])}
    assert len(headers & debris) >= 0.9 * len(headers)   # a footer naming a page's own section recurs nowhere
    assert {i - 1 for i in truth.get("footnotes", [])} <= footnotes
    kept = [line for i, line in enumerate(lines) if i not in debris and i not in footnotes]
    assert len(kept) > 0.8 * len(lines)   # what is left is the text


def claims_of(name, label):
    """A synthesis citing corpus file `name` as [label] with every case of it as a finding of its own, and the
    line each case's finding is on."""
    cases = [c for c in CASES if c["file"] == name]
    out, at = ["# Library", "", "## Answer", "", f"The conversion says so [{label}]({name}).", "", "## Findings", ""], {}
    for case in cases:
        at[len(out) + 1] = case
        said = f'"{case["quote"]}"' if "quote" in case else f"The file gives {case['number']}"
        out.append(f"- It reads {said} [{label}]({name}).")
    return "\n".join(out) + "\n", at


@pytest.mark.parametrize("name", sorted({c["file"] for c in CASES}))
def test_cite_check_reads_real_conversions_as_text(md_root, name):
    """Quotes across hyphenated breaks, page numbers and running headers, footnote markers and footnote text hold;
    wrong words, dropped negations, invented quotes, another file's text fail; a number that is only a page
    number, a running header or a footnote marker is no evidence."""
    topic = md_root / "lib"
    topic.mkdir()
    shutil.copyfile(os.path.join(CORPUS, name), topic / name)
    for other in {c["file"] for c in CASES} - {name}:   # a quote from another file is not this one's
        shutil.copyfile(os.path.join(CORPUS, other), topic / other)
    text, at = claims_of(name, f"C{sorted({c['file'] for c in CASES}).index(name) + 1}")   # file-name order
    (topic / "lib-synthesis.md").write_text(text, encoding="utf-8")
    failed = {line for line, _, _ in web.cite_check(str(topic / "lib-synthesis.md")).errors}
    wrong = [(c["kind"], c.get("quote") or c.get("number"), c["expect"]) for line, c in at.items()
             if (line in failed) != (c["expect"] == "fail")]
    assert wrong == []


def test_a_page_number_only_counts_up_through_the_file_and_a_table_column_is_no_page():
    book = []
    for page in range(1, 6):
        book += [f"Text of page {page} goes on here."] * 30 + ["", str(page), ""]
    assert len(web.page_number_lines(book)) == 5
    table = [line for value in (56, 57, 59, 60) for line in (str(value), "", "fonts-x", "", "V:20", "")]
    years = [line for year in (2019, 2020, 2021, 2022) for line in ([str(year)] + ["What happened that year."] * 25)]
    assert web.page_number_lines(table) == set() and web.page_number_lines(years) == set()


def test_a_note_passage_across_a_page_break_is_verbatim_at_its_lines():
    lines = lines_of("handbook-apt.md")
    case = next(c for c in CASES if c["kind"] == "page-break" and c["file"] == "handbook-apt.md")
    first, last = case["lines"]
    assert web.passage_problems([(first, last, case["quote"])], lines) == []
    assert web.passage_problems([(first, last, case["quote"].replace(" the ", " no "))], lines) != []


# --- labels for the topic's life --------------------------------------------------------------------------

def test_a_corpus_file_keeps_its_label_as_the_library_grows_and_shrinks(run, md_root):
    topic = md_root / "t"
    (topic / "b-census.md").write_text("The census counted 42 species in the pools.\n", encoding="utf-8")
    (topic / "c-log.md").write_text("The log notes the spring tides.\n", encoding="utf-8")
    labels = {e["path"].rsplit("/", 1)[1]: e["label"]
              for e in run("init", "g", "--topic", "t", "--with-corpus", "--json").json["corpus"]}
    assert labels == {"b-census.md": "C1", "c-log.md": "C2"}
    synthesis = topic / "g-synthesis.md"
    synthesis.write_text('# G\n\n## Answer\n\nThe census "counted 42 species in the pools" [C1](b-census.md).\n\n'
                         "## Findings\n\n- Spring tides are logged [C2](c-log.md).\n", encoding="utf-8")
    assert run("cite-check", synthesis).code == 0
    (topic / "a-new-paper.md").write_text("A paper that sorts first.\n", encoding="utf-8")   # a file added later
    (topic / "c-log.md").rename(topic / "d-log-renamed.md")                                # and one renamed
    synthesis.write_text(synthesis.read_text("utf-8").replace("c-log.md", "d-log-renamed.md"), encoding="utf-8")
    assert run("cite-check", synthesis).code == 0
    status = run("status", "--topic", "t", "--json").json
    assert [(e["label"], e["path"].rsplit("/", 1)[1]) for e in status["corpus"]] == [
        ("C1", "b-census.md"), ("C2", "d-log-renamed.md"), ("C3", "a-new-paper.md")]
    (topic / "a-new-paper.md").unlink()
    (topic / "e-another.md").write_text("Another, later.\n", encoding="utf-8")
    labels = [e["label"] for e in run("status", "--topic", "t", "--json").json["corpus"]]
    assert labels == ["C1", "C2", "C4"]   # C3 belonged to the removed paper: never given again


def test_a_topic_from_before_labels_were_kept_keeps_its_file_name_order(run, md_root):
    topic = md_root / "t"
    for name in ("b.md", "a.md"):
        (topic / name).write_text(f"Text of {name}.\n", encoding="utf-8")
    lookup = web.SourceLookup(str(topic))
    assert (lookup.label_of("a.md"), lookup.label_of("b.md")) == ("C1", "C2")


# --- the files stay theirs ----------------------------------------------------------------------------------

def tool(name, cwd, tool_name, **tool_input):
    payload = captured(name, cwd=str(cwd))
    payload["tool_name"], payload["tool_input"] = tool_name, tool_input
    return payload


def test_no_write_or_edit_changes_or_adds_a_corpus_file(run, md_root):
    topic = md_root / "t"
    (topic / "field-log.md").write_text("The log.\n", encoding="utf-8")
    run("init", "g", "--topic", "t")
    cwd = md_root.parent
    for name, tool_name, fields in (("pretooluse-read.json", "Edit", {"old_string": "log", "new_string": "x"}),
                                    ("pretooluse-read.json", "Write", {"content": "fixed"}),
                                    ("pretooluse-read-subagent.json", "Write", {"content": "fixed"})):
        reason = denial(hook(run, "pre", tool(name, cwd, tool_name, file_path="md/t/field-log.md", **fields)))
        assert reason.startswith(f"{web.display_path(topic / 'field-log.md')} is the researcher's own file")
    assert denial(hook(run, "pre", tool("pretooluse-read.json", cwd, "Write", file_path="md/t/my-notes.md",
                                        content="x")))
    (topic / "web" / "notes" / "corpus").mkdir(parents=True)
    (topic / "web" / "notes" / "corpus" / "field-log.md").write_text("a reader's note", encoding="utf-8")
    assert denial(hook(run, "pre", tool("pretooluse-read.json", cwd, "Write",
                                        file_path="md/t/web/notes/corpus/field-log.md", content="x")))
    mine = f"md/t/g-{web.now_utc():%Y-%m-%d}-synthesis.md"
    assert hook(run, "pre", tool("pretooluse-read.json", cwd, "Write", file_path=mine, content="# G\n")) is None
    assert (topic / "field-log.md").read_text("utf-8") == "The log.\n"


def test_a_changed_corpus_file_is_named_when_its_synthesis_is_checked_again(run, md_root):
    topic = md_root / "t"
    log = topic / "field-log.md"
    log.write_text("The census counted 42 species in the pools.\n", encoding="utf-8")
    run("init", "g", "--topic", "t", "--with-corpus")
    synthesis = topic / "g-synthesis.md"
    synthesis.write_text('# G\n\n## Answer\n\nIt "counted 42 species in the pools" [C1](field-log.md).\n\n'
                         "## Findings\n\n- 42 species [C1](field-log.md).\n", encoding="utf-8")
    assert "corpus-changed" not in run("cite-check", synthesis).out
    log.write_text("The census counted 40 species in the pools.\n", encoding="utf-8")
    out = run("cite-check", synthesis).out
    assert "warning: corpus file [C1] field-log.md changed since this synthesis passed cite-check on " in out
    assert "quote \"counted 42 species in the pools\" is not in field-log.md" in out


# --- find -------------------------------------------------------------------------------------------------

@pytest.fixture
def library(run, md_root):
    """Topic `lib` with the real convert.py handbook excerpt and the Korean and Chinese conversions."""
    topic = md_root / "lib"
    topic.mkdir()
    for name in ("handbook-apt.md", "history-ko.md", "reference-zh-cn.md"):
        shutil.copyfile(os.path.join(CORPUS, name), topic / name)
    run("init", "apt pinning", "--topic", "lib", "--with-corpus")
    return topic


def test_find_names_the_passage_its_lines_heading_and_label(run, library):
    answer = run("find", "synaptic aptitude graphical interfaces", "--topic", "lib", "--json").json
    assert answer["schema"] == "web.find/1" and answer["ok"] and answer["queries"] == {
        "1": "synaptic aptitude graphical interfaces"}
    best = answer["hits"][0]
    assert best["label"] == "C1" and best["path"] == web.display_path(library / "handbook-apt.md")
    first, last = best["lines"]
    lines = lines_of("handbook-apt.md")
    assert "synap-" in "\n".join(lines[first - 1:last])   # the file breaks the word …
    assert "synaptic" in best["snippet"] and "synap-" not in best["snippet"]   # … find reads it whole
    assert best["heading"] and best["words"] > 20
    text = run("find", "synaptic aptitude graphical interfaces", "--topic", "lib", "--max", "1").out.splitlines()
    assert text[0] == f" 1. [C1] {best['path']} L{first}–{last} · {best['heading']}"
    assert text[-1] == "-- 1 hit in 3 files"


@pytest.mark.parametrize("query, name", [("데비안 프로젝트", "history-ko.md"), ("用户账号", "reference-zh-cn.md")])
def test_find_reads_korean_and_chinese(run, library, query, name):
    hits = run("find", query, "--topic", "lib", "--json").json["hits"]
    assert hits and hits[0]["path"].endswith(name)


def test_find_reindexes_only_what_changed_and_forgets_what_is_gone(run, library, monkeypatch):
    run("find", "pinning", "--topic", "lib")
    assert (library / "web" / ".index" / ".gitignore").read_text() == "*\n"
    added, add = [], web.LibraryIndex.add
    monkeypatch.setattr(web.LibraryIndex, "add", lambda self, rel, *a: added.append(rel) or add(self, rel, *a))
    run("find", "pinning", "--topic", "lib")
    assert added == []   # warm: nothing read again
    (library / "handbook-apt.md").unlink()
    (library / "new-note.md").write_text("# Pinning\n\nA note on apt pinning priorities.\n", encoding="utf-8")
    paths = {h["path"] for h in run("find", "pinning priorities", "--topic", "lib", "--json").json["hits"]}
    assert paths == {web.display_path(library / "new-note.md")} and added == ["new-note.md"]


def test_find_works_where_its_index_cannot_be_written(run, library):
    shutil.rmtree(library / "web" / ".index", ignore_errors=True)
    (library / "web" / ".index").write_text("a file where the index folder would go", encoding="utf-8")
    hits = run("find", "synaptic", "--topic", "lib", "--json").json["hits"]   # built in memory
    assert hits[0]["path"] == web.display_path(library / "handbook-apt.md")
    assert (library / "web" / ".index").read_text("utf-8") == "a file where the index folder would go"


@pytest.mark.parametrize("argv, message", [
    (["the of and"], "web.py: usage: the query 'the of and' has no word to find — give it words that carry meaning"),
    (["tides", "--topic", "empty"], "web.py: usage: topic 'empty' has nothing to search: no corpus file and no saved "
                                    "page — put the researcher's files in "),
])
def test_find_refuses_what_it_cannot_search_in_one_line(run, library, md_root, argv, message):
    (md_root / "empty").mkdir()
    r = run("find", *argv, *(["--topic", "lib"] if "--topic" not in argv else []))
    assert r.code == 2 and r.err.startswith(message) and r.err.count("\n") == 1 and r.out == ""


# --- parts and page-readers -----------------------------------------------------------------------------------

def book(chapters=3, words=9000):
    """A corpus file of `chapters` chapters of `words` words, each in sections of 1,000 words."""
    out = []
    for c in range(1, chapters + 1):
        out += [f"# Chapter {c}", ""]
        for s in range(1, words // 1000 + 1):
            out += [f"## {c}.{s} Section", ""] + [" ".join(f"c{c}s{s}w{i}" for i in range(k, k + 20)) for k in
                                                   range(0, 1000, 20)] + [""]
    return "\n".join(out) + "\n"


def test_a_long_file_is_cut_into_parts_at_its_chapters():
    text = book()
    facts = web.outline_facts(text)
    words = [web.count_words(line.encode()) for line in text.split("\n")[:facts["lines"]]]
    parts = web.text_parts(words, facts["headings"])
    starts = {h[0]: h[4] for h in facts["headings"]}
    assert [starts[a] for a, _ in parts] == ["Chapter 1", "Chapter 2", "Chapter 3"]
    assert all(sum(words[a - 1:b]) <= web.PART_MOST for a, b in parts) and parts[-1][1] == facts["lines"]


def test_a_file_without_headings_is_cut_at_paragraphs():
    lines = [("para " * 100).strip() if i % 3 else "" for i in range(900)]   # 60,000 words, no heading
    words = [web.count_words(line.encode()) for line in lines]
    parts = web.text_parts(words, [])
    assert len(parts) >= 5 and all(sum(words[a - 1:b]) <= web.PART_MOST for a, b in parts)
    assert all(lines[a - 2] == "" for a, _ in parts[1:])


def test_pdftotext_numbered_headings_make_the_outline_of_a_conversion():
    text = "\n".join(lines_of("policy-packages.md"))
    headings = [h[4] for h in web.outline_facts(text)["headings"]]
    assert "3.2 The version of a package" in headings and not any(h.startswith("#") for h in headings)


@pytest.fixture
def long_book(run, md_root):
    topic = md_root / "t"
    (topic / "manual.md").write_text(book(), encoding="utf-8")
    run("init", "g", "--topic", "t", "--with-corpus")
    return topic / "manual.md"


def reader(cwd, prompt, note=None):
    payload = captured("posttooluse-agent.json" if note is not None else "pretooluse-agent.json", cwd=str(cwd))
    payload["tool_input"] = dict(payload["tool_input"], prompt=prompt, run_in_background=False)
    if note is not None:
        payload["tool_response"] = dict(payload["tool_response"], content=[{"type": "text", "text": note}])
    return payload


def test_a_page_reader_reads_one_part_of_a_long_corpus_file_and_never_the_same_part_twice(run, md_root, long_book):
    cwd, shown = md_root.parent, web.display_path(long_book)
    parts = run("status", "--topic", "t", "--json").json["corpus"][0]["parts"]
    assert len(parts) == 3
    reason = denial(hook(run, "pre", reader(cwd, "Goal: g\nPage: md/t/manual.md")))
    assert reason == f"{shown} is read in 3 parts: name one in the prompt as `Lines: a–b` — not read yet: " + \
        ", ".join(f"{a}–{b}" for a, b in parts)
    (a, b) = parts[1]
    prompt = f"Goal: g\nPage: md/t/manual.md\nLines: {a}–{b}"
    allowed = hook(run, "pre", reader(cwd, prompt))["hookSpecificOutput"]
    assert allowed["permissionDecision"] == "allow"
    outline = allowed["updatedInput"]["prompt"].split("The part's outline (web.py outline):\n", 1)[1]
    assert outline.startswith(f"{shown} lines {a:,}–{b:,} (read these only)") and "# Chapter 2" in outline
    assert "# Chapter 1" not in outline and "# Chapter 3" not in outline
    line = book().split("\n")[a + 3]
    note = f'Contributes: chapter 2.\nPassages:\n- L{a + 4}: "{line[:60]}"\n- L{a + 4}: "not in the file"\n'
    told = hook(run, "post", reader(cwd, prompt, note))
    saved = long_book.parent / "web" / "notes" / "corpus" / f"manual.L{a}-{b}.md"
    assert told["decision"] == "block" and told["reason"].startswith(
        f"web.py saved the note as {web.display_path(saved)}: 1 of 2 passages verbatim at their lines.")
    assert saved.read_text("utf-8").startswith(f"> page: {shown} lines {a}–{b} · [C1] · ")
    assert run("status", "--topic", "t", "--json").json["corpus"][0]["notes"] == [2]
    again = denial(hook(run, "pre", reader(cwd, prompt)))
    assert again == f"lines {a}–{b} of {shown} have a reader's note already, {web.display_path(saved)}: read it"
    hits = run("find", f"c2s1w{0}", "--topic", "t", "--json").json["hits"]
    assert hits[0]["part"] == [a, b] and hits[0]["note"] == web.display_path(saved)


def test_the_main_conversation_looks_up_lines_of_a_long_corpus_file_but_never_reads_it_whole(run, md_root, long_book):
    cwd = md_root.parent
    whole = tool("pretooluse-read.json", cwd, "Read", file_path="md/t/manual.md")
    assert "is a corpus file of 27," in denial(hook(run, "pre", whole))
    look = tool("pretooluse-read.json", cwd, "Read", file_path="md/t/manual.md", offset=40, limit=web.LOOKUP_LINES)
    assert hook(run, "pre", look) is None
    reader_read = tool("pretooluse-read-subagent.json", cwd, "Read", file_path="md/t/manual.md")
    assert hook(run, "pre", reader_read) is None


def test_a_long_note_of_a_corpus_part_is_read_whole(run, md_root, long_book):
    note = long_book.parent / "web" / "notes" / "corpus" / "manual.L1-900.md"   # what the main conversation is sent to
    note.parent.mkdir(parents=True)
    shutil.copy(long_book, note)
    read = tool("pretooluse-read.json", md_root.parent, "Read", file_path="md/t/web/notes/corpus/manual.L1-900.md")
    assert hook(run, "pre", read) is None


def test_two_finds_at_once_on_a_new_index_both_answer(library, md_root):
    import subprocess
    import sys
    shutil.rmtree(library / "web" / ".index", ignore_errors=True)
    argv = [sys.executable, os.path.join(os.path.dirname(TESTS), "web.py"), "find", "synaptic aptitude", "--topic",
            "lib", "--json"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ) for _ in range(2)]
    answers = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], answers
    hits = [json.loads(out)["hits"] for out, _ in answers]
    assert hits[0] == hits[1] and hits[0]
