"""What web.py's HTTP layer sends the box, pinned where a mutation run found it loose: a search's request
headers whole (the User-Agent, the Accept, the locale's Accept-Language and gzip that SearXNG's bot detection
wants), a scrape's the same plus its JSON body labelled as JSON and the API key as a bearer token, and
which locale variable names the language (LC_ALL, then LC_MESSAGES, then LANG, else en)."""

import json

import web


LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")


def box_headers(request, port):
    """The headers every request to the box carries (the standin records them as sent)."""
    return {"Host": f"127.0.0.1:{port}", "User-Agent": f"web.py/{web.VERSION}",
            "Accept": "text/html, application/json;q=0.9", "Accept-Language": "de-AT", "Accept-Encoding": "gzip",
            "Connection": "close", **request}


def test_a_search_sends_the_box_its_agent_the_locales_language_and_gzip(run, searx, monkeypatch):
    monkeypatch.setenv("LANG", "de_AT.UTF-8")
    assert run("search", "tide pools").code == web.EXIT_OK
    [request] = searx.requests
    assert request["method"] == "GET" and request["raw"] == b""
    assert request["headers"] == box_headers({}, searx.server.server_address[1])


def test_a_scrape_sends_its_json_labelled_as_json_with_the_api_key_as_a_bearer_token(run, fire, monkeypatch):
    monkeypatch.setenv("LANG", "de_AT.UTF-8")
    monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-secret")
    fire.require_key = "fc-secret"
    fire.set_articles("https://example.org/a")
    assert run("scrape", "https://example.org/a", "--topic", "t").code == web.EXIT_OK
    [request] = fire.requests
    assert request["method"] == "POST" and json.loads(request["raw"]) == {
        "url": "https://example.org/a", "formats": ["markdown"], "onlyMainContent": True, "timeout": 55000}
    assert request["headers"] == box_headers({
        "Content-Type": "application/json", "Authorization": "Bearer fc-secret",
        "Content-Length": str(len(request["raw"]))}, fire.server.server_address[1])


def test_the_language_comes_from_lc_all_then_lc_messages_then_lang_else_english(run, searx, monkeypatch):
    locale = {"LC_ALL": "de_DE.UTF-8", "LC_MESSAGES": "fr_FR.UTF-8", "LANG": "pt_BR.UTF-8"}
    sent = []
    for unset in (None, "LC_ALL", "LC_MESSAGES", "LANG"):
        locale.pop(unset, None)
        for name in LOCALE_VARS:
            monkeypatch.delenv(name, raising=False)
        for name, value in locale.items():
            monkeypatch.setenv(name, value)
        assert run("search", "tide pools").code == web.EXIT_OK
        sent.append(searx.requests[-1]["headers"]["Accept-Language"])
    assert sent == ["de-DE", "fr-FR", "pt-BR", "en"]

