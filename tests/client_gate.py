#!/usr/bin/env python3
"""The cite-check gate in the real Claude Code client, offline, with a scripted model.

Not a test (pytest does not collect it; it needs the client and Linux network namespaces):

    npm install @anthropic-ai/claude-code          # a development tool, not a requirement
    python3 tests/client_gate.py --claude node_modules/.bin/claude

It copies the project (its tracked files) to a temporary folder, saves two pages from the
stand-ins (one of them long), and runs `claude -p` against a scripted Anthropic API on 127.0.0.1.
The model writes a synthesis with an invented quote; the project's own .claude/settings.json hooks
must stop it, in a new conversation and in one resumed with `claude -c`, and never block a
checkpoint turn. The model also launches the page-reader subagent (.claude/agents/) on the long
page: it must run with its own three tools and the outline in its prompt, its note must be saved
and reach the main conversation; a whole Read of the long page and a reader in the background
must be refused. A synthesis that passes gets one request for the citation-auditor, which must run
with its own three tools and cite-check's facts in its prompt, its answer saved beside the synthesis.
Everything runs under `unshare --net` (root, or unprivileged user namespaces): the only network
there is loopback, so neither the client nor anything it starts can reach another address.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)

from standins import FirecrawlStandIn, SearxngStandIn, demo_box, page_body  # noqa: E402

TODAY = __import__("datetime").datetime.now(__import__("datetime").timezone.utc).strftime("%Y-%m-%d")
SYNTHESIS = f"md/demo/how-do-tide-pools-work-{TODAY}-synthesis.md"     # the run's, as init names it
SECOND = f"md/demo/how-do-tide-pools-work-{TODAY}-2-synthesis.md"      # a second run's, the same day
INVENTED, TRUE = "keep seawater all year round", "hold seawater when the tide goes out"
DRAFT = f"""# How do tide pools work

> goal: how do tide pools work
> topic: demo

## Summary

Tide pools are "rocky hollows that {INVENTED}" [1](web/example-org-tides.md).

## Findings

- The shore divides into "the splash zone, the high zone, the middle zone and the low zone" [1](web/example-org-tides.md).

## Sources

