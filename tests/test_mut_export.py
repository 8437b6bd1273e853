"""export, the cases mutation testing found untested: each format's whole output for two pages, one
with a site and a day of publication and one without, a page's current version only, a title's site
after an en dash or among other separators, and a synthesis of another topic."""

import json

import pytest

import web
from standins import article_markdown, page_body

DEPTH, POOLS = "https://javp.example.org/depth", "https://b.example.org/pools"


@pytest.fixture
def two_pages(run, fire):
    """Topic t with [1] "Seeing Depth – JAVP" (site JAVP, published 2024-03-05) and [2] "Pools" (neither)."""
    fire.set_page(DEPTH, page_body(DEPTH, article_markdown("depth"), title="Seeing Depth – JAVP", ogSiteName="JAVP",
                                   publishedTime="2024-03-05T10:00:00Z"))
    fire.set_page(POOLS, page_body(POOLS, article_markdown("pools"), title="Pools"))
    assert run("scrape", DEPTH, POOLS, "--topic", "t").code == 0
    return f"{web.now_utc():%Y-%m-%d}"


def test_bibtex_is_an_online_entry_a_page_with_a_blank_line_between(run, two_pages):
    today = two_pages
    assert run("export", "--topic", "t", "--format", "bibtex").out == (
        "@online{t-1,\n  title = {{Seeing Depth}},\n  url = {https://javp.example.org/depth},\n"
        f"  urldate = {{{today}}},\n  date = {{2024-03-05}},\n  organization = {{{{JAVP}}}},\n  keywords = {{t}},\n}}\n"
        "\n"
        "@online{t-2,\n  title = {{Pools}},\n  url = {https://b.example.org/pools},\n"
        f"  urldate = {{{today}}},\n  keywords = {{t}},\n}}\n")


def test_csl_json_has_an_issued_date_only_for_a_page_with_one(run, two_pages):
    accessed = {"date-parts": [[int(part) for part in two_pages.split("-")]]}
    assert json.loads(run("export", "--topic", "t", "--format", "csl-json").out) == [
        {"id": "t-1", "type": "webpage", "title": "Seeing Depth", "URL": DEPTH, "accessed": accessed,
         "container-title": "JAVP", "issued": {"date-parts": [[2024, 3, 5]]}, "keyword": "t"},
        {"id": "t-2", "type": "webpage", "title": "Pools", "URL": POOLS, "accessed": accessed, "keyword": "t"}]


def test_a_page_is_exported_once_as_its_current_version(run, fire, two_pages, md_root):
    fire.set_page(POOLS, page_body(POOLS, article_markdown("pools, revised"), title="Pools, revised"))
    assert run("scrape", POOLS, "--topic", "t", "--force").code == 0
    assert (md_root / "t" / "web" / "b-example-org-pools.v2.md").is_file()
    items = json.loads(run("export", "--topic", "t", "--format", "csl-json").out)
    assert [(i["id"], i["title"]) for i in items] == [("t-1", "Seeing Depth"), ("t-2", "Pools, revised")]


def test_a_page_saved_without_dates_is_exported_without_them(run, md_root):
    web_dir = md_root / "t" / "web"
    web_dir.mkdir()
    (web_dir / "x-org-a.md").write_text(f"> source: https://x.org/a  \n{web.NOTE_LINE}\n\nText.\n", encoding="utf-8")
    r = run("export", "--topic", "t", "--format", "csl-json")
    assert r.code == 0 and r.err == ""
    item = json.loads(r.out)[0]
    assert (item["id"], item["URL"], item["title"], "issued" in item) == ("t-1", "https://x.org/a", "https://x.org/a",
                                                                          False)


@pytest.mark.parametrize("title, site, kept", [
    ("Seeing Depth – JAVP", "JAVP", "Seeing Depth"),                           # an en dash
    ("Part 1 | Seeing Depth | JAVP", "JAVP", "Part 1 | Seeing Depth"),         # only the last separator
])
def test_an_exported_title_drops_the_site_after_its_last_separator(title, site, kept):
    assert web.export_title(title, site) == kept


def test_a_synthesis_of_another_topic_is_refused_naming_the_folder_to_use(run, two_pages, md_root):
    (md_root / "u").mkdir()
    other = md_root / "u" / "x-synthesis.md"
    other.write_text("# x\n", encoding="utf-8")
    r = run("export", "--topic", "t", "--format", "ris", "--cited-in", other)
    assert (r.code, r.out) == (web.EXIT_USAGE, "") and r.err == (
        f"web.py: usage: {web.display_path(other)} is not a synthesis of topic 't' — give a file in "
        f"{web.display_path(md_root / 't')}/\n")
