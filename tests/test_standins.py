"""tests/standins.py as a newcomer runs it (README's "Try it on the stand-ins"), and what its box answers."""

import copy
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest
from standins import demo_box, fixture

import web
from conftest import TESTS, run_process

STANDINS = os.path.join(TESTS, "standins.py")


def start(*args):
    """The stand-ins in their own process, started as a shell script's `&` starts them: SIGINT ignored.
    Returns the process and the variables of its export line."""
    proc = subprocess.Popen([sys.executable, STANDINS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            encoding="utf-8", preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    export = proc.stdout.readline()
    assert export.startswith("export WEBTOOLS_HOST=127.0.0.1 SEARXNG_URL="), (export, proc.stderr.read())
    return proc, dict(item.split("=", 1) for item in shlex.split(export)[1:])


def reserved_port():
    """A port nothing else is given (bound, not listening), that a server may still take: no race."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@pytest.fixture(scope="module")
def served():
    """One stand-ins process for the module: SearXNG on a chosen port, Firecrawl on a free one."""
    with reserved_port() as chosen:
        proc, exported = start("--searxng-port", str(chosen.getsockname()[1]), "--firecrawl-port", "0")
        yield chosen.getsockname()[1], exported
        proc.terminate()
        proc.communicate(timeout=10)


def test_help_prints_usage_and_serves_nothing():
    proc = subprocess.run([sys.executable, STANDINS, "-h"], capture_output=True, encoding="utf-8", timeout=10)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: standins.py [-h] [--searxng-port PORT]")
    assert "--firecrawl-port PORT" in proc.stdout and proc.stderr == ""


def test_the_export_line_names_the_chosen_port_and_a_free_one(served):
    port, exported = served
    assert exported["SEARXNG_URL"] == f"http://127.0.0.1:{port}"
    fire_port = int(exported["FIRECRAWL_URL"].rsplit(":", 1)[1])
    assert exported["WEBTOOLS_HOST"] == "127.0.0.1" and fire_port not in (0, port)


@pytest.mark.parametrize("option", ["--searxng-port", "--firecrawl-port"])
def test_a_busy_port_is_a_one_line_error(option):
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        proc = subprocess.run([sys.executable, STANDINS, option, str(port)], capture_output=True, encoding="utf-8",
                              timeout=10)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"standins.py: cannot serve on 127.0.0.1:{port}: it is busy — choose another port, "
                           f"or 0 for a free one\n")


def test_a_port_that_is_no_port_is_a_usage_error():
    proc = subprocess.run([sys.executable, STANDINS, "--firecrawl-port", "70000"], capture_output=True,
                          encoding="utf-8", timeout=10)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines()[-1] == ("standins.py: error: argument --firecrawl-port: not a port (0 to 65535): "
                                            "'70000'")


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_it_even_when_started_with_sigint_ignored(number):
    proc, exported = start()
    try:
        proc.send_signal(number)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out == ""
    assert err == "serving until Ctrl-C; run the export line above in another terminal\n"   # no traceback
    with pytest.raises(OSError):   # the servers are gone
        urllib.request.urlopen(exported["SEARXNG_URL"] + "/config", timeout=5)


def test_the_box_passes_doctor_and_an_unknown_page_is_a_404(served, tmp_path):
    """The newcomer's steps: doctor, then a page of the box, then one that does not exist."""
    _, exported = served
    env = {name: exported[name] for name in ("SEARXNG_URL", "FIRECRAWL_URL")}
    assert run_process("doctor", env=env).code == 0
    assert run_process("scrape", "https://shore.example.edu/intertidal-zones", env=env).code == 0
    r = run_process("scrape", "https://nonexistent.example.zz/page", env=env)
    assert r.code == web.EXIT_PARTIAL and r.out == "" and r.err == (
        "web.py: scrape: https://nonexistent.example.zz/page: target-status: the site answered 404 Not Found\n")


def test_an_unknown_url_gets_firecrawls_captured_answer_for_a_missing_page(fire):
    url = "https://nonexistent.example.zz/page"
    request = urllib.request.Request(fire.url + "/v1/scrape", json.dumps({"url": url}).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        status, answer = response.status, json.load(response)
    expected = copy.deepcopy(fixture("firecrawl", "notfound.json")["response"]["body"])
    expected["data"]["metadata"].update(url=url, sourceURL=url)
    assert status == 200 and answer == expected


def urls_found(run, query, *options):
    return [hit["url"] for hit in run("search", query, *options, "--json").json["results"]]


def test_a_query_nobody_set_finds_the_demo_pages_that_hold_all_its_words(run, searx, fire):
    demo_box(searx, fire)
    assert urls_found(run, "sea stars") == ["https://census.example.org/shore-species-2023"]
    assert urls_found(run, "Barnacles high zone") == ["https://sealife.example.net/barnacles",   # in the order added
                                                      "https://guide.example.org/tide-pools"]
    assert urls_found(run, "quantum chromodynamics") == []
    assert urls_found(run, "tide pool ecology")[:2] == ["https://example.org/tides",   # a set search is as set
                                                        "https://shore.example.edu/intertidal-zones"]


def test_without_pages_to_find_only_the_captured_query_has_hits(run, searx):
    assert urls_found(run, "tide pools") == []
    captured = [row["url"] for name in ("normal.json", "pageno2.json") for row in fixture("searxng", name)["results"]]
    assert urls_found(run, "hello world") == captured   # its pages 1 and 2, as captured


def test_site_finds_that_sites_pages_and_its_subdomains_as_searxngs_engines_do(run, searx, fire):
    """SearXNG hands `site:` on to its engines; those that know it keep the site and its subdomains."""
    demo_box(searx, fire)
    everywhere = urls_found(run, "tide pools")
    on_site = [url for url in everywhere if web.in_domain(web.site_key(url), "example.org")]
    assert len(on_site) >= 2 and "https://shore.example.edu/intertidal-zones" in everywhere
    assert urls_found(run, "tide pools", "--site", "example.org") == on_site
    assert searx.queries_seen()[-1] == "tide pools site:example.org"
    assert urls_found(run, "site:guide.example.org") == ["https://guide.example.org/tide-pools"]   # a site alone


@pytest.mark.parametrize("pasted", ["https://www.example.org/", "https://www.example.org/tides?from=a#top",
                                    "www.example.org", "EXAMPLE.org:443"])
def test_site_and_exclude_site_take_a_pasted_url_as_its_host(run, searx, fire, pasted):
    demo_box(searx, fire)
    everywhere = urls_found(run, "tide pools")
    on_site = [url for url in everywhere if web.in_domain(web.site_key(url), "example.org")]
    assert urls_found(run, "tide pools", "--site", pasted) == on_site
    assert urls_found(run, "tide pools", "--exclude-site", pasted) == [url for url in everywhere if url not in on_site]


def test_a_pasted_address_without_a_host_is_refused_with_the_fix(run):
    r = run("search", "tide pools", "--exclude-site", "file:///home/me/bookmarks.html")
    assert (r.code, r.out) == (web.EXIT_USAGE, "")
    assert r.err == ("web.py: usage: --exclude-site: 'file:///home/me/bookmarks.html' is not a domain — write a host "
                     "name such as example.org (its subdomains are included)\n")