1. Understanding Tide Pools — https://example.org/tides — [web/example-org-tides.md](web/example-org-tides.md)
"""
WRITE = ("tool", "Write", {"file_path": SYNTHESIS, "content": DRAFT})  # paths relative to the project copy
FIX = ("tool", "Edit", {"file_path": SYNTHESIS, "old_string": INVENTED, "new_string": TRUE})
LONG = "md/demo/web/example-org-long-tides.md"
READER_LAUNCH = ("tool", "Agent", {"subagent_type": "page-reader", "description": "read [2]", "run_in_background": False,
                                   "prompt": f"Goal: how do tide pools work\nStill needed: zones\nPage: {LONG}"})
LONG_BODY = "Tide pools at length\n====================\n\n" + "".join(
    f"Part {k}\n-------\n\nThe pools of part {k} hold water between tides, and zone {k} is the subject of this "
    f"part of the page, written at some length for the reader. " * 4 + "\n\n" for k in range(1, 30))
NOTE = 'Contributes: zones.\nPassages:\n- L{line}: "The pools of part 1 hold water between tides"\nNumbers:\nnone'
PASSING = ("tool", "Write", {"file_path": SYNTHESIS, "content": DRAFT.replace(INVENTED, TRUE)})
AUDITOR_LAUNCH = ("tool", "Agent", {"subagent_type": "citation-auditor", "description": "audit", "run_in_background": False,
                                    "prompt": f"Synthesis: {SYNTHESIS}"})
SCENARIOS = {   # what the scripted model does, one step per request; what must happen
    "writes a passing synthesis, asked once for the audit": [
        PASSING, ("text", "Done."), AUDITOR_LAUNCH, ("text", "Audited: no problems."), ("text", "Done again.")],
    "reads a long page through page-reader": [
        ("tool", "Read", {"file_path": LONG}), ("tool", "Agent", dict(READER_LAUNCH[2], run_in_background=True)),
        READER_LAUNCH,
        ("text", "Checkpoint: 2 pages saved.")],
    "fixes after the PostToolUse block": [WRITE, FIX, ("text", "Fixed.")],
    "tries to stop, blocked, fixes": [WRITE, ("text", "Done."), FIX, ("text", "Fixed.")],
    "never fixes: 3 blocks, then the user is told": [WRITE] + [("text", f"Done ({i}).") for i in range(4)],
    "checkpoint turn beside an old failing synthesis": [("text", "Checkpoint: 1 page saved.")],
    "tries to stop after claude -c, blocked, fixes": [WRITE, ("text", "Done."), FIX, ("text", "Fixed.")],
    "an update run may not replace the earlier run's synthesis": [
        ("tool", "Write", {"file_path": SYNTHESIS, "content": "# Rewritten\n"}),
        ("tool", "Write", {"file_path": SECOND, "content": DRAFT.replace(INVENTED, TRUE)}),
        ("text", "Done."), ("text", "Done again.")],
}


class ScriptedModel(BaseHTTPRequestHandler):
    """Answers /v1/messages from a script (steps with tools; anything else gets "ok") and keeps
    the conversation the client sent with each scripted request."""
    protocol_version = "HTTP/1.1"
    script, seen, reader = [], [], []   # reader: the page-reader's requests (tools offered, first prompt)

    def log_message(self, *args):
        pass

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        step = ("text", "ok")
        if request.get("tools") and "You read one saved web page" in json.dumps(request.get("system")):
            step = self.reader_step(request)
        elif request.get("tools") and "You audit one research synthesis" in json.dumps(request.get("system")):
            self.reader.append(([t.get("name") for t in request["tools"]], json.dumps(request["messages"][0])))
            step = ("text", "Problems: 0")
        elif request.get("tools") and self.path.startswith("/v1/messages") and "count_tokens" not in self.path:
            step = self.script.pop(0) if self.script else ("text", "Nothing more.")
            self.seen.append(json.dumps(request["messages"], ensure_ascii=False))
        body = sse(step) if request.get("stream") else json.dumps({"input_tokens": 1}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if request.get("stream") else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


    def reader_step(self, request):
        """The page-reader: Read the page, then answer with a note whose passage is at its real line."""
        messages = json.dumps(request["messages"], ensure_ascii=False)
        self.reader.append(([t.get("name") for t in request["tools"]], json.dumps(request["messages"][0])))
        if "tool_result" not in messages:
            return ("tool", "Read", {"file_path": os.path.join(self.folder, LONG)})
        with open(os.path.join(self.folder, LONG), encoding="utf-8") as handle:
            line = next(i for i, text in enumerate(handle, 1) if "The pools of part 1 " in text)
        return ("text", NOTE.format(line=line))


def sse(step):
    """A streamed Messages API answer holding one text block or one tool call."""
    if step[0] == "tool":
        block = {"type": "tool_use", "id": f"toolu_{id(step)}", "name": step[1], "input": {}}
        delta, stop = {"type": "input_json_delta", "partial_json": json.dumps(step[2])}, "tool_use"
    else:
        block, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": step[1]}, "end_turn"
    message = {"id": "msg", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    events = [("message_start", {"message": message}),
              ("content_block_start", {"index": 0, "content_block": block}),
              ("content_block_delta", {"index": 0, "delta": delta}),
              ("content_block_stop", {"index": 0}),
              ("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 1}}),
              ("message_stop", {})]
    return "".join(f"event: {name}\ndata: {json.dumps(dict(type=name, **data))}\n\n" for name, data in events).encode()


def project_copy(folder):
    """The project's tracked files, and topic `demo` with page [1] saved from the stand-ins."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        os.makedirs(os.path.join(folder, os.path.dirname(name)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, name), os.path.join(folder, name))
    searx, fire = SearxngStandIn(), FirecrawlStandIn()
    demo_box(searx, fire)
    env = dict(os.environ, WEBTOOLS_HOST="127.0.0.1", SEARXNG_URL=searx.url, FIRECRAWL_URL=fire.url)
    web = [sys.executable, "web.py"]
    subprocess.run(web + ["init", "how do tide pools work", "--topic", "demo", "--max-sources", "2"],
                   cwd=folder, env=env, capture_output=True, check=True)
    fire.set_page("https://example.org/long-tides", page_body("https://example.org/long-tides", LONG_BODY,
                                                              title="Tide pools at length"))
    with open(os.path.join(folder, "md/demo/web/_picks-1.json"), "w", encoding="utf-8") as handle:
        json.dump([{"url": "https://example.org/tides", "relevance": "A field guide to tide pools"},
                   {"url": "https://example.org/long-tides", "relevance": "A long page on tide pools"}], handle)
    subprocess.run(web + ["scrape", "--topic", "demo", "--from", "md/demo/web/_picks-1.json", "--limit", "2"],
                   cwd=folder, env=env, capture_output=True, check=True)
    searx.close()
    fire.close()


