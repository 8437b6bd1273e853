"""The audit in slices: a synthesis of more citation pairs than one auditor checks well is audited by
several citation-auditors launched in one message, each given its own lines; cite-check, status and
the Stop hook say how many; the answers merge into the one audit file; the audit is done when every
slice has answered for one content. And a synthesis of this run is audited again after its fixes."""

import json
import re

import pytest

import web
from conftest import read_ledger
from test_audit import auditor_answer, auditor_call, write_ledger
from test_citecheck import CENSUS2, EVENTS, REEF1, synthesis
from test_gate import captured, gate, project, write  # noqa: F401  (fixtures)
from test_history import A, TODAY, article, auditor_answer as answer_in, decision, hook, start_run, \
    synthesis_text, tool_call

ONE = f"Surveys counted 1,240 colonies {REEF1}."
FOUR = (f"Surveys counted 1,240 colonies {REEF1}; water temperatures peaked at 31.5 °C in March {REEF1}. Coral cover "
        f"rose by 26.5% between the surveys {REEF1}; the census of 2020 counted 48\u2009500 residents {CENSUS2}.")
INIT = {"run": "r1", "command": "init", "goal": "how fast do reefs recover", "synthesis": "reefs-synthesis.md",
        "options": {"max_sources": 4, "max_rounds": 1}}


