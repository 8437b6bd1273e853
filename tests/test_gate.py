"""The cite-check gate in Claude Code: the hook commands of .claude/settings.json, run through a shell
as Claude Code runs them, fed the hook input captured from the real client (tests/fixtures/claude-code)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import web
from conftest import GUARD, ROOT, TESTS, read_ledger
from test_citecheck import EVENTS, PAGES, REEF1, synthesis

pytestmark = pytest.mark.skipif(not shutil.which("sh"), reason="hook commands run through a POSIX shell")
FAITHFUL = synthesis(f"- Surveys counted 1,240 colonies {REEF1}.")
FAILING = synthesis(f'- Surveys counted 1,420 colonies {REEF1}.\n- "the reef never recovers at all" {REEF1}.')


def settings_hook(event):
    """The command string .claude/settings.json gives Claude Code for an event."""
    with open(os.path.join(ROOT, ".claude", "settings.json"), encoding="utf-8") as handle:
        hooks = json.load(handle)["hooks"][event]
    return hooks[0]["hooks"][0]["command"]


def captured(name, **changes):
    with open(os.path.join(TESTS, "fixtures", "claude-code", name), encoding="utf-8") as handle:
        payload = json.load(handle)
    for key, value in changes.items():
        if key == "file_path":
            payload["tool_input"]["file_path"] = value
        else:
            payload[key] = value
    return payload


@pytest.fixture
def project(tmp_path, md_root):
    """A topic with saved pages under the md root, and a project folder for Claude Code."""
    web_dir = md_root / "reefs" / "web"
    web_dir.mkdir(parents=True)
    for rel, text in PAGES.items():
        (md_root / "reefs" / rel).write_text(text, encoding="utf-8")
    (web_dir / "_ledger.jsonl").write_text("".join(json.dumps(e) + "\n" for e in EVENTS), encoding="utf-8")
    (tmp_path / "project" / ".claude").mkdir(parents=True)
    return md_root / "reefs"


@pytest.fixture
def hook(tmp_path, md_root):
    """Run a hook command as Claude Code does: through sh, with CLAUDE_PROJECT_DIR, JSON on stdin."""
    def hook_(event, payload, **env):
        full_env = {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
                    "PYTHONPATH": GUARD, "WEB_MD_ROOT": str(md_root), "LANG": "C.UTF-8",
                    "CLAUDE_PROJECT_DIR": ROOT, "HOME": str(tmp_path)}
        full_env.update(env)
        stdin = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        proc = subprocess.run(["sh", "-c", settings_hook({"pre": "PreToolUse", "post": "PostToolUse"}.get(event, "Stop"))],
                              input=stdin, capture_output=True, env=full_env, timeout=30)
        out = proc.stdout.decode("utf-8")
        return proc.returncode, (json.loads(out) if out.strip() else None), proc.stderr.decode("utf-8")
    return hook_


def write(topic, text, name="reefs-synthesis.md"):
    path = topic / name
    path.write_text(text, encoding="utf-8")
    return path


def reader_note(topic, session):
    """A page-reader's note on the topic's web/reef.md, back in `session`: that session is in the topic's ledger."""
    payload = captured("posttooluse-agent.json", session_id=session, cwd=str(topic.parent.parent))
    payload["tool_input"] = dict(payload["tool_input"], prompt=f"Goal: x. Page: {topic / 'web' / 'reef.md'}")
    payload["tool_response"] = dict(payload["tool_response"], content=[
        {"type": "text", "text": "Contributes: x\nInstructions seen: none\n"}])
    return payload


def gate_events(topic):
    return [e for e in read_ledger(topic / "web" / "_ledger.jsonl") if e["command"] in ("cite-check", "gate")]


