"""web.py as a user runs it: its own process, exit codes, one-line errors, doctor, config."""

import json
import os
import subprocess
import sys

import pytest
from standins import Reply, make_hit

import web
from conftest import ROOT


def test_version_and_help(cli, run):
    r = cli("--version")
    assert r.code == 0 and r.out == f"web.py {web.VERSION}\n"
    for command in web.COMMANDS:   # each command's help, as main prints it (a process each would take seconds)
        r = run(command, "-h")
        assert r.code == 0 and r.out.startswith(f"usage: web.py {command}")


def test_version_and_help_do_not_import_the_http_stack():
    code = ("import sys, runpy; before = set(sys.modules); sys.argv = ['web.py'] + sys.argv[1:]\n"
            "try:\n    runpy.run_path(%r, run_name='__main__')\nexcept SystemExit: pass\n"
            "print(sorted(m for m in set(sys.modules) - before\n"
            "             if m.split('.')[0] in ('urllib', 'http', 'json', 'ssl', 'socket', 'concurrent')))")
    for argv in (["--version"], ["search", "-h"]):
        out = subprocess.run([sys.executable, "-c", code % os.path.join(ROOT, "web.py"), *argv],
                             capture_output=True, text=True).stdout
        assert out.strip().splitlines()[-1] == "[]", out


@pytest.mark.parametrize("argv, env, code, text", [
    (["search"], {}, 2, "the following arguments are required: QUERY"),
    (["search", "q", "--max", "0"], {}, 2, "--max 0 is out of range"),
    (["search", "q", "--time-range", "decade"], {}, 2, "invalid choice"),
    (["search", "q", "--workers", "0"], {}, 2, "--workers 0 is out of range"),
    (["bogus"], {}, 2, "invalid choice"),
    (["search", "q"], {"SEARXNG_PORT": "abc"}, 2, "SEARXNG_PORT='abc' is not valid"),
    (["search", "q"], {"FIRECRAWL_PORT": "70000"}, 2, "FIRECRAWL_PORT='70000' is not valid"),
    (["search", "q"], {"WEB_TIMEOUT": "-1"}, 2, "WEB_TIMEOUT='-1' is not valid"),
    (["search", "q"], {"WEBTOOLS_HOST": "http://box"}, 2, "WEBTOOLS_HOST='http://box' is not valid"),
    (["search", "q"], {"SEARXNG_URL": "box:8080"}, 2, "SEARXNG_URL='box:8080' is not valid"),
])
def test_bad_input_is_one_line_and_exit_2(cli, argv, env, code, text):
    r = cli(*argv, env=env)
    assert r.code == code and text in r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err and r.out == ""


def test_json_mode_prints_valid_json_even_on_config_errors(run, monkeypatch):
    monkeypatch.setenv("SEARXNG_PORT", "abc")
    r = run("search", "q", "--json")
    assert r.code == 2 and json.loads(r.out) == {
        "schema": "web.search/2", "ok": False, "errors": [{"service": "config", "code": 2, "error": (
            "config: SEARXNG_PORT='abc' is not valid — set a port number from 1 to 65535")}]}


def test_cite_check_usage_errors_keep_cite_checks_error_shape(run, tmp_path):
    r = run("cite-check", tmp_path / "missing-synthesis.md", "--json")
    answer = json.loads(r.out)
    assert r.code == 2 and answer["schema"] == "web.cite-check/4" and answer["ok"] is False
    assert answer["errors"] == [{"line": 0, "kind": "usage", "message": answer["errors"][0]["message"]}]
    assert answer["errors"][0]["message"].startswith("usage: cannot read ") and r.err == f"web.py: {answer['errors'][0]['message']}\n"


@pytest.mark.parametrize("command", sorted(web.COMMANDS))
def test_every_command_and_argument_has_help(command):
    sub = web.build_parser()._subparsers._group_actions[0].choices[command]
    for action in sub._actions:
        if action.dest != "help":
            assert action.help and len(action.help) > 10, (command, action.dest)
        if action.default not in (None, False) and action.dest != "help":
            assert "%(default)s" in action.help or str(action.default) in action.help, (command, action.dest)


def test_top_level_help_lists_every_variable_and_exit_code(cli):
    out = cli("-h").out
    for name, default, _ in web.ENVIRONMENT:
        assert f"  {name} " in out and f"(default: {default})" in out
    for code, _ in web.EXIT_CODES:
        assert f"\n  {code} " in out
    assert "10.10.20.37" in out


@pytest.mark.parametrize("argv, low, high", [
    (["search", "q", "--max"], 1, 100), (["search", "q", "--workers"], 1, 64), (["scrape", "--topic", "t", "--limit"], 1, 1000),
    (["init", "g", "--topic", "t", "--max-sources"], 1, 100), (["init", "g", "--topic", "t", "--deep", "--max-rounds"], 1, 10),
])
def test_both_sides_of_every_range(run, argv, low, high):
    for value in (low - 1, high + 1):
        r = run(*argv, value)
        assert r.code == 2 and r.err == f"web.py: usage: {argv[-1]} {value} is out of range — use {low} to {high}\n"
    parser = web.build_parser()
    for value in (low, high):
        args = parser.parse_args(argv + [str(value)])
        assert getattr(args, argv[-1].lstrip("-").replace("-", "_")) == value


