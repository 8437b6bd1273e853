"""The defaults the test set-up overrides, exercised with the overrides removed: the md root beside
web.py, the box's address, ports, timeouts, retries, workers and backoff, the options' defaults, and
the hook payloads Claude Code may send without their optional keys."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

import web
from conftest import GUARD, ROOT


def test_the_md_root_is_md_beside_web_py_when_unset(tmp_path):
    project = tmp_path / "project"
    (project / "md").mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "web.py"), project)
    env = {k: v for k, v in os.environ.items() if k != "WEB_MD_ROOT"}
    env.update(PYTHONPATH=GUARD, WEBTOOLS_HOST="127.0.0.1")
    proc = subprocess.run([sys.executable, "web.py", "init", "goal", "--topic", "demo", "--json"], cwd=project,
                          env=env, capture_output=True, text=True)
    answer = json.loads(proc.stdout)
    assert proc.returncode == 0 and (project / "md" / "demo" / "web").is_dir()
    assert answer["web_dir"] == "md/demo/web"                                   # shown from the project root
    proc = subprocess.run([sys.executable, str(project / "web.py"), "status", "--topic", "demo"], cwd=tmp_path,
                          env=env, capture_output=True, text=True)           # from another folder: the same root
    assert proc.returncode == 0 and proc.stdout.startswith("demo · run ")


def test_the_box_settings_default_to_the_webtools_box():
    cfg = web.Config({})
    assert (cfg.host, cfg.searxng, cfg.firecrawl) == ("10.10.20.37", "http://10.10.20.37:8080", "http://10.10.20.37:3002")
    assert (cfg.search_timeout, cfg.scrape_timeout, cfg.retries, cfg.workers, cfg.api_key) == (20.0, 60.0, 2, 4, "")
    assert all(source == "default" for source in cfg.sources.values())
    assert cfg.md_root == os.path.join(ROOT, "md")


def test_the_backoff_default_is_a_quarter_to_half_a_second_doubling(tmp_path):
    spec = importlib.util.spec_from_file_location("web_unpatched", os.path.join(ROOT, "web.py"))
    fresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh)   # the module as a user imports it, not the test set-up's fast retries
    delays = [fresh.backoff_delay(attempt, None) for attempt in (0, 1, 2) for _ in range(20)]
    assert all(0.25 <= d <= 0.5 for d in delays[:20]) and all(0.5 <= d <= 1.0 for d in delays[20:40])
    assert all(1.0 <= d <= 2.0 for d in delays[40:]) and fresh.backoff_delay(5, 99.0) == 30.0


def test_without_web_retries_a_failing_box_gets_three_attempts(run, searx, monkeypatch):
    from standins import Reply
    monkeypatch.delenv("WEB_RETRIES")
    searx.fail_next(*[Reply(503, "busy", content_type="text/plain")] * 3)
    r = run("search", "q", "--max", "1")
    assert r.code == web.EXIT_UNREACHABLE and "answered HTTP 503 (3 attempts)" in r.err and len(searx.requests) == 3


def test_without_web_workers_four_queries_are_in_flight_at_once(run, searx, monkeypatch):
    from standins import make_hit
    monkeypatch.delenv("WEB_WORKERS", raising=False)
    for i in range(6):
        searx.set_results(f"q{i}", [make_hit(f"https://a.org/{i}")])
    four = searx.open_gate_when(lambda server: server.in_flight == 4)     # answers wait until 4 are asked
    assert run("search", *[f"q{i}" for i in range(6)]).code == 0
    assert four["met"] and searx.max_in_flight == 4


def test_firecrawl_is_asked_to_give_up_a_little_before_the_default_scrape_timeout(run, fire, monkeypatch):
    monkeypatch.delenv("WEB_TIMEOUT", raising=False)
    fire.set_articles("https://a.org/1")
    run("scrape", "https://a.org/1")
    assert json.loads(fire.requests[0]["raw"])["timeout"] == 55000          # 60 s, less 5 s for the answer


@pytest.mark.parametrize("argv, field, value", [
    (["init", "goal", "--topic", "t", "--json"], "options", {"max_sources": 12, "deep": False, "max_rounds": 1,
                                                            "with_corpus": False}),
    (["init", "goal", "--topic", "t", "--deep", "--json"], "options", {"max_sources": 12, "deep": True,
                                                                      "max_rounds": 3, "with_corpus": False}),
    (["init", "goal", "--topic", "t", "--json"], "limit", 12),
    (["init", "goal", "--topic", "t", "--deep", "--json"], "limit", 6)])
def test_inits_defaults(run, argv, field, value):
    assert run(*argv).json[field] == value


def test_search_keeps_ten_hits_a_query_by_default(run, searx):
    from standins import make_hit
    searx.set_results("q", [make_hit(f"https://a.org/{i}") for i in range(15)])
    assert len(run("search", "q", "--json").json["results"]) == 10


def test_doctor_test_scrapes_example_com_by_default(run, doctor_box):
    run("doctor")
    assert doctor_box[1].scraped_urls() == ["https://example.com"]


# --- hook payloads without their optional keys ---------------------------------------------------------------

def hook(run, event, payload):
    r = run("hook", event, stdin=json.dumps(payload))
    assert r.code == 0
    return (json.loads(r.out) if r.out.strip() else None), r.err


def test_a_reader_launched_without_run_in_background_is_refused_as_a_background_one(run, fire, md_root):
    fire.set_articles("https://a.org/1")
    run("scrape", "https://a.org/1", "--topic", "t")
    payload = {"session_id": "s", "cwd": str(md_root.parent), "hook_event_name": "PreToolUse", "tool_name": "Agent",
               "tool_input": {"subagent_type": "page-reader", "prompt": f"Page: {md_root}/t/web/a-org-1.md"}}
    answer = hook(run, "pre", payload)[0]["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and '"run_in_background": false' in answer["permissionDecisionReason"]


def test_a_payload_without_cwd_resolves_paths_from_the_current_folder(run, md_root, monkeypatch):
    (md_root / "t" / "x-synthesis.md").write_text("# X\n\nNothing cited here.\n", encoding="utf-8")
    monkeypatch.chdir(md_root.parent)
    payload = {"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Write",
               "tool_input": {"file_path": "md/t/x-synthesis.md"}}
    answer = hook(run, "post", payload)[0]
    assert answer["decision"] == "block" and "md/t/x-synthesis.md" in answer["reason"]


def test_an_agent_result_without_content_saves_nothing_and_says_nothing(run, fire, md_root):
    fire.set_articles("https://a.org/1")
    run("scrape", "https://a.org/1", "--topic", "t")
    payload = {"session_id": "s", "cwd": str(md_root.parent), "hook_event_name": "PostToolUse", "tool_name": "Agent",
               "tool_input": {"subagent_type": "page-reader", "prompt": f"Page: {md_root}/t/web/a-org-1.md"}}
    assert hook(run, "post", payload) == (None, "")
    assert not (md_root / "t" / "web" / "notes").exists()