def test_settings_declare_every_hook_as_one_plain_command():
    assert settings_hook("PreToolUse") == 'python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/web_hook.py pre'
    assert settings_hook("PostToolUse") == 'python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/web_hook.py post'
    assert settings_hook("Stop") == 'python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/web_hook.py stop'
    with open(os.path.join(ROOT, ".claude", "settings.json"), encoding="utf-8") as handle:
        hooks = json.load(handle)["hooks"]
    assert hooks["PreToolUse"][0]["matcher"] == "Agent|Read|Write|Edit"   # launches, reads, and what a run may write
    assert hooks["PostToolUse"][0]["matcher"] == "Write|Edit|Agent"   # a synthesis written, a reader's note back



def test_the_hook_lets_an_ordinary_read_through_unloaded_and_loads_web_py_cached_for_the_rest(hook, project, tmp_path,
                                                                                                md_root):
    """Claude Code runs the PreToolUse hook on every Read: one outside the md root is let through before web.py
    is loaded; for the rest web.py is imported, so that its bytecode is kept in __pycache__/ (a script is compiled
    again on every run), and needs no argument parser (tests/bench.py times it)."""
    def imports(path):
        payload = captured("pretooluse-read.json", file_path=str(path), cwd=str(tmp_path))
        code, answer, err = hook("pre", payload, PYTHONPROFILEIMPORTTIME="1")
        imported = [line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if line.startswith("import time:")]
        assert (code, answer, len(imported)) == (0, None, len(err.splitlines()))   # nothing said but the imports
        return imported
    assert "web" not in imports(tmp_path / "notes.txt")
    (md_root / "t" / "field-log.md").write_text("A short log.\n", encoding="utf-8")
    inside = imports(md_root / "t" / "field-log.md")
    assert "web" in inside and "argparse" not in inside

# --- PostToolUse ------------------------------------------------------------------

def test_post_blocks_a_failing_synthesis_with_its_errors_and_records_the_session(hook, project):
    path = write(project, FAILING)
    code, answer, err = hook("post", captured("posttooluse-write.json", file_path=str(path)))
    assert code == 0 and err == ""
    shown = web.display_path(path)
    assert answer == {"decision": "block", "reason": (
        f"cite-check found 2 errors in {shown}: fix each one (the check runs again after every edit).\n"
        f"{shown}:12: number 1,420 is not in web/reef.md\n"
        f'{shown}:13: quote "the reef never recovers at all" is not in web/reef.md\n'
        f"Full report: python3 web.py cite-check {shown}")}
    event = gate_events(project)[-1]
    assert event["session"] == "a4d0dc23-e306-48e1-9a79-c85f1125d476" and event["via"] == "hook"
    assert event["ok"] is False and event["errors"] == 2 and event["file"] == "reefs-synthesis.md"


def test_post_lists_at_most_ten_errors(hook, project):
    findings = "\n".join(f"- Surveys counted {1000 + i} colonies {REEF1}." for i in range(14))
    path = write(project, synthesis(findings))
    _, answer, _ = hook("post", captured("posttooluse-write.json", file_path=str(path)))
    lines = answer["reason"].splitlines()
    assert len(lines) == 1 + 10 + 2 and lines[11] == "and 4 more"


def test_post_is_silent_for_a_passing_synthesis_but_records_it(hook, project):
    path = write(project, FAITHFUL)
    code, answer, err = hook("post", captured("posttooluse-edit.json", file_path=str(path)))
    assert (code, answer, err) == (0, None, "")
    assert gate_events(project)[-1]["ok"] is True


@pytest.mark.parametrize("name", ["web/_picks-1.json", "notes.md", "web/_manifest.md", "../reefs-synthesis.md"])
def test_post_ignores_every_other_file(hook, project, md_root, name):
    path = project / name
    path.write_text(FAILING, encoding="utf-8")
    code, answer, err = hook("post", captured("posttooluse-write.json", file_path=str(path)))
    assert (code, answer, err) == (0, None, "") and gate_events(project) == []


