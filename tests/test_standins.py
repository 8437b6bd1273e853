"""What the stand-ins' box answers: an unknown page is missing, an unknown query finds what holds its words."""

import copy
import json
import urllib.request

from standins import demo_box, fixture


def test_an_unknown_url_gets_firecrawls_captured_answer_for_a_missing_page(fire):
    url = "https://nonexistent.example.zz/page"
    request = urllib.request.Request(fire.url + "/v1/scrape", json.dumps({"url": url}).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        status, answer = response.status, json.load(response)
    expected = copy.deepcopy(fixture("firecrawl", "notfound.json")["response"]["body"])
    expected["data"]["metadata"].update(url=url, sourceURL=url)
    assert status == 200 and answer == expected


def urls_found(run, query):
    return [hit["url"] for hit in run("search", query, "--json").json["results"]]


def test_a_query_nobody_set_finds_the_demo_pages_that_hold_all_its_words(run, searx, fire):
    demo_box(searx, fire)
    assert urls_found(run, "sea stars") == ["https://census.example.org/shore-species-2023"]
    assert urls_found(run, "Barnacles high zone") == ["https://sealife.example.net/barnacles"]
    assert urls_found(run, "quantum chromodynamics") == []
    assert urls_found(run, "tide pool ecology")[:2] == ["https://example.org/tides",   # a set search is as set
                                                        "https://shore.example.edu/intertidal-zones"]


def test_without_pages_to_find_only_the_captured_query_has_hits(run, searx):
    assert urls_found(run, "tide pools") == []
    captured = [row["url"] for name in ("normal.json", "pageno2.json") for row in fixture("searxng", name)["results"]]
    assert urls_found(run, "hello world") == captured   # its pages 1 and 2, as captured
