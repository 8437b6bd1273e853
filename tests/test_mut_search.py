"""search, where the mutation run found its behaviour unpinned: rows and engine entries SearXNG sends
that cannot be used are skipped without ending the page, several --site askings keep --max hits in all,
the fused order is reciprocal rank fusion with k = 60, the status an all-engines-unresponsive failure
reports, and --exclude-site as given to a topic's search."""

import web
from standins import make_hit
from test_hardening import check_bad
from test_scope import ROWS


def urls(answer):
    return [h["url"] for h in answer["results"]]


def fillers(query, count):
    """Hits only this query finds, to put the hits under test at given positions."""
    return [make_hit(f"https://{query}.org/{i}") for i in range(count)]


# --- what collect_hits keeps of a page -----------------------------------------------------------------

def test_a_row_that_is_not_an_object_or_repeats_a_url_is_skipped_and_the_rows_after_it_kept(run, searx):
    searx.set_results("tide pools", ["not a row", make_hit("https://a.org/1", "Pools A", "Low tide."),
                                     make_hit("https://www.a.org/1/#top", "Pools A again", "Again."),
                                     make_hit("https://b.org/2", "Pools B", "High tide.")])
    r = run("search", "tide pools")
    assert (r.code, r.err) == (0, "")
    assert r.out.splitlines() == [" 1. Pools A", "    https://a.org/1", "    Low tide.",
                                  " 2. Pools B", "    https://b.org/2", "    High tide."]


def test_an_unresponsive_engine_entry_that_is_empty_or_not_a_pair_is_skipped(run, searx):
    searx.set_results("tide pools", [make_hit("https://a.org/1", "Pools A", "Low tide.")],
                      unresponsive=[[], "brave", ["qwant", "timeout"]])
    r = run("search", "tide pools")
    assert (r.code, r.err) == (0, "")
    assert r.out.splitlines() == [" 1. Pools A", "    https://a.org/1", "    Low tide.",
                                  "-- unresponsive engines: qwant (timeout)"]


# --- several sites ------------------------------------------------------------------------------------

def test_several_sites_keep_max_hits_in_all_taking_each_sites_best_first(run, searx):
    searx.set_results("tides site:example.org", [make_hit("https://example.org/1"), make_hit("https://example.org/2")])
    searx.set_results("tides site:example.edu", [make_hit("https://example.edu/1"), make_hit("https://example.edu/2")])
    r = run("search", "tides", "--site", "example.org", "--site", "example.edu", "--max", "2", "--json")
    assert r.code == 0 and urls(r.json) == ["https://example.org/1", "https://example.edu/1"]


# --- the fused order ----------------------------------------------------------------------------------

def test_hits_are_ordered_by_reciprocal_rank_fusion_with_k_60(run, searx):
    """With k = 60, a hit twice at the top and twice last (1, 1, 10, 10) outranks one steadily near the
    top (2, 6, 6, 7): 2/61 + 2/70 > 1/62 + 2/66 + 1/67. With k = 61 it would be the other way round."""
    top, steady = make_hit("https://top.org/"), make_hit("https://steady.org/")
    searx.set_results("q1", [top, steady] + fillers("one", 8))
    searx.set_results("q2", [top] + fillers("two", 4) + [steady] + fillers("two-more", 4))
    searx.set_results("q3", fillers("three", 5) + [steady] + fillers("three-more", 3) + [top])
    searx.set_results("q4", fillers("four", 6) + [steady] + fillers("four-more", 2) + [top])
    r = run("search", "q1", "q2", "q3", "q4", "--json")
    assert r.code == 0
    assert [(h["rank"], h["url"], h["q"]) for h in r.json["results"][:2]] == [
        (1, "https://top.org/", [1, 2, 3, 4]), (2, "https://steady.org/", [1, 2, 3, 4])]


def test_hits_at_the_same_positions_in_another_order_tie_and_the_first_seen_ranks_first(run, searx):
    """A at 1, 7, 2 and B at 2, 1, 7 have the same fused score: A, seen first, ranks first (summed as
    they came, the two scores differed in their last bit and B ranked first)."""
    a, b = make_hit("https://a.org/"), make_hit("https://b.org/")
    searx.set_results("q1", [a, b] + fillers("one", 8))                                   # A 1, B 2
    searx.set_results("q2", [b] + fillers("two", 5) + [a] + fillers("two-more", 3))       # B 1, A 7
    searx.set_results("q3", fillers("three", 1) + [a] + fillers("three-more", 4) + [b])   # A 2, B 7
    r = run("search", "q1", "q2", "q3", "--json")
    assert [(h["url"], h["q"]) for h in r.json["results"][:2]] == [("https://a.org/", [1, 2, 3]),
                                                                    ("https://b.org/", [1, 2, 3])]


# --- failures and options -----------------------------------------------------------------------------

def test_no_results_from_unresponsive_engines_reports_searxngs_status_200(run, searx):
    searx.set_results("q", [], unresponsive=[["localdead", "HTTP connection error"], ["localslow", "timeout"]])
    r = run("search", "q", "--json")
    line = ("SearXNG: no results for 'q'; engines unresponsive: localdead (HTTP connection error), localslow (timeout)"
            " — the search engines behind SearXNG are failing: check its logs")
    assert (r.code, r.err) == (web.EXIT_UNREACHABLE, f"web.py: {line}\n")
    assert r.json["errors"] == [{"q": 1, "status": 200, "error": line}]


def test_a_bad_exclude_site_is_a_usage_error_naming_the_option(run, searx, md_root):
    check_bad(run, md_root, ["search", "tides", "--exclude-site", "nope"], web.EXIT_USAGE,
              "usage: --exclude-site: 'nope' is not a domain — write a host name such as example.org "
              "(its subdomains are included)")
    assert searx.requests == []


def test_exclude_site_drops_hits_from_a_topics_search_too(run, searx):
    searx.set_results("tides", ROWS)
    r = run("search", "tides", "--topic", "t", "--exclude-site", "example.org", "--exclude-site", "example.edu",
            "--json")
    assert r.code == 0 and urls(r.json) == ["https://tidepool-facts.example.com/top-10"]
    assert r.json["dropped"] == [{"url": url, "reason": f"excluded by --exclude-site {domain}"} for url, domain in (
        ("https://example.org/tides", "example.org"), ("https://shore.example.edu/zones", "example.edu"),   # a subdomain
        ("https://www.example.org/more", "example.org"))]