def test_post_resolves_a_relative_path_against_the_hook_cwd(hook, project, md_root):
    write(project, FAILING)
    payload = captured("posttooluse-write.json", file_path="reefs/reefs-synthesis.md", cwd=str(md_root))
    assert hook("post", payload)[1]["decision"] == "block"


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b'{"tool_input": "x"}', "\ud800".encode("utf-8",
                                                                                                         "surrogatepass")])
def test_malformed_input_never_blocks_and_says_so_on_stderr(hook, project, stdin):
    code, answer, err = hook("post", stdin)
    assert code == 0 and answer is None
    assert err == "" if stdin == b'{"tool_input": "x"}' else (
        err.count("\n") == 1 and err.startswith("web.py: hook: the cite-check gate did not run"))


# --- Stop --------------------------------------------------------------------------

SESSION = "a4d0dc23-e306-48e1-9a79-c85f1125d476"


def test_stop_is_silent_at_the_checkpoint_when_no_synthesis_was_written(hook, project):
    write(project, FAILING)                                     # a failing synthesis this session never touched
    assert hook("stop", captured("stop.json")) == (0, None, "")


def test_stop_asks_once_for_the_audit_of_a_passing_synthesis_of_this_session(hook, project):
    path = write(project, FAITHFUL)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    code, answer, err = hook("stop", captured("stop.json"))
    shown = web.display_path(path)
    assert (code, err) == (0, "") and answer == {"decision": "block", "reason": (
        f'{shown} passes cite-check but has not been audited: launch the audit (Agent with subagent_type '
        f'"citation-auditor", "run_in_background": false, prompt "Synthesis: {shown}"); fix every problem it names, '
        f"then run python3 web.py cite-check {shown} again. (Asked once: the next stop is not blocked.)")}
    assert hook("stop", captured("stop-after-block.json")) == (0, None, "")


def test_stop_blocks_a_failing_synthesis_of_this_session_only(hook, project):
    path = write(project, FAILING)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    code, answer, _ = hook("stop", captured("stop.json"))
    assert code == 0 and answer["decision"] == "block"
    assert answer["reason"].startswith(f"{web.display_path(path)} fails cite-check (2 errors): fix them before you "
                                       f"end the turn (block 1 of 3).")
    assert hook("post", reader_note(project, "another-session"))[1]["hookSpecificOutput"]["additionalContext"]
    assert {"another-session", captured("stop.json")["session_id"]} <= {
        e.get("session") for e in read_ledger(project / "web" / "_ledger.jsonl")}   # both sessions there
    assert hook("stop", captured("stop.json", session_id="another-session")) == (0, None, "")


def test_stop_blocks_three_times_for_the_same_content_then_tells_the_user(hook, project):
    path = write(project, FAILING)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    reasons = [hook("stop", captured("stop-after-block.json"))[1]["reason"] for _ in range(3)]
    assert [r.split("\n")[0].rsplit(" (", 1)[1] for r in reasons] == ["block 1 of 3).", "block 2 of 3).",
                                                                       "block 3 of 3)."]
    assert "This is the last block" in reasons[2] and "This is the last block" not in reasons[1]
    fourth = hook("stop", captured("stop-after-block.json"))
    assert fourth[0] == 0 and set(fourth[1]) == {"systemMessage"}
    assert "still fails cite-check (2 errors) after 3 attempts" in fourth[1]["systemMessage"]
    assert hook("stop", captured("stop.json")) == (0, None, "")              # told once; later turns end freely
    write(project, FAILING.replace("1,420", "1,421"))                          # new content, still failing
    assert hook("stop", captured("stop.json"))[1]["reason"].split("\n")[0].endswith("(block 1 of 3).")


def test_stop_is_silent_once_the_synthesis_is_fixed(hook, project):
    path = write(project, FAILING)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    assert hook("stop", captured("stop.json"))[1]["decision"] == "block"
    write(project, FAITHFUL)
    assert "has not been audited" in hook("stop", captured("stop-after-block.json"))[1]["reason"]
    assert hook("stop", captured("stop-after-block.json")) == (0, None, "")