def test_every_exit_code_from_a_real_process(cli, searx, fire, tmp_path):
    env = {"SEARXNG_URL": searx.url, "FIRECRAWL_URL": fire.url, "WEB_RETRIES": "0"}
    assert cli("search", "hello", env=env).code == 0
    fire.set_page("https://x.org/404", Reply(200, json.load(open(os.path.join(
        ROOT, "tests", "fixtures", "firecrawl", "notfound.json")))["response"]["body"]))
    assert cli("scrape", "https://x.org/404", env=env).code == 1
    assert cli("scrape", "--from", tmp_path / "missing.json", "--topic", "t", env=env).code == 2
    searx.json_enabled = False
    assert cli("search", "hello", env=env).code == 3
    assert cli("search", "hello", env=dict(env, SEARXNG_URL="http://127.0.0.1:9")).code == 4
    fire.fail_next(Reply(200, "not json at all", content_type="text/plain"))
    assert cli("scrape", "https://x.org/a", env=env).code == 5


@pytest.mark.parametrize("argv", [["--version"], ["-h"], ["search", "q", "--json"], ["search", "q"]])
def test_output_into_a_closed_pipe_ends_quietly(searx, argv):
    """`web.py … | head -1`: the reader is gone before web.py writes; exit 0, nothing on stderr."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "web.py"), *argv], stdout=write,
                              stderr=subprocess.PIPE, timeout=30)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr) == (0, b"")


# --- doctor -------------------------------------------------------------------

def test_doctor_passes_against_working_stand_ins(run, searx, fire, doctor_box, monkeypatch):
    monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-key")
    r = run("doctor", "--json")
    assert r.code == 0, r
    report = r.json
    assert report["schema"] == "web.doctor/1" and report["ok"] is True
    assert [c["name"] for c in report["checks"]] == ["proxy", "searxng", "firecrawl", "md-root"]
    assert report["config"]["SEARXNG_URL"] == {"value": searx.url, "source": "environment"}
    assert report["config"]["WEB_WORKERS"] == {"value": 4, "source": "default"}
    assert report["config"]["FIRECRAWL_API_KEY"]["value"] == "***"
    searxng = report["checks"][1]["detail"]
    assert "json enabled" in searxng and "localjson-a" in searxng
    assert fire.scraped_urls() == ["https://example.com"]            # a real test scrape, never resolved here
    human = run("doctor")
    assert human.code == 0 and "ok   firecrawl" in human.out and "WEB_TIMEOUT" in human.out


def test_doctor_fails_when_json_is_disabled(run, searx, fire):
    searx.json_enabled = False
    r = run("doctor")
    assert r.code == web.EXIT_CONFIG
    assert "FAIL searxng" in r.out and "enable json under search.formats" in r.out


def test_doctor_fails_when_firecrawl_is_down_or_its_worker_is_dead(run, searx, fire, monkeypatch):
    fire.set_page("https://example.com", Reply(408, {"success": False, "code": "SCRAPE_TIMEOUT",
                                                     "error": "Scrape timed out"}))
    r = run("doctor", "--json")
    assert r.code == web.EXIT_UNREACHABLE
    check = r.json["checks"][2]
    assert check["ok"] is False and "queue worker" in check["fix"]
    monkeypatch.setenv("FIRECRAWL_URL", "http://127.0.0.1:9")
    assert run("doctor").code == web.EXIT_UNREACHABLE


@pytest.mark.parametrize("answer, code, fix", [
    (Reply(500, {"success": False, "code": "SCRAPE_ALL_ENGINES_FAILED", "error": "All scraping engines failed"}),
     web.EXIT_UNREACHABLE, "can the box reach the internet? the default test page needs it; try --scrape-url"),
    (Reply(200, json.load(open(os.path.join(ROOT, "tests", "fixtures", "firecrawl", "notfound.json")))["response"]["body"]),
     web.EXIT_PARTIAL, "Firecrawl works, but the test page failed: try --scrape-url with another page"),
])
def test_doctor_tells_a_page_verdict_from_a_dead_worker(run, searx, fire, answer, code, fix):
    fire.set_page("https://example.com", answer)
    r = run("doctor", "--json")
    check = r.json["checks"][2]
    assert r.code == code and check["ok"] is False and fix in check["fix"] and "queue worker" not in check["fix"]


def test_doctor_fails_on_a_refused_key(run, searx, fire, monkeypatch):
    fire.require_key = "right"
    monkeypatch.setenv("FIRECRAWL_API_KEY", "wrong")
    r = run("doctor")
    assert r.code == web.EXIT_CONFIG and "refused FIRECRAWL_API_KEY" in r.out


def test_doctor_fails_when_searxng_is_unreachable(run, fire):
    fire.set_articles("https://example.com")
    r = run("doctor")
    assert r.code == web.EXIT_UNREACHABLE and "ok   firecrawl" in r.out
    assert "FAIL searxng    nothing answers at 127.0.0.1:9 (refused the connection) — is WEBTOOLS_HOST/SEARXNG_PORT " \
           "right, and the service up there?" in r.out.splitlines()   # the settings in effect: host and port


def test_a_doctor_check_is_one_attempt(run, searx, fire):
    searx.fail_next(Reply(502, "bad gateway", content_type="text/plain"), Reply(502, "bad gateway"))
    check = run("doctor", "--json").json["checks"][1]
    assert check["ok"] is False and check["detail"].endswith("answered HTTP 502 (1 attempt)")
    assert len(searx.requests) == 1                           # not retried


def test_doctor_names_where_a_url_built_from_host_and_port_came_from(run, searx, fire, monkeypatch):
    monkeypatch.delenv("SEARXNG_URL")
    monkeypatch.setenv("SEARXNG_PORT", searx.url.rsplit(":", 1)[1])
    config = run("doctor", "--json").json["config"]
    assert config["SEARXNG_URL"] == {"value": searx.url, "source": "WEBTOOLS_HOST + SEARXNG_PORT from the environment"}
    assert config["WEBTOOLS_HOST"] == {"value": "127.0.0.1", "source": "environment"}


def test_doctor_fails_when_a_proxy_would_intercept(run, doctor_box, monkeypatch):
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    r = run("doctor", "--json")
    assert r.code == web.EXIT_CONFIG and r.json["checks"][0]["ok"] is False
    assert "NO_PROXY" in r.json["checks"][0]["fix"]
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    assert run("doctor").code == 0


def test_doctor_fails_when_the_md_root_is_not_writable(run, doctor_box, monkeypatch, tmp_path):
    if os.geteuid() == 0:
        monkeypatch.setenv("WEB_MD_ROOT", "/sys/web-py-doctor")
    else:
        (tmp_path / "ro").mkdir(mode=0o555)
        monkeypatch.setenv("WEB_MD_ROOT", str(tmp_path / "ro"))
    r = run("doctor")
    assert r.code == web.EXIT_CONFIG and "FAIL md-root" in r.out


@pytest.mark.skipif(os.environ.get("WEB_LIVE") != "1", reason="live test against the real box: set WEB_LIVE=1")
def test_live_box_smoke():
    """Against the real webtools box (never run in CI)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SEARXNG_URL", "FIRECRAWL_URL")}
    env["WEBTOOLS_HOST"] = os.environ.get("WEB_LIVE_HOST", web.DEFAULT_HOST)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "web.py"), "doctor"], capture_output=True, env=env)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()


