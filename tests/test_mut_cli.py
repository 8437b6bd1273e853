"""The command line around the commands, where the mutation run found it unpinned: a topic typed with the slash a
shell's completion adds, --workers past 64, no command or a misspelt one (with --json too), --version after the
parser is built, Ctrl-C while web.py waits on stdin; and the box's settings as doctor shows them: an IPv6 or
capitalised host, ports 1 and 65535, a base URL with a trailing slash or ending in X, a variable set but empty,
and the md root beside web.py whatever the current folder."""

import os

import pytest

import web
from conftest import ROOT
from standins import make_hit


# --- a topic typed with a completed slash ---------------------------------------------------------------------

@pytest.fixture
def saved_page(run, fire):
    """Topic t with one saved page, https://a.org/1."""
    fire.set_articles("https://a.org/1")
    assert run("scrape", "https://a.org/1", "--topic", "t").code == 0


def test_search_with_a_topic_typed_with_a_slash_records_it_in_the_topic(run, searx, saved_page):
    searx.set_results("q", [make_hit("https://a.org/1"), make_hit("https://b.org/2")])
    r = run("search", "q", "--topic", "t/")
    assert (r.code, r.err) == (0, "")
    assert r.out.splitlines() == [" 1. [saved 1] https://a.org/1", " 2. Title of https://b.org/2",
                                  "    https://b.org/2", "    Snippet for https://b.org/2",
                                  "-- 2 hits, 1 new to the topic; seen ones on one line (--all shows them in full)"]


def test_manifest_export_and_refresh_take_a_topic_typed_with_a_slash(run, saved_page, md_root):
    manifest = run("manifest", "--topic", "t/")
    assert (manifest.code, manifest.err) == (0, "")
    assert manifest.out.splitlines()[0] == "t · 1 saved pages (no run started with web.py init)"
    assert (md_root / "t" / "web" / "_manifest.md").is_file()
    export = run("export", "--topic", "t/", "--format", "ris")
    assert (export.code, export.err) == (0, "")
    assert export.out.split("\r\n")[:2] == ["TY  - ELEC", "ID  - t-1"] and "KW  - t\r\n" in export.out
    refresh = run("refresh", "--topic", "t/", "--all")
    assert (refresh.code, refresh.err) == (0, "")
    assert refresh.out == ("unchanged  [1]\n"
                           "refreshed 1 page: 1 unchanged · 0 quotes, 0 numbers no longer on the live page\n")


# --- --workers, no command, a misspelt command ----------------------------------------------------------------

@pytest.mark.parametrize("command", [["scrape", "https://a.org/1", "--topic", "t"], ["refresh", "--topic", "t"]])
def test_workers_past_64_is_refused_with_the_range(run, command):
    r = run(*command, "--workers", "65")
    assert (r.code, r.out, r.err) == (web.EXIT_USAGE, "", "web.py: usage: --workers 65 is out of range — use 1 to 64\n")


def test_web_py_without_a_command_is_a_usage_error(run):
    r = run()
    assert (r.code, r.out) == (web.EXIT_USAGE, "")
    assert r.err == "web.py: usage: the following arguments are required: COMMAND — see web.py -h\n"


def test_a_misspelt_command_with_json_answers_a_json_error_without_a_schema(run):
    r = run("serch", "tide pools", "--json")
    line = r.err.removeprefix("web.py: ").removesuffix("\n")   # argparse words the choices: its Python's own way
    assert r.code == web.EXIT_USAGE and r.err.startswith("web.py: usage: argument COMMAND: invalid choice: 'serch'")
    assert "'search', 'scrape', 'refresh', 'doctor'" in line and line.endswith(" — see web.py -h")
    assert r.json == {"schema": None, "ok": False, "errors": [{"service": "usage", "error": line, "code": web.EXIT_USAGE}]}