def run_client(claude, folder, home, port, steps, resume=False):
    """Run `claude -p` (`claude -c -p` to resume the last conversation) once with the scripted model;
    (client's answer, the conversations it sent to the model)."""
    ScriptedModel.seen, ScriptedModel.reader, ScriptedModel.folder = [], [], folder
    ScriptedModel.script = [step[:2] + ({**step[2], "file_path": os.path.join(folder, step[2]["file_path"])},)
                            if step[0] == "tool" and "file_path" in step[2] else step for step in steps]
    env = dict(os.environ, HOME=home, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
               ANTHROPIC_API_KEY="sk-ant-offline", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
               WEBTOOLS_HOST="127.0.0.1")
    proc = subprocess.run([claude] + ["-c"] * resume + ["-p", "write the synthesis", "--output-format",
                                                        "stream-json", "--verbose"],
                          cwd=folder, env=env, capture_output=True, timeout=180)
    return proc.stdout.decode("utf-8", "replace"), ScriptedModel.seen


def verdicts(name, answer, seen, passes):
    """What must have happened in one scenario: (what, held) pairs. The conversation the client
    sent last holds every message the hooks added."""
    stops = sum(f"(block {k} of 3)" in seen[-1] for k in (1, 2, 3))
    if name.startswith("reads a long page"):
        return reader_verdicts(answer, seen)
    if name.startswith("writes a passing synthesis"):
        return auditor_verdicts(seen)
    if name.startswith("checkpoint"):
        return [("the turn ends at once, unblocked", len(seen) == 1 and "Stop hook" not in answer)]
    if name.startswith("an update run"):
        return update_verdicts(seen)
    checks = [("the model saw the PostToolUse block right after the Write",
               "PostToolUse:Write hook blocking error" in seen[1] and INVENTED in seen[1])]
    if name.startswith("fixes"):
        checks += [("no Stop block once fixed", stops == 0), ("the synthesis passes", passes)]
    elif name.startswith("tries"):
        checks += [("one Stop block", stops == 1), ("the synthesis passes", passes)]
        if "claude -c" in name:
            checks.append(("the checkpoint turn was in the conversation", "Checkpoint: 1 page saved" in seen[0]))
    else:
        checks += [("three Stop blocks", stops == 3), ("the synthesis still fails", not passes),
                   ("the user is told it is unverified", "still fails cite-check" in answer)]
    return checks


def reader_verdicts(answer, seen):
    """What must have happened when the model read the long page through page-reader."""
    tools = {tuple(names) for names, _ in ScriptedModel.reader}
    first_prompt = ScriptedModel.reader[0][1] if ScriptedModel.reader else ""
    note = os.path.join(ScriptedModel.folder, os.path.dirname(LONG), "notes", os.path.basename(LONG))
    saved = open(note, encoding="utf-8").read() if os.path.isfile(note) else ""
    return [("the main conversation's whole Read of the long page was refused",
             "is a long page" in seen[1] and "not read whole in the main conversation" in seen[1]),
            ("a reader in the background was refused", '\\"run_in_background\\": false' in seen[2] or
             "run_in_background" in seen[2]),
            ("the reader ran with exactly Read, Grep, Glob", tools == {("Read", "Grep", "Glob")}),
            ("the reader's prompt carried the page's outline", "The page's outline (web.py outline)" in first_prompt),
            ("the note was saved, its passage verbatim at its line", "checked: 1 of 1 passages verbatim" in saved),
            ("the note reached the main conversation", "The pools of part 1 hold water between tides" in seen[3])]


