"""What scrape names and saves, and how it flags a page: the file names odd or long addresses get, the
reader and low-trust flags at their documented edges, the published day, the reader flag a later note
clears, the ledger lines (pick, version, over_budget) that fix citation numbers and the budget, and a YAML
`system:` example that is no role tag wherever the prose before it says "system"."""

import threading

import web
from conftest import read_ledger
from standins import Reply, article_markdown, page_body
from test_reader_flags import hook, note_reporting, planted, reader_answer  # noqa: F401  (planted: a fixture)
from test_scrape import release_when_saved, saved_files


def scrape_json(run, *urls):
    r = run("scrape", *urls, "--topic", "t", "--json")
    assert r.code == 0, r
    return r.json


def ledger(md_root):
    return read_ledger(md_root / "t" / "web" / "_ledger.jsonl")


# --- file names ----------------------------------------------------------------------------------------------

def test_odd_and_long_addresses_get_file_names_of_at_most_80_characters_never_a_synthesis(run, fire, md_root):
    reserved = "https://con.example/" + "a" * 52 + "-synthesis/notes"     # cut just past "-synthesis"
    long_synthesis = "https://example.org/annual-reports/" + "x" * 43 + "/synthesis"
    underscore = "https://_.example.org/" + "reports-" * 12
    urls = ["https://-.-/", reserved, long_synthesis, underscore]
    fire.set_articles(*urls)
    saved = scrape_json(run, *urls)["saved"]
    assert [e["path"].rsplit("/", 1)[1] for e in saved] == [
        "page.md",
        "page-con-example-" + "a" * 52 + "-synth-page.md",
        "example-org-annual-reports-" + "x" * 43 + "-synt-page.md",
        "example-org-" + "reports-" * 8 + "repo.md"]


def test_pages_that_differ_only_in_their_query_get_numbered_names_cut_clean(run, fire, md_root):
    base = "https://example.org/" + "a" * 65 + "/bb"
    fire.set_articles(base + "?page=1", base + "?page=2")
    scrape_json(run, base + "?page=1", base + "?page=2")
    assert saved_files(md_root) == ["example-org-" + "a" * 65 + "-2.md", "example-org-" + "a" * 65 + "-bb.md"]


# --- the reader and low-trust flags at their documented edges --------------------------------------------------

def test_a_page_of_exactly_4000_characters_is_read_whole_not_given_a_reader(run, fire, md_root):
    text = "# Rock pools\n\n" + ("Anémones close at low tide. " * 200)[:3985] + "\n"   # 4,000 characters
    long = text[:-1] + "x\n"                                                              # 4,001
    fire.set_page("https://a.org/exact", page_body("https://a.org/exact", text, title="Rock pools"))
    fire.set_page("https://b.org/over", page_body("https://b.org/over", long, title="Rock pools, longer"))
    saved = scrape_json(run, "https://a.org/exact", "https://b.org/over")["saved"]
    assert [(e["url"], e.get("reader")) for e in saved] == [("https://a.org/exact", None), ("https://b.org/over", True)]
    notes = run("manifest", "--topic", "t", "--json").json["saved"]
    assert [e.get("note") for e in notes] == [None, "needed"]     # the manifest agrees: only the longer needs a note


def test_a_page_of_exactly_200_words_is_not_short_and_one_of_199_is(run, fire, md_root):
    for url, words in (("https://a.org/200", 200), ("https://b.org/199", 199)):
        fire.set_page(url, page_body(url, " ".join(["tide"] * words) + "\n", title="Tides"))
    saved = scrape_json(run, "https://a.org/200", "https://b.org/199")["saved"]
    assert [(e["words"], e.get("flags")) for e in saved] == [(200, None), (199, ["short"])]


def reading_list(links, other_words, icons=0):
    """A page of `links` two-word links, one a line, `icons` links without text (an icon each), and a
    paragraph of `other_words` words."""
    items = "".join(f"[Shore note](https://notes.example.org/{i})\n" for i in range(links))
    items += "".join(f"[](https://social.example.org/{i})\n" for i in range(icons))
    return items + "\n" + " ".join(["pools"] * other_words) + "\n"


