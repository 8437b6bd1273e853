"""The citation audit: the citation-auditor's launch (in the foreground, on a synthesis that passes
cite-check, with what cite-check knows in its prompt), its findings written beside the synthesis and
recorded, status and the manifest, and the Stop hook that asks for the audit once."""

import json

import pytest

import web
from test_gate import FAILING, FAITHFUL, captured, hook, project, write  # noqa: F401  (fixtures)

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
    event = web.read_ledger(project / "web" / "_ledger.jsonl")[-1]
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
    entry = web.synthesis_status(str(project), web.read_ledger(project / "web" / "_ledger.jsonl"))[0]
    assert entry["audit"] == {"problems": 2, "current": True}
    assert web.render_synthesis_status(entry).endswith("passed cite-check on "
                                                       f"{web.now_utc():%Y-%m-%d} · audited: 2 problems")
    path.write_text(FAITHFUL + "\n", encoding="utf-8")
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    entry = web.synthesis_status(str(project), web.read_ledger(project / "web" / "_ledger.jsonl"))[0]
    assert entry["audit"] == {"problems": 2, "current": False}
    assert web.render_synthesis_status(entry).endswith("audited: 2 problems, before its last edit")


def test_the_gate_asks_for_the_audit_once_and_never_once_audited(hook, project):  # noqa: F811
    path = write(project, FAITHFUL)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    hook("post", auditor_answer(project, path, "Problems: 0"))
    assert hook("stop", captured("stop.json")) == (0, None, "")


def test_the_gate_never_asks_another_session_nor_at_a_checkpoint(hook, project):  # noqa: F811
    path = write(project, FAITHFUL)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))   # written in session a4d0…
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
    events = [e for e in web.read_ledger(project / "web" / "_ledger.jsonl") if e.get("event") == "audit-asked"]
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