def update_verdicts(seen):
    """What must have happened when a second run's model tried to write over the first run's synthesis."""
    with open(os.path.join(ScriptedModel.folder, SYNTHESIS), encoding="utf-8") as handle:
        first = handle.read()
    second = os.path.join(ScriptedModel.folder, SECOND)
    return [("the model was told it is run 1's synthesis", "is run 1's synthesis and is kept as it was" in seen[1]),
            ("run 1's synthesis is as it was", first == ScriptedModel.first),
            ("this run's own synthesis was written", os.path.isfile(second) and "hold seawater" in open(second).read())]


def auditor_verdicts(seen):
    """What must have happened when a passing synthesis was written and the model ended its turn."""
    tools = {tuple(names) for names, _ in ScriptedModel.reader}
    prompt = ScriptedModel.reader[0][1] if ScriptedModel.reader else ""
    audit = os.path.join(ScriptedModel.folder, SYNTHESIS.replace("-synthesis.md", "-audit.md"))
    return [("the Stop hook asked for the audit", "has not been audited" in seen[2]),
            ("the auditor ran with exactly Read, Grep, Glob", tools == {("Read", "Grep", "Glob")}),
            ("the auditor's prompt carried what cite-check knows", "What cite-check knows" in prompt),
            ("its answer was saved beside the synthesis", os.path.isfile(audit)),
            ("the turn ended after the audit: asked once", len(seen) == 4)]


def check_all(claude):
    if [name for _, name in socket.if_nameindex()] != ["lo"]:
        sys.exit("client_gate: this namespace has a network besides loopback; not running the client")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    version = subprocess.run([claude, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version}, in a network namespace with loopback only")
    server = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    failed = 0
    for name, steps in SCENARIOS.items():
        with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as home:
            with open(os.path.join(home, ".claude.json"), "w", encoding="utf-8") as handle:   # trust accepted once
                json.dump({"hasCompletedOnboarding": True, "projects": {folder: {"hasTrustDialogAccepted": True}}},
                          handle)
            project_copy(folder)
            if name.startswith("checkpoint"):   # written in another conversation, failing
                with open(os.path.join(folder, SYNTHESIS), "w", encoding="utf-8") as handle:
                    handle.write(DRAFT)
            if name.startswith("an update run"):   # run 1 wrote its synthesis; run 2 has started
                ScriptedModel.first = DRAFT.replace(INVENTED, TRUE)
                with open(os.path.join(folder, SYNTHESIS), "w", encoding="utf-8") as handle:
                    handle.write(ScriptedModel.first)
                subprocess.run([sys.executable, "web.py", "init", "how do tide pools work", "--topic", "demo"],
                               cwd=folder, capture_output=True, check=True)
            port = server.server_address[1]
            resume = "claude -c" in name
            if resume:   # the checkpoint turn first, in its own process
                run_client(claude, folder, home, port, [("text", "Checkpoint: 1 page saved. Say go ahead.")])
            answer, seen = run_client(claude, folder, home, port, steps, resume)
            check = subprocess.run([sys.executable, "web.py", "cite-check", SYNTHESIS], cwd=folder,
                                   capture_output=True)
            for what, held in verdicts(name, answer, seen, check.returncode == 0):
                failed += not held
                print(f"{'ok  ' if held else 'FAIL'}  {name}: {what}")
    server.shutdown()
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", required=True, help="the Claude Code executable")
    args = parser.parse_args()
    claude = shutil.which(args.claude) or sys.exit(f"client_gate: no executable at {args.claude}")
    if os.environ.get("CLIENT_GATE_NETNS") != "1":   # re-run in a namespace whose only network is loopback
        try:
            return subprocess.run(["unshare", "--net", "--map-root-user", sys.executable, __file__, "--claude",
                                   os.path.abspath(claude)], env=dict(os.environ, CLIENT_GATE_NETNS="1")).returncode
        except FileNotFoundError:
            sys.exit("client_gate: needs unshare (util-linux) to cut the network to loopback")
    return check_all(claude)


if __name__ == "__main__":
    sys.exit(main())