def test_a_page_is_link_heavy_only_when_its_links_hold_more_than_half_its_words(run, fire, md_root):
    fire.set_page("https://a.org/half", page_body("https://a.org/half", reading_list(60, 120), title="Notes"))
    fire.set_page("https://b.org/more", page_body("https://b.org/more", reading_list(60, 119), title="Notes"))
    fire.set_page("https://c.org/some", page_body("https://c.org/some", reading_list(50, 100, icons=40), title="Notes"))
    saved = scrape_json(run, "https://a.org/half", "https://b.org/more", "https://c.org/some")["saved"]
    assert [(e["words"], e.get("flags")) for e in saved] == [(240, None), (239, ["link-heavy"]), (240, None)]


def test_a_published_day_the_metadata_gives_twice_is_the_first(run, fire, md_root):
    url = "https://a.org/story"
    fire.set_page(url, page_body(url, article_markdown("sea otters"), title="Sea otters",
                                 publishedTime=["2024-03-05T08:00:00Z", "2024-04-01T09:30:00Z"]))
    path = scrape_json(run, url)["saved"][0]["path"]
    assert web.read_header(md_root.parent / path)["published"] == "2024-03-05"


# --- the reader flag: the page's latest note decides ------------------------------------------------------------

def test_a_later_note_that_saw_no_instructions_clears_the_pages_reader_flag(run, planted, md_root):
    page, (addressed, errata) = planted
    hook(run, "post", reader_answer(md_root.parent, page, note_reporting(addressed, errata)))
    assert run("status", "--topic", "py", "--json").json["notes"]["flagged"][0]["n"] == 1
    quiet = "Contributes: x\nPassages:\nnone\nInstructions seen: none\n"
    assert hook(run, "post", reader_answer(md_root.parent, page, quiet)) == {"hookSpecificOutput": {
        "hookEventName": "PostToolUse", "additionalContext": f"web.py saved the note as {web.display_path(web.note_path(page))}: "
                                                             "it quotes no passage."}}
    assert "flagged" not in run("status", "--topic", "py", "--json").json["notes"]
    saved = run("manifest", "--topic", "py", "--json").json["saved"][0]
    assert "reader-instructions" not in saved["flags"] and "instructions" not in saved


# --- the ledger lines that fix citation numbers: each page's pick, a later version's number ----------------------

def scrape_lines(md_root):
    return [{k: e[k] for k in ("url", "outcome", "pick", "reason", "supersedes", "version") if k in e}
            for e in ledger(md_root) if e["command"] == "scrape"]


def test_a_copy_skipped_in_the_same_call_is_logged_with_its_own_pick(run, fire, md_root):
    same = article_markdown("syndicated story")
    fire.set_page("https://original.org/story", page_body("https://original.org/story", same))
    fire.set_page("https://mirror.net/copy", page_body("https://mirror.net/copy", same))
    r = run("scrape", "https://original.org/story", "https://mirror.net/copy", "--topic", "t", "--workers", "1",
            "--json")
    assert r.code == 0 and [s["reason"] for s in r.json["skipped"]] == ["duplicate"]
    assert scrape_lines(md_root) == [
        {"url": "https://original.org/story", "outcome": "saved", "pick": 1},
        {"url": "https://mirror.net/copy", "outcome": "skipped", "pick": 2, "reason": "duplicate"}]


def test_a_lower_ranked_copy_replaced_by_its_original_keeps_its_pick_in_the_ledger(run, fire, md_root):
    same = article_markdown("syndicated story")
    hold = threading.Event()
    fire.set_page("https://original.org/story", Reply(200, page_body("https://original.org/story", same), hold=hold))
    fire.set_page("https://mirror.net/copy", page_body("https://mirror.net/copy", same))
    release_when_saved(md_root, 1, hold)          # the mirror is saved first
    scrape_json(run, "https://original.org/story", "https://mirror.net/copy")
    assert scrape_lines(md_root) == [
        {"url": "https://mirror.net/copy", "outcome": "saved", "pick": 2},
        {"url": "https://mirror.net/copy", "outcome": "skipped", "pick": 2, "reason": "duplicate",
         "supersedes": web.display_path(md_root / "t" / "web" / "mirror-net-copy.md")},
        {"url": "https://original.org/story", "outcome": "saved", "pick": 1}]
    assert [e["n"] for e in run("manifest", "--topic", "t", "--json").json["saved"]] == [1]


