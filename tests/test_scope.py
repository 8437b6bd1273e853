"""Source scope (--site, --exclude-site, md/<topic>/sources.txt) and `web.py export`."""

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from standins import article_markdown, make_hit, page_body

import web
from test_hardening import check_bad, snapshot


# --- domains and the policy file -------------------------------------------------------

@pytest.mark.parametrize("given, domain", [
    ("example.org", "example.org"), ("Example.ORG", "example.org"), ("https://www.example.org/path", "example.org"),
    ("www.example.org", "example.org"), ("악마.kr", "xn--hz2b33s.kr"), ("sub.example.co.uk", "sub.example.co.uk"),
    # a URL as pasted from the browser: its host, whatever comes with it
    ("https://www.example.org:8443/a?b=1#c", "example.org"), ("https://me@example.org", "example.org"),
    ("https://example.org?q=tides", "example.org"), ("example.org/path/", "example.org"),
    ("https://bücher.example/", "xn--bcher-kva.example"),
])
def test_domains_are_normalised(given, domain):
    assert web.check_domain(given, "--site") == domain


@pytest.mark.parametrize("given", ["", "localhost", "exa mple.org", "-bad.org", "bad-.org", "a..b", "x" * 64 + ".org",
                                   "file:///etc/hosts", "https://", "http://[::1"])
def test_bad_domains_are_usage_errors(given):
    with pytest.raises(web.Failure) as err:
        web.check_domain(given, "--site")
    assert err.value.code == web.EXIT_USAGE and err.value.line().startswith(f"usage: --site: {given!r} is not a domain")


POLICY = """# Source policy for the shore topic
block tidepool-facts.example.com   — content farm: copies other sites
prefer shore.example.edu university field station

prefer noaa.gov
block  ads.shore.example.edu  ads on the field station's site
"""


def test_the_policy_file_is_read_with_its_notes(tmp_path):
    (tmp_path / "sources.txt").write_text(POLICY, encoding="utf-8")
    assert web.read_policy(str(tmp_path)) == [
        (2, "block", "tidepool-facts.example.com", "content farm: copies other sites"),
        (3, "prefer", "shore.example.edu", "university field station"), (5, "prefer", "noaa.gov", ""),
        (6, "block", "ads.shore.example.edu", "ads on the field station's site")]
    assert web.read_policy(str(tmp_path / "nowhere")) == []


@pytest.mark.parametrize("text, line, message", [
    ("blok example.org\n", 1, "'blok example.org' is not a rule — write `block DOMAIN [note]`"),
    ("# fine\nprefer\n", 2, "'prefer' is not a rule"),
    ("block not a domain!\n", 1, "'not' is not a domain"),
    ("block a.org\nprefer www.a.org\n", 2, "a.org is listed again (first on line 1)"),
])
def test_a_bad_policy_line_names_the_file_and_line(tmp_path, text, line, message):
    (tmp_path / "sources.txt").write_text(text, encoding="utf-8")
    with pytest.raises(web.Failure) as err:
        web.read_policy(str(tmp_path))
    assert err.value.code == web.EXIT_USAGE and f"sources.txt:{line}: " in err.value.line()
    assert message in err.value.line()


def test_scope_verdicts(tmp_path):
    (tmp_path / "sources.txt").write_text(POLICY, encoding="utf-8")
    scope = web.Scope(["example.org", "example.edu"], ["bad.example.org"], web.read_policy(str(tmp_path)), "P")
    assert scope.drop_reason("https://www.example.org/x") is None
    assert scope.drop_reason("https://sub.example.edu/x") is None
    assert scope.drop_reason("https://notexample.org/x") == "outside --site example.org, example.edu"
    assert scope.drop_reason("https://bad.example.org/x") == "excluded by --exclude-site bad.example.org"
    policy = web.Scope(rules=web.read_policy(str(tmp_path)), policy="P")
    assert policy.drop_reason("https://tidepool-facts.example.com/a") == "blocked by P:2 (content farm: copies other sites)"
    assert policy.drop_reason("https://ads.shore.example.edu/a") == "blocked by P:6 (ads on the field station's site)"
    assert policy.preferred("https://lab.shore.example.edu/a") == "university field station"   # the nearest rule
    assert policy.preferred("https://www.noaa.gov/a") == "preferred" and policy.preferred("https://x.org/") is None


# --- search -------------------------------------------------------------------------------

