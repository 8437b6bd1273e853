"""The citation audit: the citation-auditor's launch (in the foreground, on a synthesis that passes
cite-check, with what cite-check knows in its prompt), its findings written beside the synthesis and
recorded, status and the manifest, and the Stop hook that asks for the audit once."""

import json

import pytest

import web
from conftest import read_ledger
from test_gate import FAILING, FAITHFUL, captured, hook, project, reader_note, write  # noqa: F401  (fixtures)

ANSWER = ('Problems: 2\n1. L12 hedge: "the reef had recovered"\n   page [1] L9: "reported that the reef had '
          'recovered"\n   fix: "Marine biologists reported that the reef had recovered" [1]\n'
          '2. L13 uncited: "Water was warm."\n   page [1] L9: "peaked at 31.5 °C"\n   fix: cite [1]\n')


def auditor_call(name, topic, synthesis_path, **changes):
    payload = captured(name, cwd=str(topic.parent.parent))
    payload["tool_input"] = dict(payload["tool_input"], subagent_type="citation-auditor",
                                 **dict({"prompt": f"Synthesis: {synthesis_path}"}, **changes))
    return payload


def test_the_auditor_runs_in_the_foreground_with_what_cite_check_knows(hook, project):  # noqa: F811
    path = write(project, FAITHFUL)
    code, answer, err = hook("pre", auditor_call("pretooluse-agent.json", project, path))
    out = answer["hookSpecificOutput"]
    assert (code, err, out["permissionDecision"]) == (0, "", "allow")
    prompt = out["updatedInput"]["prompt"]
    assert prompt.startswith(f"Synthesis: {path}\n\nWhat cite-check knows:\nRun facts (ledger): run r1 · ")
    assert "pages saved: [1] [2] [3] [4]" in prompt
    assert "review: nothing to reread\n" in prompt
    assert "L12: Surveys counted 1,240 colonies [1].\n  [1] “Surveys counted 1,240 colonies in 2019, up from 980 " \
           "colonies in 2017.”" in prompt   # the sentence and the best passage of its page


@pytest.mark.parametrize("change, text, reason", [
    ({"run_in_background": True}, FAITHFUL, '"run_in_background": false'),
    ({"prompt": "Audit the synthesis, please."}, FAITHFUL, "name the one synthesis to audit"),
    ({}, FAILING, "fails cite-check (2 errors): fix them and run cite-check until it exits 0, then audit"),
])
def test_the_auditor_is_refused_in_the_background_without_a_synthesis_or_before_cite_check_passes(
        hook, project, change, text, reason):  # noqa: F811
    path = write(project, text)
    answer = hook("pre", auditor_call("pretooluse-agent.json", project, path, **change))[1]["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and reason in answer["permissionDecisionReason"]


def auditor_answer(project, path, text):  # noqa: F811
    payload = auditor_call("posttooluse-agent.json", project, path)
    payload["tool_response"] = dict(payload["tool_response"], content=[{"type": "text", "text": text}])
    return payload


def test_the_auditors_findings_are_written_beside_the_synthesis_and_recorded(hook, project):  # noqa: F811
    path = write(project, FAITHFUL)
    assert hook("post", auditor_answer(project, path, ANSWER)) == (0, None, "")
    audit = (project / "reefs-audit.md").read_text(encoding="utf-8")
    lines = audit.splitlines()
    assert lines[0].startswith("> synthesis: reefs-synthesis.md · sha256 ") and lines[1] == (
        "> audited by: citation-auditor · 2 problems  ") and audit.endswith("\n\n" + ANSWER)
    event = read_ledger(project / "web" / "_ledger.jsonl")[-1]
    import hashlib
    assert {k: event[k] for k in ("command", "run", "file", "problems", "session")} == {
        "command": "audit", "run": "r1", "file": "reefs-synthesis.md", "problems": 2,
        "session": "4f08da92-d4c8-490a-aaab-9e96113ce7cc"}
    assert event["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("text, problems", [("Problems: 0", 0), (ANSWER, 2),
                                            ("Problems: 1\n1. L4 scope: \"x\"\n   fix: y\n", 1)])