def test_a_missing_md_root_never_blocks_and_says_so(hook, tmp_path):
    code, answer, err = hook("stop", captured("stop.json"), WEB_MD_ROOT=str(tmp_path / "nowhere"))
    assert code == 0 and answer is None and "the cite-check gate did not run: FileNotFoundError: no md root" in err


def test_an_unreadable_synthesis_never_blocks(hook, project):
    path = write(project, FAILING)
    hook("post", captured("posttooluse-write.json", file_path=str(path)))
    path.write_bytes(b"\xff\xfe not utf-8")
    code, answer, err = hook("stop", captured("stop.json"))
    assert code == 0 and answer is None and "is not UTF-8 text" in err and err.count("\n") == 1


def test_the_gate_can_be_turned_off_with_a_setting(hook, project, tmp_path):
    path = write(project, FAILING)
    payload = captured("posttooluse-write.json", file_path=str(path))
    code, answer, err = hook("post", payload, WEB_GATE="off")
    assert (code, answer) == (0, None) and "the cite-check gate is off (WEB_GATE=off)" in err
    shutil.copy(os.path.join(ROOT, "web.py"), tmp_path / "project" / "web.py")   # a project of its own
    shutil.copytree(os.path.join(ROOT, ".claude", "hooks"), tmp_path / "project" / ".claude" / "hooks")
    settings = tmp_path / "project" / ".claude" / "settings.local.json"
    settings.write_text(json.dumps({"env": {"WEB_GATE": "off"}}), encoding="utf-8")
    assert hook("post", payload, CLAUDE_PROJECT_DIR=str(tmp_path / "project"))[1:] == (
        None, "web.py: hook: the cite-check gate is off (WEB_GATE=off); nothing was checked\n")
    settings.write_text(json.dumps({"env": {"WEB_GATE": "on"}}), encoding="utf-8")
    assert hook("post", payload, CLAUDE_PROJECT_DIR=str(tmp_path / "project"))[1]["decision"] == "block"


# --- the same gate in this process (what mutation testing sees) ---------------------------------

@pytest.fixture
def gate(run, monkeypatch, tmp_path):
    """Run `web.py hook EVENT` in this process with a payload on stdin: (code, answer, stderr)."""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "project"))
    monkeypatch.delenv("WEB_GATE", raising=False)

    def gate_(event, payload):
        r = run("hook", event, stdin=payload if isinstance(payload, str) else json.dumps(payload))
        return r.code, (json.loads(r.out) if r.out.strip() else None), r.err
    return gate_


def test_in_process_post_and_stop_follow_the_same_rules(gate, project):
    path = write(project, FAILING)
    code, answer, err = gate("post", captured("posttooluse-write.json", file_path=str(path)))
    assert code == 0 and err == "" and answer["decision"] == "block"
    assert answer["reason"].splitlines()[1].endswith(":12: number 1,420 is not in web/reef.md")
    other = captured("posttooluse-write.json", file_path=str(project / "web" / "_picks-1.json"))
    assert gate("post", other) == (0, None, "")
    reasons = [gate("stop", captured("stop.json"))[1]["reason"] for _ in range(3)]
    assert [r.splitlines()[0][-15:] for r in reasons] == ["(block 1 of 3).", "(block 2 of 3).", "(block 3 of 3)."]
    assert reasons[2].splitlines()[-1].startswith("This is the last block")
    told = gate("stop", captured("stop.json"))[1]
    assert told["systemMessage"] == (f"{web.display_path(path)} still fails cite-check (2 errors) after 3 attempts to "
                                     f"fix it: its quotes and numbers are not verified. Run: python3 web.py cite-check "
                                     f"{web.display_path(path)}")
    assert gate("stop", captured("stop.json")) == (0, None, "")
    assert gate("stop", captured("stop.json", session_id="someone-else")) == (0, None, "")
    events = [(e["command"], e.get("event"), e.get("via")) for e in gate_events(project)]
    assert events == [("cite-check", None, "hook")] + [("gate", "block", None)] * 3 + [("gate", "released", None)]