ROWS = [make_hit("https://example.org/tides"), make_hit("https://tidepool-facts.example.com/top-10"),
        make_hit("https://shore.example.edu/zones"), make_hit("https://www.example.org/more")]


def asked(searx):
    """The distinct queries SearXNG was asked, in order (a query pages on while hits are wanted)."""
    return list(dict.fromkeys(parse_qs(urlsplit(r["path"]).query)["q"][0] for r in searx.requests))


def test_site_is_asked_of_searxng_and_enforced_on_what_comes_back(run, searx):
    searx.set_results("tides site:example.org", ROWS)       # an engine that ignores site:
    r = run("search", "tides", "--site", "https://www.Example.org/", "--json")
    assert r.code == 0 and asked(searx) == ["tides site:example.org"]
    assert [h["url"] for h in r.json["results"]] == ["https://example.org/tides", "https://www.example.org/more"]
    assert r.json["dropped"] == [{"url": u, "reason": "outside --site example.org"} for u in
                                 ("https://tidepool-facts.example.com/top-10", "https://shore.example.edu/zones")]
    human = run("search", "tides", "--site", "example.org").out
    assert human.endswith("-- dropped 2: outside --site example.org\n")


def test_several_sites_are_asked_one_by_one_and_merged(run, searx):
    searx.set_results("tides site:example.org", [ROWS[0], ROWS[3]])
    searx.set_results("tides site:shore.example.edu", [ROWS[2]])
    r = run("search", "tides", "--site", "example.org", "--site", "shore.example.edu", "--json")
    assert r.code == 0 and asked(searx) == ["tides site:example.org", "tides site:shore.example.edu"]
    assert [h["url"] for h in r.json["results"]] == ["https://example.org/tides", "https://shore.example.edu/zones",
                                                     "https://www.example.org/more"]


def test_exclude_site_drops_with_a_reason(run, searx):
    searx.set_results("tides", ROWS)
    r = run("search", "tides", "--exclude-site", "example.org", "--json")
    assert r.code == 0 and asked(searx) == ["tides"]
    assert [h["url"] for h in r.json["results"]] == ["https://tidepool-facts.example.com/top-10",
                                                     "https://shore.example.edu/zones"]
    assert {d["reason"] for d in r.json["dropped"]} == {"excluded by --exclude-site example.org"}


def test_the_topic_policy_drops_and_marks_hits_and_the_manifest_shows_it(run, searx, md_root):
    (md_root / "shore").mkdir(parents=True)
    (md_root / "shore" / "sources.txt").write_text(POLICY, encoding="utf-8")
    searx.set_results("tides", ROWS)
    r = run("search", "tides", "--topic", "shore", "--json")
    policy = web.display_path(md_root / "shore" / "sources.txt")
    assert r.code == 0 and r.json["dropped"] == [{"url": "https://tidepool-facts.example.com/top-10",
                                                  "reason": f"blocked by {policy}:2 (content farm: copies other sites)"}]
    zones = next(h for h in r.json["results"] if "zones" in h["url"])
    assert zones["prefer"] == "university field station"
    assert "[prefer: university field station]" in run("search", "tides", "--topic", "shore").out
    assert run("manifest", "--topic", "shore").out.splitlines()[-3] == \
        "dropped by the source scope: 2 hits (see the manifest)"
    text = (md_root / "shore" / "web" / "_manifest.md").read_text("utf-8")
    section = text[text.index("## Source scope"):text.index("## Syntheses")]
    assert "- `sources.txt` line 2: block tidepool-facts.example.com — content farm: copies other sites (dropped 2 hits)" \
        in section and "- `sources.txt` line 3: prefer shore.example.edu — university field station (1 hit marked)" \
        in section and "| https://tidepool-facts.example.com/top-10 | blocked by " in section


def test_a_bad_policy_stops_a_topic_search_before_anything_is_asked(run, searx, md_root):
    (md_root / "shore").mkdir(parents=True)
    (md_root / "shore" / "sources.txt").write_text("block ok.org\nallow x.org\n", encoding="utf-8")
    check_bad(run, md_root, ["search", "tides", "--topic", "shore"], web.EXIT_USAGE, "sources.txt:2: 'allow x.org' is not a rule")
    assert searx.requests == []