def test_problems_are_counted_by_their_numbered_items(text, problems):
    assert web.audit_problems(text) == problems


def test_status_and_the_manifest_say_audited_and_how_many_problems(hook, project, run):  # noqa: F811
    path = write(project, FAITHFUL)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    hook("post", auditor_answer(project, path, ANSWER))
    entry = web.synthesis_status(str(project), read_ledger(project / "web" / "_ledger.jsonl"))[0]
    assert entry["audit"] == {"problems": 2, "current": True}
    assert web.synthesis_said(entry).endswith("passed cite-check on "
                                                       f"{web.now_utc():%Y-%m-%d} · audited: 2 problems")
    path.write_text(FAITHFUL + "\n", encoding="utf-8")
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    entry = web.synthesis_status(str(project), read_ledger(project / "web" / "_ledger.jsonl"))[0]
    assert entry["audit"] == {"problems": 2, "current": False}
    assert web.synthesis_said(entry).endswith("audited: 2 problems, before its last edit")


def test_the_gate_asks_for_the_audit_once_and_never_once_audited(hook, project):  # noqa: F811
    path = write(project, FAITHFUL)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    hook("post", auditor_answer(project, path, "Problems: 0"))
    assert hook("stop", captured("stop.json")) == (0, None, "")


def test_the_gate_never_asks_another_session_nor_at_a_checkpoint(hook, project):  # noqa: F811
    path = write(project, FAITHFUL)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))   # written in session a4d0…
    hook("post", reader_note(project, "another-session"))                     # another session read a page
    assert hook("stop", captured("stop.json", session_id="another-session")) == (0, None, "")   # e.g. a checkpoint
    assert "has not been audited" in hook("stop", captured("stop.json"))[1]["reason"]          # the writer's session


def test_the_audit_gate_is_off_with_web_gate_off(hook, project):  # noqa: F811
    path = write(project, FAITHFUL)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    code, answer, err = hook("stop", captured("stop.json"), WEB_GATE="off")
    assert (code, answer) == (0, None) and "gate is off" in err
    assert hook("post", auditor_answer(project, path, ANSWER), WEB_GATE="off")[1] is None
    assert (project / "reefs-audit.md").is_file()   # recorded all the same


def test_a_failing_synthesis_is_blocked_for_its_errors_not_asked_for_an_audit(hook, project):  # noqa: F811
    path = write(project, FAILING)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    reason = hook("stop", captured("stop.json"))[1]["reason"]
    assert "fails cite-check" in reason and "audited" not in reason
    events = [e for e in read_ledger(project / "web" / "_ledger.jsonl") if e.get("event") == "audit-asked"]
    assert events == []


def test_an_audit_records_the_answer_but_the_auditor_needs_a_synthesis_that_exists(hook, project):  # noqa: F811
    payload = auditor_answer(project, project / "gone-synthesis.md", ANSWER)
    assert hook("post", payload) == (0, None, "")
    assert not list(project.glob("*-audit.md"))
    assert json.dumps(payload)   # the payload stays a plain JSON object


def test_the_audit_file_is_not_part_of_the_corpus(hook, project):  # noqa: F811
    path = write(project, FAITHFUL)
    (project / "field-notes.md").write_text("# My notes\n", encoding="utf-8")
    hook("post", auditor_answer(project, path, ANSWER))
    assert web.corpus_files(str(project)) == ["field-notes.md"]


# --- the cases mutation testing found untested ----------------------------------------------------

from test_citecheck import EVENTS, REEF1, synthesis  # noqa: E402
from test_gate import gate  # noqa: E402,F401  (the in-process hook fixture)

WEAK = synthesis(f"- Surveys counted 1,240 colonies {REEF1}.\n- Parrotfish graze algae off dead coral heads nightly "
                 f"{REEF1}.")