def test_doctor_prints_every_setting_and_check_on_its_own_line(run, searx, fire, doctor_box, md_root):
    r = run("doctor")
    assert r.code == 0 and r.out.splitlines() == [
        f"web.py {web.VERSION}",
        "  WEBTOOLS_HOST     127.0.0.1  (environment)",
        f"  SEARXNG_URL       {searx.url}  (environment)",
        f"  FIRECRAWL_URL     {fire.url}  (environment)",
        "  FIRECRAWL_API_KEY (unset)  (default)",
        "  WEB_TIMEOUT       20/60  (default)",
        "  WEB_RETRIES       2  (environment)",
        "  WEB_WORKERS       4  (default)",
        f"  WEB_MD_ROOT       {web.display_path(md_root)}  (environment)",
        "ok   proxy      no proxy intercepts calls to the box",
        f"ok   searxng    {searx.url}: json enabled; engines answered: localforum, localjson-a, localjson-b",
        f"ok   firecrawl  {fire.url}: scraped https://example.com (262 words)",
        f"ok   md-root    {web.display_path(md_root)} is writable"]
    assert searx.queries_seen() == ["searxng"] and len(searx.requests) == 1      # one probe, page 1
    assert [p.name for p in md_root.iterdir()] == ["t"]                        # the probe file is gone


def test_doctor_fails_when_every_engine_is_unresponsive(run, searx, fire):
    searx.set_results("searxng", [], unresponsive=[["localslow", "timeout"], ["localdead", "HTTP error"]])
    r = run("doctor", "--json")
    assert r.code == web.EXIT_UNREACHABLE and r.json["ok"] is False
    assert r.json["checks"][1] == {"name": "searxng", "ok": False, "code": web.EXIT_UNREACHABLE,
                                   "detail": f"{searx.url}: json enabled; engines answered: none; unresponsive: "
                                             f"localslow (timeout), localdead (HTTP error)",
                                   "fix": "check the engines in SearXNG's logs"}
    searx.set_results("searxng", [make_hit("https://a.org/")], unresponsive=[["localslow", "timeout"]])
    check = run("doctor", "--json").json["checks"][1]
    assert check["ok"] is True and check["fix"] == "" and check["detail"].endswith("; unresponsive: localslow (timeout)")
