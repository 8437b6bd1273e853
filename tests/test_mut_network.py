"""What a user meets at web.py's network edge, where the mutation run found it unpinned: the private-address
guard on the encoded forms of an address (judged from the text alone, no name lookup), the URL checks'
messages and the 4,096-character limit, search hits' titles and their de-duplication by URL key, and what
a topic's sources.txt does to a search: the most specific rule wins, a rule's note as shown, and the
message for a domain listed twice."""

import pytest
from standins import make_hit

import web
from test_hardening import PRIVATE, check_bad


def problem(url):
    """scrape's verdict on a URL, from its text alone: no name lookup, no connection."""
    return web.scrape_url_problem(url, "webtools.lan")


# --- the private-address guard ---------------------------------------------------------------------------

@pytest.mark.parametrize("url", [
    "http://10.255.1/",        # short form: 10.255.0.1 (a middle part of 255 is still a byte)
    "http://127.0.0.1%2e/",    # a URL parser decodes %2e to a dot: 127.0.0.1.
    "http://[::ffff:100.64.0.1]/",  # IPv4-mapped IPv6 of a shared (carrier-grade NAT) address
    "http://[::ffff:224.0.0.1]/",   # IPv4-mapped IPv6 of a multicast address
    "http://127.0.0.1%25eth0/",     # an address with a zone (%25 is %): the address is judged, not the zone
])
def test_encoded_forms_of_a_private_address_are_refused(url):
    assert problem(url) == PRIVATE


@pytest.mark.parametrize("url", ["http://" + "x" * 64 + ".internal/", "http://" + "X" * 64 + ".INTERNAL/",
                                 "http://a..localhost/"])
def test_an_internal_name_no_idna_takes_is_still_refused(url):
    # a 64-letter label or an empty one: IDNA refuses it, a WHATWG parser (Firecrawl's) does not
    assert problem(url) == PRIVATE


@pytest.mark.parametrize("url", [
    "http://10.0.256.1/",      # 256 is no byte: not an address (inet_aton refuses it), so a name
    "http://10.0.0.1.0/",      # five parts: not an address either
    "http://[::ffff:8.8.8.8]/",  # IPv4-mapped IPv6 of a public address is that public address
])
def test_what_only_looks_like_a_private_address_or_maps_a_public_one_is_not_refused(url):
    assert problem(url) is None


# --- the other URL checks ----------------------------------------------------------------------------------

def test_a_url_of_exactly_4096_characters_is_accepted_and_one_more_is_refused():
    url = "https://example.com/" + "a" * (4096 - len("https://example.com/"))
    assert len(url) == 4096 and problem(url) is None
    assert problem(url + "a") == "URL longer than 4096 characters"


def test_a_url_typed_without_its_scheme_is_shown_back_whole_with_https(run, md_root):
    check_bad(run, md_root, ["scrape", "Xataka.com/moviles", "--topic", "t"], web.EXIT_USAGE,
              "usage: Xataka.com/moviles: no scheme — add https://, e.g. https://Xataka.com/moviles")


def test_an_http_url_without_a_host_is_not_a_valid_url(run, md_root):
    check_bad(run, md_root, ["scrape", "http:///tides", "--topic", "t"], web.EXIT_USAGE,
              "usage: http:///tides: not a valid URL")


# --- search hits -------------------------------------------------------------------------------------------

def test_upper_case_tags_in_a_hits_title_and_snippet_are_stripped(run, searx):
    searx.set_results("tides", [make_hit("https://a.org/1", "<B>Tide</B> pools &amp; <EM>rock</EM> flats",
                                         "<P>Low tide</P> <P>at noon.</P>")])
    r = run("search", "tides")
    assert (r.code, r.err) == (0, "")
    assert r.out.splitlines()[:3] == [" 1. Tide pools & rock flats", "    https://a.org/1", "    Low tide at noon."]


def test_hits_at_two_ipv6_hosts_stay_two_hits(run, searx):
    """[2606:4700::1]:8080 and [2606:4700::1:8080] are different hosts; so are ::1 and ::2."""
    rows = ["http://[2606:4700::1]:8080/a", "http://[2606:4700::1:8080]/a", "http://[2606:4700::2]/a"]
    searx.set_results("tides", [make_hit(u) for u in rows])
    r = run("search", "tides", "--json")
    assert r.code == 0 and [h["url"] for h in r.json["results"]] == rows


def test_a_www_host_and_the_same_host_without_it_are_one_hit_however_short(run, searx):
    searx.set_results("tides", [make_hit("https://www.x/p"), make_hit("https://x/p"), make_hit("https://x/q")])
    r = run("search", "tides", "--json")
    assert r.code == 0 and [h["url"] for h in r.json["results"]] == ["https://www.x/p", "https://x/q"]


# --- sources.txt -------------------------------------------------------------------------------------------

POLICY = """block ads.example.org
prefer example.org Xerxes archive of the field station
block farm.example.com X-Press copies of other sites
"""


def test_the_most_specific_rule_wins_and_a_rules_note_is_shown_as_written(run, searx, md_root):
    (md_root / "t" / "sources.txt").write_text(POLICY, encoding="utf-8")
    policy = web.display_path(md_root / "t" / "sources.txt")
    searx.set_results("tides", [make_hit("https://ads.example.org/x", "Ad", "Buy."),
                                make_hit("https://lab.example.org/y", "Lab", "Tides."),
                                make_hit("https://farm.example.com/z", "Farm", "Copied.")])
    r = run("search", "tides", "--topic", "t")
    assert (r.code, r.err) == (0, "")
    assert r.out.splitlines() == [
        " 1. Lab [prefer: Xerxes archive of the field station]", "    https://lab.example.org/y", "    Tides.",
        "-- 1 hits, 1 new to the topic",
        f"-- dropped 1: blocked by {policy}:1",
        f"-- dropped 1: blocked by {policy}:3 (X-Press copies of other sites)"]


def test_a_domain_listed_twice_in_sources_txt_names_both_lines_and_the_fix(run, searx, md_root):
    (md_root / "t" / "sources.txt").write_text("block a.org\nprefer www.a.org\n", encoding="utf-8")
    policy = web.display_path(md_root / "t" / "sources.txt")
    check_bad(run, md_root, ["search", "tides", "--topic", "t"], web.EXIT_USAGE,
              f"usage: {policy}:2: a.org is listed again (first on line 1) — keep one rule a domain")
    assert searx.requests == []
