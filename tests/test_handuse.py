"""web.py run by hand: nothing clobbered, run state a person cannot corrupt, topics only from init,
a doctor that answers in seconds, and wording that says what it counts."""

import json

import pytest
from standins import make_hit

import web
from conftest import run_process
from test_hardening import snapshot


# --- topics: only init starts one ---------------------------------------------------------------

@pytest.mark.parametrize("argv", [["search", "great wall history"], ["scrape", "https://a.org/x"]])
def test_a_mistyped_topic_is_refused_with_the_closest_one_and_nothing_is_made(run, searx, fire, md_root, argv):
    run("init", "the great wall", "--topic", "greatwall")
    before = snapshot(md_root)
    r = run(*argv, "--topic", "greatwal")
    assert r.code == web.EXIT_USAGE and r.err == (
        f"web.py: usage: there is no topic 'greatwal' in {web.display_path(md_root)} — did you mean greatwall? "
        f"(a new topic starts with web.py init \"goal\" --topic greatwal)\n")
    assert snapshot(md_root) == before and searx.requests == [] and fire.requests == []


def test_a_sub_topic_is_suggested_too(run, md_root):
    run("init", "agents", "--topic", "ai/agents")
    r = run("status", "--topic", "ai/agnets")
    assert r.code == web.EXIT_USAGE and "did you mean ai/agents?" in r.err


def test_a_refused_url_into_a_new_topic_makes_no_folder(run, fire, md_root):
    r = run("scrape", "http://localhost/admin", "--topic", "octo")
    assert r.code == web.EXIT_USAGE and "there is no topic 'octo'" in r.err
    assert not (md_root / "octo").exists() and fire.requests == []


def test_a_missing_md_root_is_exit_3_and_nothing_is_made(tmp_path):
    missing = tmp_path / "nonexistent" / "x"
    r = run_process("init", "goal", "--topic", "t", env={"WEB_MD_ROOT": str(missing)})
    assert r.code == web.EXIT_CONFIG and r.out == ""
    assert r.err == (f"web.py: storage: the md root {missing} does not exist — point WEB_MD_ROOT at an existing "
                     f"folder, or create it\n")
    assert not (tmp_path / "nonexistent").exists()


def test_doctor_fails_on_a_missing_md_root_and_makes_none(run, searx, fire, monkeypatch, tmp_path):
    monkeypatch.setenv("WEB_MD_ROOT", str(tmp_path / "gone"))
    r = run("doctor")
    assert r.code == web.EXIT_CONFIG and "FAIL md-root    the md root" in r.out and "does not exist" in r.out
    assert not (tmp_path / "gone").exists()


# --- init -h --------------------------------------------------------------------------------

def test_init_help_shows_the_goal_and_topic_as_required(run):
    r = run_process("init", "-h")
    usage = " ".join(r.out.split("\n\n")[0].split())
    assert usage.startswith("usage: web.py init [-h] --topic T ") and usage.endswith(" GOAL [GOAL ...]")