def test_the_runs_scope_from_init_applies_to_its_searches(run, searx, md_root):
    assert run("init", "tides", "--topic", "t", "--exclude-site", "example.org").code == 0
    searx.set_results("tides", ROWS)
    r = run("search", "tides", "--topic", "t", "--json")
    assert {h["url"] for h in r.json["results"]} == {"https://tidepool-facts.example.com/top-10",
                                                     "https://shore.example.edu/zones"}
    assert "scope: --exclude-site example.org" in run("status", "--topic", "t").out
    check_bad(run, md_root, ["init", "g", "--topic", "u", "--site", "nope"], web.EXIT_USAGE, "--site: 'nope' is not a domain")


def test_scrape_refuses_a_blocked_domain_unless_forced(run, fire, md_root):
    fire.set_articles("https://tidepool-facts.example.com/top-10")
    (md_root / "shore").mkdir(parents=True)
    (md_root / "shore" / "sources.txt").write_text(POLICY, encoding="utf-8")
    url = "https://tidepool-facts.example.com/top-10"
    r = run("scrape", url, "--topic", "shore", "--json")
    policy = web.display_path(md_root / "shore" / "sources.txt")
    assert r.code == web.EXIT_PARTIAL and fire.requests == []
    assert r.json["failed"] == [{"url": url, "kind": "policy", "error": f"blocked by {policy}:2 (content farm: copies "
                                                                        f"other sites) — remove the rule, or scrape it with --force"}]
    assert run("scrape", url, "--topic", "shore", "--force", "--json").code == 0 and len(fire.requests) == 1


# --- what export needs is kept on save -----------------------------------------------------

def test_the_header_keeps_the_published_day_and_the_site_name(run, searx, fire, md_root):
    fire.set_articles("https://b.org/y")
    fire.set_page("https://a.org/x", page_body("https://a.org/x", article_markdown("a"), ogSiteName="Site &amp; A",
                                               publishedTime="2024-03-05T10:00:00Z"))
    hit = make_hit("https://b.org/y")
    hit["publishedDate"] = "2023-11-20T09:30:00"
    searx.set_results("q", [hit])
    run("search", "q", "--topic", "t")
    assert run("scrape", "https://a.org/x", "https://b.org/y", "--topic", "t", "--workers", "1").code == 0
    a = (md_root / "t" / "web" / "a-org-x.md").read_text("utf-8").splitlines()
    assert a[6:9] == ["> published: 2024-03-05  ", "> site: Site & A  ", web.NOTE_LINE]     # after the others, before NOTE
    b = web.read_header(md_root / "t" / "web" / "b-org-y.md")
    assert b["published"] == "2023-11-20" and b["site"] == "Coastal Notes"            # the hit's day; the capture's site


# --- export -------------------------------------------------------------------------------------

TITLES = {"https://tricky.example.org/a": "Tom & Jerry: 50% of #1 {fans} _under_ $money ~tilde ^caret \\back",
          "https://ko.example.org/b": "악마의 위계 — 연구", "https://zh.example.org/c": "珊瑚礁研究"}


@pytest.fixture
def exported(run, fire, md_root):
    for url, title in TITLES.items():
        fire.set_page(url, page_body(url, article_markdown(title), title=title, ogSiteName="The Site",
                                     publishedTime="2024-03-05"))
    (md_root / "shore").mkdir()
    assert run("scrape", *TITLES, "--topic", "shore", "--workers", "1").code == 0
    return lambda fmt, *more: run("export", "--topic", "shore", "--format", fmt, *more)


def test_csl_json_is_an_array_of_webpage_items(exported):
    r = exported("csl-json")
    assert r.code == 0
    items = json.loads(r.out)
    assert [i["id"] for i in items] == ["shore-1", "shore-2", "shore-3"]
    assert items[0] == {"id": "shore-1", "type": "webpage", "title": TITLES["https://tricky.example.org/a"],
                        "URL": "https://tricky.example.org/a",
                        "accessed": {"date-parts": [[int(p) for p in f"{web.now_utc():%Y-%m-%d}".split("-")]]},
                        "container-title": "The Site", "issued": {"date-parts": [[2024, 3, 5]]}, "keyword": "shore"}
    assert items[1]["title"] == "악마의 위계 — 연구" and items[2]["title"] == "珊瑚礁研究"


BIBTEX_UNESCAPE = {r"\textbackslash{}": "\\", r"\textasciitilde{}": "~", r"\textasciicircum{}": "^"}