def test_version_before_other_arguments_prints_the_version(run):
    r = run("--version", "--json")
    assert (r.code, r.out, r.err) == (0, "web.py 4.0.0\n", "")


class _CtrlC:
    """stdin as a person at a terminal leaves it: Ctrl-C while web.py reads it."""

    class buffer:
        @staticmethod
        def read(*_):
            raise KeyboardInterrupt


def test_ctrl_c_while_scrape_reads_candidates_from_stdin_says_interrupted(run, monkeypatch):
    monkeypatch.setattr("sys.stdin", _CtrlC())
    r = run("scrape", "--from", "-", "--topic", "t")
    assert (r.code, r.out, r.err) == (web.EXIT_INTERRUPTED, "", "web.py: interrupted\n")


# --- the box's settings, as doctor shows them -----------------------------------------------------------------

def shown_config(env):
    """The settings doctor lists: {NAME: (value, source)}."""
    return {name: (fact["value"], fact["source"]) for name, fact in web.config_facts(web.Config(env)).items()}


@pytest.mark.parametrize("host, bare, url_host", [("::1", "::1", "[::1]"), ("[::1]", "::1", "[::1]"),
                                                  ("LAB-BOX", "LAB-BOX", "LAB-BOX")])
def test_the_box_host_is_shown_bare_and_an_ipv6_one_is_bracketed_in_its_urls(host, bare, url_host):
    config = shown_config({"WEBTOOLS_HOST": host})
    assert config["WEBTOOLS_HOST"] == (bare, "environment")
    assert config["SEARXNG_URL"] == (f"http://{url_host}:8080", "WEBTOOLS_HOST from the environment")
    assert config["FIRECRAWL_URL"] == (f"http://{url_host}:3002", "WEBTOOLS_HOST from the environment")


def test_ports_1_and_65535_are_ports_and_0_is_refused():
    config = shown_config({"SEARXNG_PORT": "1", "FIRECRAWL_PORT": "65535"})
    assert config["SEARXNG_URL"] == ("http://10.10.20.37:1", "SEARXNG_PORT from the environment")
    assert config["FIRECRAWL_URL"] == ("http://10.10.20.37:65535", "FIRECRAWL_PORT from the environment")
    with pytest.raises(web.Failure) as refused:
        web.Config({"SEARXNG_PORT": "0"})
    assert refused.value.line() == "config: SEARXNG_PORT='0' is not valid — set a port number from 1 to 65535"


def test_a_base_url_loses_its_trailing_slashes_and_nothing_else():
    config = shown_config({"SEARXNG_URL": "http://127.0.0.1:8080/searx//", "FIRECRAWL_URL": "https://box.lab/FCX"})
    assert config["SEARXNG_URL"] == ("http://127.0.0.1:8080/searx", "environment")
    assert config["FIRECRAWL_URL"] == ("https://box.lab/FCX", "environment")


def test_a_variable_set_but_empty_is_its_default():
    names = ["WEBTOOLS_HOST", "SEARXNG_PORT", "FIRECRAWL_PORT", "SEARXNG_URL", "FIRECRAWL_URL", "FIRECRAWL_API_KEY",
             "WEB_TIMEOUT", "WEB_RETRIES", "WEB_WORKERS", "WEB_MD_ROOT"]
    assert shown_config({name: "" for name in names}) == {
        "WEBTOOLS_HOST": ("10.10.20.37", "default"), "SEARXNG_URL": ("http://10.10.20.37:8080", "default"),
        "FIRECRAWL_URL": ("http://10.10.20.37:3002", "default"), "FIRECRAWL_API_KEY": ("(unset)", "default"),
        "WEB_TIMEOUT": ("20/60", "default"), "WEB_RETRIES": (2, "default"), "WEB_WORKERS": (4, "default"),
        "WEB_MD_ROOT": ("md", "default")}


def test_the_md_root_is_beside_web_py_whatever_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert web.Config({}, box=False).md_root == os.path.join(ROOT, "md")