def test_a_later_version_is_logged_with_its_version_number(run, fire, md_root):
    url = "https://a.org/tides"
    fire.set_page(url, page_body(url, article_markdown("tides"), title="Tides"))
    scrape_json(run, url)
    fire.set_page(url, page_body(url, article_markdown("tides and currents"), title="Tides"))
    assert run("scrape", url, "--topic", "t", "--force", "--json").json["saved"][0]["version"] == 2
    assert scrape_lines(md_root) == [{"url": url, "outcome": "saved", "pick": 1},
                                     {"url": url, "outcome": "saved", "pick": 1, "version": 2}]


# --- the run's budget: which saves went past it ----------------------------------------------------------------

def over_budget(md_root):
    return [(e["url"], e.get("over_budget")) for e in ledger(md_root) if e["command"] == "scrape"]


def test_each_page_one_forced_call_saves_past_the_budget_is_counted(run, fire, md_root):
    urls = ["https://a.org/1", "https://b.org/2", "https://c.org/3"]
    fire.set_articles(*urls)
    run("init", "goal", "--topic", "t", "--max-sources", "1")
    r = run("scrape", *urls, "--topic", "t", "--force", "--workers", "1", "--json")
    assert r.code == 0 and [e["url"] for e in r.json["saved"]] == urls
    assert over_budget(md_root) == [(urls[0], None), (urls[1], True), (urls[2], True)]
    assert run("status", "--topic", "t").out.splitlines()[1] == (
        "round 1 of 1, scraped · 3 of 1 pages saved (2 past the budget, --force) · nothing left to scrape")


def test_a_new_version_of_a_page_within_the_budget_is_not_past_it(run, fire, md_root):
    url = "https://a.org/tides"
    fire.set_page(url, page_body(url, article_markdown("tides"), title="Tides"))
    run("init", "goal", "--topic", "t", "--max-sources", "2")
    scrape_json(run, url)
    fire.set_page(url, page_body(url, article_markdown("tides and currents"), title="Tides"))
    assert run("scrape", url, "--topic", "t", "--force", "--json").code == 0
    assert over_budget(md_root) == [(url, None), (url, None)]
    assert "forced" not in run("status", "--topic", "t", "--json").json
    assert "1 of 2 pages saved ·" in run("status", "--topic", "t").out.splitlines()[1]


def test_a_scrape_outside_any_run_has_no_budget_to_pass(run, fire, md_root):
    fire.set_articles("https://a.org/1")
    scrape_json(run, "https://a.org/1")
    assert over_budget(md_root) == [("https://a.org/1", None)]


# --- flags: a config example is not a role tag, wherever the prose before it names the system -------------------

YAML_EXAMPLE = "```yaml\nsystem:\n  You answer questions about tide pools\n  in two short sentences.\ntemperature: 0.2\n```\n"


def prompt_page(gap):
    """A page whose prose says "system" `gap` bytes before a YAML example with a multi-line `system:` key."""
    head = "# Prompt settings\n\nOur system prompt is kept in one small file. "
    filler = "It sets how the guide answers questions about tide pools on the shore. " * 10
    cut = head.index("system") + len("system") + gap - len("\n\n```yaml\n")
    return ((head + filler)[:cut] + "\n\n" + YAML_EXAMPLE).encode()


def test_a_yaml_system_key_is_not_a_role_tag_however_far_the_prose_before_it_says_system():
    for gap in range(120, 320):
        page = prompt_page(gap)
        assert web.content_flags(page, "Prompt settings", {"invisible": 0, "comments": 0}, 300) == [], gap