def write_ledger(topic, events):
    (topic / "web" / "_ledger.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


def auditor_prompt(gate, project, path):  # noqa: F811
    code, answer, err = gate("pre", auditor_call("pretooluse-agent.json", project, path))
    out = answer["hookSpecificOutput"]
    assert (code, err, out["hookEventName"], out["permissionDecision"]) == (0, "", "PreToolUse", "allow")
    return out["updatedInput"]["prompt"]


def test_the_auditors_prompt_lists_the_sentences_to_reread(gate, project):  # noqa: F811
    prompt = auditor_prompt(gate, project, write(project, WEAK))
    assert "\nreview: 1 sentence to reread against the passage shown\nL13 weak 29%: Parrotfish graze algae off dead " \
           "coral heads nightly [1]. — [1] Coral cover rose by 26.5% between the surveys." in prompt


def test_the_auditors_prompt_says_what_the_ledger_records_of_the_run(gate, project):  # noqa: F811
    init = {"run": "r1", "command": "init", "goal": "how fast do reefs recover",
            "options": {"max_sources": 4, "max_rounds": 2}}
    failed = [{"run": "r1", "command": "scrape", "outcome": "failed", "url": f"https://gone{i}.example/",
               "kind": "timeout"} for i in range(2)]
    write_ledger(project, [init, {"run": "r1", "command": "search", "round": 1, "pages": 3}] + EVENTS[1:] + failed)
    prompt = auditor_prompt(gate, project, write(project, FAITHFUL))
    assert prompt.splitlines()[3] == ("Run facts (ledger): run r1 · goal: how fast do reefs recover · 1 of 2 rounds "
                                      "searched · 3 search requests · 4 of 4 pages saved: [1] [2] [3] [4] · 2 picks "
                                      "failed")
    write_ledger(project, [init] + EVENTS[1:] + [{"run": "r2", "command": "init", "goal": "a second look",
                                                  "options": {"max_sources": 2}}])
    prompt = auditor_prompt(gate, project, write(project, FAITHFUL.replace("run r1", "run r2")))
    assert prompt.splitlines()[3] == ("Run facts (ledger): run r2 · goal: a second look · 0 of 1 rounds searched · "
                                      "0 search requests · 0 of 2 pages saved: none · 0 picks failed")


def test_the_audit_file_opens_with_the_synthesis_sha256_and_holds_the_answers_text_only(gate, project):  # noqa: F811
    import hashlib
    path = write(project, FAITHFUL)
    payload = auditor_answer(project, path, ANSWER)
    payload["tool_response"]["content"] = [{"type": "text", "text": ""}, {"type": "text", "text": None},
                                           {"type": "image"}, {"type": "text", "text": ANSWER}]
    assert gate("post", payload) == (0, None, "")
    audit = (project / "reefs-audit.md").read_text(encoding="utf-8")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert audit.splitlines()[0] == (f"> synthesis: reefs-synthesis.md · sha256 {sha[:12]} · "
                                     f"{web.now_utc():%Y-%m-%d}  ")
    assert audit.split("\n\n", 1)[1] == ANSWER.strip() + "\n"


def test_an_auditor_answer_that_is_not_an_object_writes_no_audit(gate, project):  # noqa: F811
    path = write(project, FAITHFUL)
    for response in ("Problems: 0", None, ["Problems: 0"]):
        payload = auditor_answer(project, path, ANSWER)
        payload["tool_response"] = response
        assert gate("post", payload) == (0, None, "")
    assert not (project / "reefs-audit.md").exists()
    assert [e for e in read_ledger(project / "web" / "_ledger.jsonl") if e["command"] == "audit"] == []


def test_an_audit_that_cannot_be_written_is_one_line_on_stderr_and_not_recorded(gate, project):  # noqa: F811
    path = write(project, FAITHFUL)
    (project / "reefs-audit.md").mkdir()   # in the way of the audit file
    code, answer, err = gate("post", auditor_answer(project, path, ANSWER))
    assert (code, answer) == (0, None)
    assert err == (f"web.py: hook: the cite-check gate did not run: storage: cannot write "
                   f"{web.display_path(project / 'reefs-audit.md')} (Is a directory) — make the md root writable or "
                   f"point WEB_MD_ROOT elsewhere\n")
    assert [e for e in read_ledger(project / "web" / "_ledger.jsonl") if e["command"] == "audit"] == []


def test_stop_with_an_empty_session_id_never_blocks_and_says_why(gate, project):  # noqa: F811
    path = write(project, FAILING)
    gate("post", captured("posttooluse-write.json", file_path=str(path)))
    assert gate("stop", captured("stop.json", session_id=""))[1:] == (
        None, "web.py: hook: the cite-check gate did not run: ValueError: the hook input has no session_id\n")


def test_the_first_stop_block_lists_the_errors_and_where_the_full_report_is(gate, project):  # noqa: F811
    path = write(project, FAILING)
    gate("post", captured("posttooluse-write.json", file_path=str(path)))
    shown = web.display_path(path)
    assert gate("stop", captured("stop.json"))[1] == {"decision": "block", "reason": (
        f"{shown} fails cite-check (2 errors): fix them before you end the turn (block 1 of 3).\n"
        f"{shown}:12: number 1,420 is not in web/reef.md\n"
        f'{shown}:13: quote "the reef never recovers at all" is not in web/reef.md\n'
        f"Full report: python3 web.py cite-check {shown}")}


def test_a_synthesis_in_a_topic_without_a_web_folder_is_recorded_and_gated_at_stop(gate, md_root):  # noqa: F811
    topic = md_root / "essay"
    topic.mkdir()
    path = write(topic, FAILING, name="essay-synthesis.md")
    assert gate("post", captured("posttooluse-write.json", file_path=str(path)))[1]["decision"] == "block"
    events = read_ledger(topic / "web" / "_ledger.jsonl")
    assert [(e["command"], e["file"], e["ok"]) for e in events] == [("cite-check", "essay-synthesis.md", False)]
    assert gate("stop", captured("stop.json"))[1]["decision"] == "block"


def test_the_auditors_prompt_is_the_users_then_what_cite_check_knows_laid_out_in_full(gate, project):  # noqa: F811
    path = write(project, FAITHFUL)
    payload = auditor_call("pretooluse-agent.json", project, path, prompt=f"Synthesis: {path}\n\n")
    out = gate("pre", payload)[1]["hookSpecificOutput"]
    assert out["updatedInput"] == dict(payload["tool_input"], prompt=out["updatedInput"]["prompt"])
    assert out["updatedInput"]["prompt"] == (
        f"Synthesis: {path}\n\nWhat cite-check knows:\n"
        "Run facts (ledger): run r1 · goal: None · 0 of 1 rounds searched · 0 search requests · 4 of None pages "
        "saved: [1] [2] [3] [4] · 0 picks failed\n"
        "\n"
        "review: nothing to reread\n"
        "\n"
        "Cited sentences, each with the best passage of every page it cites:\n"
        "L8: Reefs recover within two seasons [1].\n"
        "  [1] “Marine biologists at the Coral Institute reported that the reef had recovered within two seasons "
        "after the 2016 bleaching.”\n"
        "L12: Surveys counted 1,240 colonies [1].\n"
        "  [1] “Surveys counted 1,240 colonies in 2019, up from 980 colonies in 2017.”\n")


def test_the_auditors_prompt_says_when_the_ledger_records_no_run(gate, project):  # noqa: F811
    write_ledger(project, EVENTS[1:])   # the pages, but no init
    prompt = auditor_prompt(gate, project, write(project, FAITHFUL))
    assert prompt.splitlines()[3] == "Run facts (ledger): no /research run recorded"


def test_an_auditor_named_by_a_relative_path_is_launched_and_recorded(gate, project, md_root):  # noqa: F811
    path = write(project, FAITHFUL)
    relative = "md/reefs/reefs-synthesis.md"   # as the prompt names it, from the session's folder
    launch = auditor_call("pretooluse-agent.json", project, relative)
    launch["cwd"] = str(md_root.parent)
    assert gate("pre", launch)[1]["hookSpecificOutput"]["permissionDecision"] == "allow"
    answer = auditor_answer(project, relative, ANSWER)
    answer["cwd"] = str(md_root.parent)
    assert gate("post", answer) == (0, None, "")
    assert (project / "reefs-audit.md").is_file() and path.is_file()


def test_the_audit_file_joins_the_answers_text_blocks_and_says_what_comes_next(gate, project):  # noqa: F811
    path = write(project, FAITHFUL)
    payload = auditor_answer(project, path, ANSWER)
    first, second = ANSWER.split("2. L13")
    payload["tool_response"]["content"] = [{"type": "text", "text": first.strip()}, {"type": "image"},
                                           {"type": "text", "text": "2. L13" + second}]
    gate("post", payload)
    audit = (project / "reefs-audit.md").read_text(encoding="utf-8")
    assert audit.splitlines()[2] == "> NOTE: each problem is fixed in the synthesis, then cite-check runs again"
    assert audit.split("\n\n", 1)[1] == first.strip() + "\n2. L13" + second


def test_the_gate_records_the_run_of_each_block_and_each_request_for_an_audit(gate, project):  # noqa: F811
    path = write(project, FAILING)
    gate("post", captured("posttooluse-write.json", file_path=str(path)))
    gate("stop", captured("stop.json"))
    write(project, FAITHFUL)
    gate("stop", captured("stop.json"))
    gates = [(e["event"], e["run"]) for e in read_ledger(project / "web" / "_ledger.jsonl")
             if e["command"] == "gate"]
    assert gates == [("block", "r1"), ("audit-asked", "r1")]


def test_the_gate_asks_each_session_that_wrote_the_synthesis_for_the_audit(gate, project):  # noqa: F811
    path = write(project, FAITHFUL)
    for session in ("session-a", "session-b"):
        gate("post", captured("posttooluse-write.json", file_path=str(path), session_id=session))
        assert "has not been audited" in gate("stop", captured("stop.json", session_id=session))[1]["reason"]
        assert gate("stop", captured("stop.json", session_id=session)) == (0, None, "")


def test_the_last_stop_block_says_to_end_the_turn_and_tell_the_user(gate, project):  # noqa: F811
    path = write(project, FAILING)
    gate("post", captured("posttooluse-write.json", file_path=str(path)))
    reasons = [gate("stop", captured("stop.json"))[1]["reason"] for _ in range(3)]
    assert reasons[2].endswith(f"Full report: python3 web.py cite-check {web.display_path(path)}\nThis is the last "
                               f"block: if you cannot fix them, end the turn and tell the user that the synthesis "
                               f"fails cite-check and why.")


@pytest.mark.parametrize("wrong, more", [(10, None), (11, "and 1 more")])
def test_a_stop_block_lists_ten_errors_then_how_many_more(gate, project, wrong, more):  # noqa: F811
    findings = "\n".join(f"- Surveys counted {1000 + i} colonies {REEF1}." for i in range(wrong))
    path = write(project, synthesis(findings))
    gate("post", captured("posttooluse-write.json", file_path=str(path)))
    lines = gate("stop", captured("stop.json"))[1]["reason"].splitlines()
    assert len(lines) == 1 + 10 + (1 if more else 0) + 1 and (lines[11] == more if more else True)
    assert lines[-1].startswith("Full report:")


def test_with_the_gate_off_a_written_synthesis_is_neither_checked_nor_recorded(
        gate, project, monkeypatch):  # noqa: F811
    monkeypatch.setenv("WEB_GATE", "off")
    path = write(project, FAILING)
    code, answer, err = gate("post", captured("posttooluse-write.json", file_path=str(path)))
    assert (code, answer) == (0, None) and "the cite-check gate is off" in err
    assert [e for e in read_ledger(project / "web" / "_ledger.jsonl") if e["command"] == "cite-check"] == []


def test_hook_input_that_is_not_an_object_is_said_to_be_so(gate, project):  # noqa: F811
    assert gate("post", "[1, 2]")[1:] == (
        None, "web.py: hook: the cite-check gate did not run: ValueError: the hook input is not a JSON object\n")
    assert gate("pre", {"tool_name": "Read", "tool_input": "x"}) == (0, None, "")