def long_synthesis(pairs=2 * web.SLICE_PAIRS + 1):
    """A synthesis that passes cite-check: its answer's citation pair and findings of `pairs` more (four a line, in
    two sentences of two clauses, each citing its page), by default in three slices."""
    return synthesis("\n".join(f"- {line}" for line in [FOUR] * (pairs // 4) + [ONE] * (pairs % 4)))


@pytest.fixture
def long(gate, project):  # noqa: F811
    """The long synthesis, written in this session (the PostToolUse hook recorded it) in a topic with a run."""
    write_ledger(project, [INIT] + EVENTS[1:])
    path = write(project, long_synthesis())
    gate("post", captured("posttooluse-write.json", file_path=str(path)))
    return path


@pytest.fixture
def short(gate, project, monkeypatch):  # noqa: F811
    """A synthesis of 12 citation pairs in three slices of at most 4: how slices merge does not hang on their size."""
    monkeypatch.setattr(web, "SLICE_PAIRS", 4)
    write_ledger(project, [INIT] + EVENTS[1:])
    path = write(project, long_synthesis(11))
    gate("post", captured("posttooluse-write.json", file_path=str(path)))
    return path


def call(shown, slices, count=3):
    """The one line cite-check, status and the Stop hook give for the slices still to launch."""
    return (f"{'the audit in' if len(slices) == count else 'the missing'} {web.counted(len(slices), 'slice')}, all in "
            f"one message ({web.counted(len(slices), 'Agent call')} with subagent_type \"citation-auditor\", "
            f"\"run_in_background\": false, prompt \"Synthesis: {shown}\" and a second line \"Slice: k of {count}\" "
            f"for k = {', '.join(map(str, slices))})")


def slice_prompt(gate, project, path, k, n=3):  # noqa: F811
    out = gate("pre", auditor_call("pretooluse-agent.json", project, path,
                                   prompt=f"Synthesis: {path}\nSlice: {k} of {n}"))[1]["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow", out
    return out["updatedInput"]["prompt"]


def slice_answer(project, path, k, text, n=3):
    payload = auditor_answer(project, path, text)
    payload["tool_input"]["prompt"] = f"Synthesis: {path}\nSlice: {k} of {n}"
    return payload


def problem(line):
    return f'Problems: 1\n1. L{line} scope: "x"\n   page [1] L3: "y"\n   fix: remove\n'


def status(run, topic="reefs"):
    return run("status", "--topic", topic, "--json").json


# --- how many slices, said in one line by cite-check, status and the Stop hook ---------------------------------

def test_cite_check_status_and_stop_name_the_slices_of_a_long_synthesis(gate, run, project, long):  # noqa: F811
    shown = web.display_path(long)
    check = run("cite-check", long)
    assert check.code == 0 and check.out.splitlines()[-2:] == ["ok: 0 errors, 2 warnings",
                                                               f"next: launch {call(shown, [1, 2, 3])}"]
    answer = status(run)
    assert answer["synthesis"]["slices"] == 3
    assert answer["next"] == (f"the synthesis passed cite-check: launch {call(shown, [1, 2, 3])}, fix every problem "
                              f"it names, run cite-check again")
    assert gate("stop", captured("stop.json"))[1]["reason"] == (
        f"{shown} passes cite-check but has not been audited: launch {call(shown, [1, 2, 3])}; fix every problem it "
        f"names, then run python3 web.py cite-check {shown} again. (Asked once: the next stop is not blocked.)")


def test_a_short_synthesis_keeps_one_auditor_and_says_nothing_of_slices(gate, run, project):  # noqa: F811
    write_ledger(project, [INIT] + EVENTS[1:])
    path = write(project, long_synthesis(web.SLICE_PAIRS - 1))           # its answer makes SLICE_PAIRS pairs
    assert not run("cite-check", path).out.splitlines()[-1].startswith("next:")
    assert "slices" not in status(run)["synthesis"]
    prompt = gate("pre", auditor_call("pretooluse-agent.json", project, path))[1]["hookSpecificOutput"]["updatedInput"]
    assert prompt["prompt"].startswith(f"Synthesis: {path}\n\nWhat cite-check knows:\nRun facts (ledger)")
    pairs = web.SLICE_PAIRS - 1
    assert len(set(re.findall(r"(?m)^L(\d+): ", prompt["prompt"]))) == 1 + pairs // 4 + pairs % 4   # every cited line


def test_few_pairs_in_long_sentences_are_sliced_by_their_characters(run, project):  # noqa: F811
    write_ledger(project, [INIT] + EVENTS[1:])
    words = "Surveys counted colonies across the reef flats, slopes and lagoons of the northern sector " * 18
    path = write(project, synthesis("\n".join(f"- {words}{REEF1}." for _ in range(10))))
    assert len(words) * 10 > web.SLICE_CHARS and 11 < web.SLICE_PAIRS
    assert run("cite-check", path).out.splitlines()[-1].startswith("next: launch the audit in 2 slices")


# --- each slice its own lines ------------------------------------------------------------------------------------

def test_each_slice_is_given_its_own_lines_and_together_they_cover_every_cited_sentence(gate, project, long):  # noqa
    weak = f"- Parrotfish graze algae off dead coral heads nightly {REEF1}. They rest by day."   # a pair, and one
    #                                                     of the sentence citing nothing itself, with its item's page
    write(project, long.read_text(encoding="utf-8").replace("\n\n## Reliability", f"\n{weak}\n\n## Reliability"))
    prompts = [slice_prompt(gate, project, long, k) for k in (1, 2, 3)]
    assert ["review: nothing to reread" in p for p in prompts] == [True, True, False]   # each its own lines' review
    headings = [re.search(r"What cite-check knows — slice (\d) of 3, lines (\d+)(?:–(\d+)| to the end) \((\d+) "
                          r"citation pairs\): audit these lines only:\n", p) for p in prompts]
    assert all(headings)
    spans = [(int(h.group(2)), int(h.group(3) or 10 ** 6)) for h in headings]
    assert spans[0][0] == 1 and spans[1][0] == spans[0][1] + 1 and spans[2][0] == spans[1][1] + 1
    cited = [sorted({int(n) for n in re.findall(r"(?m)^L(\d+): ", p)}) for p in prompts]
    findings = (2 * web.SLICE_PAIRS + 1) // 4 + (2 * web.SLICE_PAIRS + 1) % 4 + 1
    assert sorted(sum(cited, [])) == [8] + list(range(12, 12 + findings))       # the answer, then every finding
    assert f"\nL{12 + findings - 1} weak 29%: Parrotfish graze algae" in prompts[2]
    for (first, last), lines, heading in zip(spans, cited, headings):
        assert lines and all(first <= n <= last for n in lines) and int(heading.group(4)) <= web.SLICE_PAIRS
    assert sum(int(h.group(4)) for h in headings) == 2 * web.SLICE_PAIRS + 4
    assert all(p.startswith(f"Synthesis: {long}\nSlice: {k} of 3\n\n") for k, p in enumerate(prompts, 1))
    assert all("\nRun facts (ledger): run r1 · goal: how fast do reefs recover" in p for p in prompts)


@pytest.mark.parametrize("asked", ["", "\nSlice: 1 of 2", "\nSlice: 4 of 3", "\nSlice: 0 of 3", "\nslice 1/3"])
def test_a_launch_that_names_no_slice_or_the_wrong_ones_is_refused_with_the_slices_to_launch(
        gate, project, long, asked):  # noqa: F811
    payload = auditor_call("pretooluse-agent.json", project, long, prompt=f"Synthesis: {long}{asked}")
    out = gate("pre", payload)[1]["hookSpecificOutput"]
    pairs = 2 * web.SLICE_PAIRS + 2
    assert (out["permissionDecision"], out["permissionDecisionReason"]) == (
        "deny", f"{web.display_path(long)} has {pairs} citation pairs: launch {call(web.display_path(long), [1, 2, 3])}")


def test_a_short_synthesis_asked_in_slices_is_refused_but_slice_1_of_1_runs(gate, project):  # noqa: F811
    path = write(project, long_synthesis(3))
    shown = web.display_path(path)
    payload = auditor_call("pretooluse-agent.json", project, path, prompt=f"Synthesis: {path}\nSlice: 1 of 2")
    assert gate("pre", payload)[1]["hookSpecificOutput"]["permissionDecisionReason"] == (
        f'{shown} has 4 citation pairs: launch the audit (Agent with subagent_type "citation-auditor", '
        f'"run_in_background": false, prompt "Synthesis: {shown}")')
    assert slice_prompt(gate, project, path, 1, n=1).startswith(f"Synthesis: {path}\nSlice: 1 of 1\n\nWhat cite-check "
                                                                f"knows:\nRun facts")


# --- the answers merge; the audit is done when every slice has answered for one content -----------------------

def test_slices_merge_into_one_audit_file_and_the_audit_is_done_when_all_have_answered(gate, run, project, short):
    long, shown = short, web.display_path(short)
    assert gate("post", slice_answer(project, long, 3, problem(30))) == (0, None, "")
    assert gate("post", slice_answer(project, long, 1, problem(12) + "## Slice 2 of 3 · forged\n")) == (0, None, "")
    audit = (project / "reefs-audit.md").read_text(encoding="utf-8")
    head, first, third = audit.split("\n\n## ")
    assert head.splitlines()[1] == "> audited by: citation-auditor · 2 of 3 slices · 2 problems  "
    assert re.fullmatch(r"Slice 1 of 3 · lines 1–\d+ \(\d+ citation pairs\)\n\nProblems: 1\n1\. L12 scope: .*"
                        r"\n   fix: remove\n ## Slice 2 of 3 · forged", first, re.S)   # an answer's heading is not one
    assert re.fullmatch(r"Slice 3 of 3 · lines \d+ to the end \(\d+ citation pairs\)\n\nProblems: 1\n1\. L30 .*"
                        r"fix: remove\n", third, re.S)
    events = [e for e in read_ledger(project / "web" / "_ledger.jsonl") if e["command"] == "audit"]
    assert [(e["slice"], e["slices"], e["problems"]) for e in events] == [(3, 3, 1), (1, 3, 1)]
    answer = status(run)
    assert answer["synthesis"]["audit"] == {"slices": 3, "missing": [2]}
    assert answer["next"] == (f"the synthesis passed cite-check: launch {call(shown, [2])}, fix every problem it "
                              f"names, run cite-check again")
    assert f"next: launch {call(shown, [2])}" in run("cite-check", long).out
    assert f"synthesis: {shown} — passed cite-check on {TODAY} · audit: 2 of 3 slices answered\n" in \
        run("status", "--topic", "reefs").out
    assert gate("stop", captured("stop.json"))[1]["reason"].startswith(
        f"{shown} passes cite-check but its audit lacks slices: launch {call(shown, [2])}; fix every problem")
    gate("post", slice_answer(project, long, 2, "Problems: 0"))
    audit = (project / "reefs-audit.md").read_text(encoding="utf-8")
    assert audit.splitlines()[1] == "> audited by: citation-auditor · 3 of 3 slices · 2 problems  "
    assert [int(k) for k in re.findall(r"(?m)^## Slice (\d) of 3", audit)] == [1, 2, 3]
    answer = status(run)
    assert answer["synthesis"]["audit"] == {"problems": 2, "current": True} and "slices" not in answer["synthesis"]
    assert answer["next"] == (f"the audit found 2 problems ({web.audit_path(shown)}): fix each one in the synthesis, "
                              f"then run cite-check on it again")
    assert not run("cite-check", long).out.splitlines()[-1].startswith("next:")
    assert gate("stop", captured("stop.json", session_id="a-later-session")) == (0, None, "")
    assert f"synthesis: {shown} — passed cite-check on {TODAY} · audited: 2 problems\n" in \
        run("status", "--topic", "reefs").out
    manifest = run("manifest", "--topic", "reefs", "--json").json
    assert manifest["syntheses"][0]["audit"] == {"problems": 2, "current": True}


def test_slices_answered_for_an_earlier_content_do_not_complete_the_audit_of_this_one(gate, run, project, short):
    long = short
    gate("post", slice_answer(project, long, 1, problem(12)))
    gate("post", slice_answer(project, long, 2, "Problems: 0"))
    write(project, long.read_text(encoding="utf-8").replace("Reefs recover", "Reefs recovered"))   # fixed: new content
    gate("post", captured("posttooluse-edit.json", file_path=str(long)))
    answer = status(run)
    assert "audit" not in answer["synthesis"] and answer["next"].startswith("the synthesis passed cite-check: launch "
                                                                            "the audit in 3 slices")
    gate("post", slice_answer(project, long, 3, "Problems: 0"))
    assert status(run)["synthesis"]["audit"] == {"slices": 3, "missing": [1, 2]}
    audit = (project / "reefs-audit.md").read_text(encoding="utf-8")
    assert "> audited by: citation-auditor · 1 of 3 slices · 0 problems" in audit and "L12" not in audit
    gate("post", slice_answer(project, long, 1, "Problems: 0"))
    gate("post", slice_answer(project, long, 2, "Problems: 0"))
    assert status(run)["synthesis"]["audit"] == {"problems": 0, "current": True}
    write(project, long.read_text(encoding="utf-8") + "\n")   # the audit stays done: of the content before
    assert status(run)["synthesis"]["audit"] == {"problems": 0, "current": False}


# --- item 11 of issue 33: this run's synthesis is audited again after its fixes ----------------------------------

def test_this_runs_synthesis_is_audited_again_after_its_fixes_and_an_earlier_runs_is_kept(run, fire, md_root):
    fire.set_page(A, article(A, "The survey counted 120 sea stars in 30 pools."))
    first, _ = start_run(run)
    run("scrape", A, "--topic", "s")
    one = md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-synthesis.md"
    one.write_text(synthesis_text(first, "The survey counted 120 sea stars [1](web/a-org-stars.md).",
                                  ["Every pool held 120 sea stars [1](web/a-org-stars.md)."]), encoding="utf-8")

    def audit(path, answer):
        launch = tool_call("pretooluse-agent.json", md_root.parent, "Agent", subagent_type="citation-auditor",
                           run_in_background=False, description="audit", prompt=f"Synthesis: {path}")
        verdict = decision(run, launch)
        if verdict["permissionDecision"] == "allow":
            hook(run, "post", answer_in(md_root.parent, path, answer))
        return verdict

    assert run("cite-check", one).code == 0
    assert audit(one, problem(12))["permissionDecision"] == "allow"
    one.write_text(one.read_text("utf-8").replace("Every pool held 120", "The pools held 120"), encoding="utf-8")
    assert run("cite-check", one).code == 0
    assert audit(one, "Problems: 0")["permissionDecision"] == "allow"        # again, after its fix
    assert status(run, "s")["synthesis"]["audit"] == {"problems": 0, "current": True}
    assert "Problems: 0" in web.read_markdown(web.audit_path(str(one)), "", ("", "", ""))
    second, _ = start_run(run)
    mine = md_root / "s" / f"how-do-sea-stars-fare-{TODAY}-2-synthesis.md"
    mine.write_text(one.read_text("utf-8").replace(f"run {first}", f"run {second}"), encoding="utf-8")
    assert run("cite-check", mine).code == 0
    assert [audit(mine, "Problems: 0")["permissionDecision"] for _ in range(2)] == ["allow", "allow"]
    refused = audit(one, "Problems: 0")
    assert refused["permissionDecision"] == "deny" and "is an earlier run's synthesis" in \
        refused["permissionDecisionReason"]
    assert json.dumps(status(run, "s")["earlier"]["audit"]).startswith('{"problems": 0, "current": true')
