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


# --- never clobber ----------------------------------------------------------------------------

def test_scrape_out_refuses_an_existing_file_and_leaves_it_untouched(run, fire, tmp_path):
    page = tmp_path / "x.md"
    page.write_text("my own notes\n", encoding="utf-8")
    r = run("scrape", "https://example.org/a", "--out", page)
    assert r.code == web.EXIT_USAGE and r.out == "" and r.err == (
        f"web.py: usage: --out {web.display_path(page)} exists — choose another path, or add --force to replace it\n")
    assert page.read_text("utf-8") == "my own notes\n" and fire.requests == []


def test_scrape_out_with_force_replaces_the_file(run, fire, tmp_path):
    page = tmp_path / "x.md"
    page.write_text("old\n", encoding="utf-8")
    assert run("scrape", "https://example.org/a", "--out", page, "--force").code == 0
    assert page.read_text("utf-8").startswith("> source: https://example.org/a")


@pytest.mark.parametrize("exists", [True, False])
def test_no_out_ever_writes_a_synthesis_even_with_force(run, fire, md_root, exists):
    synthesis = md_root / "t" / "goal-synthesis.md"
    if exists:
        synthesis.write_text("# My synthesis\n", encoding="utf-8")
    before = snapshot(md_root)
    for argv in (["scrape", "https://example.org/a"], ["export", "--topic", "t", "--format", "ris"]):
        r = run(*argv, "--out", synthesis, "--force")
        assert r.code == web.EXIT_USAGE and r.err == (
            f"web.py: usage: --out {web.display_path(synthesis)} names a synthesis — web.py never writes or replaces "
            f"one: choose another path\n")
    assert snapshot(md_root) == before and fire.requests == []
    assert synthesis.exists() == exists and (not exists or synthesis.read_text("utf-8") == "# My synthesis\n")


def test_export_out_refuses_an_existing_file_unless_forced(run, fire, md_root, tmp_path):
    run("scrape", "https://example.org/a", "--topic", "t")
    refs = tmp_path / "refs.ris"
    refs.write_text("my library\n", encoding="utf-8")
    r = run("export", "--topic", "t", "--format", "ris", "--out", refs)
    assert r.code == web.EXIT_USAGE and r.err == (
        f"web.py: usage: --out {web.display_path(refs)} exists — choose another path, or add --force to replace it\n")
    assert refs.read_text("utf-8") == "my library\n"
    r = run("export", "--topic", "t", "--format", "ris", "--out", refs, "--force")
    assert r.code == 0 and refs.read_text("utf-8").startswith("TY  - ELEC")


def test_a_page_whose_address_ends_in_synthesis_is_not_saved_as_one(run, fire, md_root):
    r = run("scrape", "https://example.org/notes/my-synthesis", "--topic", "t", "--json")
    assert r.code == 0 and r.json["saved"][0]["path"].endswith("/example-org-notes-my-synthesis-page.md")
    assert not list((md_root / "t" / "web").glob("*-synthesis.md"))