def test_bibtex_escapes_special_characters_and_keeps_stable_unique_keys(exported):
    r = exported("bibtex")
    assert r.code == 0 and re.findall(r"@online\{([^,]+),", r.out) == ["shore-1", "shore-2", "shore-3"]
    title = re.search(r"title = \{\{(.*)\}\},", r.out).group(1)
    assert title == r"Tom \& Jerry: 50\% of \#1 \{fans\} \_under\_ \$money \textasciitilde{}tilde " \
                    r"\textasciicircum{}caret \textbackslash{}back"
    for escaped, plain in BIBTEX_UNESCAPE.items():
        title = title.replace(escaped, plain)
    assert re.sub(r"\\([&%#{}_$])", r"\1", title) == TITLES["https://tricky.example.org/a"]   # nothing lost
    assert "title = {{악마의 위계 — 연구}}," in r.out and "  date = {2024-03-05},\n" in r.out
    assert "  organization = {{The Site}},\n  keywords = {shore},\n}" in r.out
    assert exported("bibtex").out == r.out                                      # stable


def test_ris_records_are_elec_with_crlf_lines(exported):
    r = exported("ris")
    records = r.out.split("ER  - \r\n")
    assert r.code == 0 and records[-1] == "" and len(records) == 4
    lines = records[1].split("\r\n")
    assert lines[:3] == ["TY  - ELEC", "ID  - shore-2", "TI  - 악마의 위계 — 연구"]
    assert "DA  - 2024/03/05" in lines and "PY  - 2024" in lines and "T2  - The Site" in lines and "KW  - shore" in lines
    assert all(re.fullmatch(r"[A-Z][A-Z0-9]  - .*", line) for line in lines if line)


def test_cited_in_exports_only_the_cited_pages_in_number_order(exported, md_root):
    synthesis = md_root / "shore" / "s-synthesis.md"
    synthesis.write_text("## Findings\n\n- b [3](web/zh-example-org-c.md) and [1](web/tricky-example-org-a.md).\n"
                         "- [see](https://x.org) and [3](web/zh-example-org-c.md)\n", encoding="utf-8")
    r = exported("csl-json", "--cited-in", synthesis)
    assert r.code == 0 and [i["id"] for i in json.loads(r.out)] == ["shore-1", "shore-3"]   # keys match the numbers


def test_export_writes_a_file_with_out_and_nothing_without(exported, md_root, tmp_path):
    before = snapshot(md_root)
    assert exported("ris").code == 0 and snapshot(md_root) == before
    r = exported("bibtex", "--out", tmp_path / "refs.bib")
    assert r.code == 0 and r.out == f"wrote 3 entries (bibtex) to {web.display_path(tmp_path / 'refs.bib')}\n"
    assert (tmp_path / "refs.bib").read_text("utf-8") == exported("bibtex").out


@pytest.mark.parametrize("argv, message", [
    (["--topic", "nope", "--format", "ris"], "there is no topic 'nope'"),
    (["--topic", "shore", "--format", "endnote"], "invalid choice: 'endnote'"),
])
def test_export_usage_errors(exported, run, md_root, argv, message):
    check_bad(run, md_root, ["export"] + argv, web.EXIT_USAGE, message)


def test_cited_in_must_be_a_synthesis_of_the_topic(exported, run, md_root):
    (md_root / "other").mkdir()
    (md_root / "other" / "x-synthesis.md").write_text("## Findings\n\n- x\n", encoding="utf-8")
    check_bad(run, md_root, ["export", "--topic", "shore", "--format", "ris", "--cited-in",
                             md_root / "other" / "x-synthesis.md"], web.EXIT_USAGE, "is not a synthesis of topic 'shore'")
    (md_root / "shore" / "none-synthesis.md").write_text("## Findings\n\n- uncited\n", encoding="utf-8")
    check_bad(run, md_root, ["export", "--topic", "shore", "--format", "ris", "--cited-in",
                             md_root / "shore" / "none-synthesis.md"], web.EXIT_USAGE, "no saved sources to export")


def test_a_runs_site_and_exclude_site_from_init_scope_every_search_of_the_run(run, searx):
    searx.set_results("tides site:example.org", ROWS)
    searx.set_results("tides", ROWS)
    run("init", "how tides work", "--topic", "t", "--site", "example.org")
    r = run("search", "tides", "--topic", "t", "--json")
    assert asked(searx) == ["tides site:example.org"]
    assert [h["url"] for h in r.json["results"]] == ["https://example.org/tides", "https://www.example.org/more"]
    run("init", "how tides work", "--topic", "t", "--exclude-site", "example.org")
    r = run("search", "tides", "--topic", "t", "--json")
    assert asked(searx)[-1] == "tides" and {d["reason"] for d in r.json["dropped"]} == {
        "excluded by --exclude-site example.org"}