def test_in_process_gate_trouble_is_one_line_and_never_a_block(gate, project, monkeypatch, tmp_path):
    assert gate("post", "not json")[1:] == (None, "web.py: hook: the cite-check gate did not run: JSONDecodeError: "
                                                  "Expecting value: line 1 column 1 (char 0)\n")
    assert gate("stop", {"hook_event_name": "Stop"})[1:] == (
        None, "web.py: hook: the cite-check gate did not run: ValueError: the hook input has no session_id\n")
    monkeypatch.setenv("WEB_MD_ROOT", str(tmp_path / "gone"))
    assert gate("stop", captured("stop.json"))[2].endswith("FileNotFoundError: no md root at " +
                                                           web.display_path(tmp_path / "gone") + "\n")
    monkeypatch.setenv("WEB_MD_ROOT", str(project.parent))
    monkeypatch.setenv("WEBTOOLS_HOST", "http://bad")   # a box setting the gate never uses does not stop it
    path = write(project, FAILING)
    gate("post", captured("posttooluse-write.json", file_path=str(path)))
    assert gate("stop", captured("stop.json"))[1]["decision"] == "block"


@pytest.mark.parametrize("value, off", [("off", True), ("OFF", True), ("0", True), ("false", True), ("no", True),
                                        ("on", False), ("", False), ("1", False)])
def test_which_values_turn_the_gate_off(monkeypatch, value, off):
    monkeypatch.setenv("WEB_GATE", value)
    assert web.gate_off() is off


@pytest.mark.parametrize("settings, off", [({"env": {"WEB_GATE": "off"}}, True), ({"env": {"WEB_GATE": "on"}}, False),
                                           ({"env": {"OTHER": "off"}}, False), ({"permissions": {}}, False),
                                           ([], False), ("{not json", False), (None, False)])
def test_the_gate_setting_is_read_from_settings_local_json(monkeypatch, tmp_path, settings, off):
    monkeypatch.delenv("WEB_GATE", raising=False)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    (tmp_path / ".claude").mkdir()
    if settings is not None:
        text = settings if isinstance(settings, str) else json.dumps(settings)
        (tmp_path / ".claude" / "settings.local.json").write_text(text, encoding="utf-8")
    assert web.gate_off() is off
    monkeypatch.setenv("WEB_GATE", "on")   # the environment wins over the file
    assert web.gate_off() is False


def test_a_synthesis_is_gated_only_inside_a_topic_under_the_md_root(md_root, tmp_path):
    cfg = web.Config({"WEB_MD_ROOT": str(md_root), "WEBTOOLS_HOST": "127.0.0.1"})
    inside = md_root / "t" / "x-synthesis.md"
    for path in (inside, md_root / "x-synthesis.md", tmp_path / "x-synthesis.md", md_root / "t" / "x-synthesis.txt"):
        path.write_text("x", encoding="utf-8")

    def gated(file_path, cwd=None):
        return web.synthesis_path({"tool_input": {"file_path": str(file_path)}, "cwd": cwd}, cfg)
    assert gated(inside) == str(inside.resolve())
    assert gated("t/x-synthesis.md", cwd=str(md_root)) == str(inside.resolve())
    assert gated(md_root / "x-synthesis.md") is None                 # not in a topic
    assert gated(tmp_path / "x-synthesis.md") is None                # not under the md root
    assert gated(md_root / "t" / "x-synthesis.txt") is None and gated(md_root / "t" / "gone-synthesis.md") is None
    assert web.synthesis_path({"tool_input": "x"}, cfg) is None and web.synthesis_path({}, cfg) is None
