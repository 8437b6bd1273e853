"""The wire under every call to the box, pinned where a mutation run found it loose: a box name that does
not resolve, a port whose listener never takes the connection, and a box that hangs up without answering,
each as the one line a search prints and as doctor's check (which tells "nothing answers there" from "it
connected, then said nothing"); an unknown option written in bytes that are not UTF-8 still gets its one
usage line; --max that is not a number is named with its range; a page saved outside the project is shown
by its full path wherever the shell stands; and a run id carries the UTC time whatever the machine's zone."""

import datetime
import os
import socket
import sys
import threading
import time

import pytest

import web

BOX_NAME = "webtools.lan"


# --- helpers ---------------------------------------------------------------------------------------------

@pytest.fixture
def unknown_box(monkeypatch):
    """WEBTOOLS_HOST names a box the resolver does not know (a typo in the name): the lookup fails as
    getaddrinfo fails for such a name, without asking any DNS server."""
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if host == BOX_NAME:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setenv("WEBTOOLS_HOST", BOX_NAME)


@pytest.fixture
def full_listener(monkeypatch):
    """A port on 127.0.0.1 whose listener never accepts and whose queue is already full: the kernel drops
    the next SYN, so a connection to it is never made (as a box behind a firewall that drops packets)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = [socket.create_connection(("127.0.0.1", port), timeout=2)]
    for _ in range(3):   # a kernel that keeps a longer queue than asked is filled too
        extra = socket.socket()
        extra.setblocking(False)
        extra.connect_ex(("127.0.0.1", port))
        fillers.append(extra)
    monkeypatch.setenv("SEARXNG_PORT", str(port))
    monkeypatch.setenv("FIRECRAWL_PORT", str(port))
    yield port
    for sock in fillers + [listener]:
        sock.close()


class HangUpStandIn:
    """A box on 127.0.0.1 that reads each request whole and closes the connection without a word."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.requests = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:   # closed
                return
            with conn:
                seen = b""
                while b"\r\n\r\n" not in seen:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    seen += chunk
                self.requests += 1

    def close(self):
        self.sock.close()


def doctor_lines(r):
    return [line for line in r.out.splitlines() if line.startswith(("ok ", "FAIL "))]


# --- a box that cannot be reached -------------------------------------------------------------------------

def nothing_answers(where, why):
    """doctor's lines for its two box checks when nothing answers at `where`."""
    return [f"FAIL {name:<10} nothing answers at {where} ({why}) — is WEBTOOLS_HOST/{port} right, and the service "
            f"up there?" for name, port in (("searxng", "SEARXNG_PORT"), ("firecrawl", "FIRECRAWL_PORT"))]


def test_a_box_name_that_does_not_resolve_is_named_with_the_resolvers_words(run, unknown_box):
    r = run("search", "tide pools")
    assert (r.code, r.out) == (web.EXIT_UNREACHABLE, "")
    assert r.err == (f"web.py: SearXNG: at http://{BOX_NAME}:9 could not be reached ([Errno -2] Name or service "
                     f"not known) (3 attempts) — is the webtools box up? check WEBTOOLS_HOST/SEARXNG_PORT\n")


def test_doctor_says_nothing_answers_at_a_box_name_that_does_not_resolve(run, unknown_box):
    r = run("doctor")
    assert r.code == web.EXIT_UNREACHABLE
    assert doctor_lines(r)[1:3] == nothing_answers(f"{BOX_NAME}:9",
                                                   "could not be reached ([Errno -2] Name or service not known)")


@pytest.mark.skipif(sys.platform != "linux", reason="Linux drops a SYN past a full accept queue; others refuse it")
def test_doctor_tells_a_connection_never_made_from_a_slow_answer(run, full_listener, monkeypatch):
    monkeypatch.setenv("WEB_TIMEOUT", "0.3")
    r = run("doctor")
    assert r.code == web.EXIT_UNREACHABLE
    assert doctor_lines(r)[1:3] == nothing_answers(f"127.0.0.1:{full_listener}", "no connection within 0.3 s")


def test_a_box_that_hangs_up_without_answering_is_named_with_what_python_saw(run, monkeypatch):
    box = HangUpStandIn()
    monkeypatch.setenv("SEARXNG_URL", box.url)
    try:
        r = run("search", "tide pools")
    finally:
        box.close()
    assert (r.code, r.out, box.requests) == (web.EXIT_UNREACHABLE, "", 3)
    assert r.err == (f"web.py: SearXNG: at {box.url} dropped the connection mid-response (RemoteDisconnected) "
                     f"(3 attempts) — is the webtools box up? check SEARXNG_URL\n")


# --- the command line ---------------------------------------------------------------------------------------

def test_an_unknown_option_in_bytes_that_are_not_utf8_is_one_usage_line(run):
    # a shell under a Latin-1 locale passes "--café" as bytes Python keeps as a surrogate: shown as "?"
    r = run("search", "tide pools", "--caf\udce9")
    assert (r.code, r.out, r.err) == (web.EXIT_USAGE, "",
                                      "web.py: usage: unrecognized arguments: --caf? — see web.py -h\n")


def test_max_that_is_not_a_number_is_named_with_its_range(run):
    r = run("search", "tide pools", "--max", "ten")
    assert (r.code, r.out, r.err) == (web.EXIT_USAGE, "",
                                      "web.py: usage: --max 'ten' is not a whole number — use 1 to 100\n")


def test_a_page_is_shown_relative_to_the_folder_the_shell_stands_in_or_whole_outside_it(run, fire, md_root, tmp_path,
                                                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)   # the md root (tmp_path/md) lies under the current folder, not the project
    fire.set_articles("https://example.org/a", "https://example.org/b")
    r = run("scrape", "https://example.org/a", "--topic", "t")
    assert (r.code, r.out) == (0, "saved    [1] md/t/web/example-org-a.md  (262 words)  https://example.org/a\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")   # a sibling of the md root: the whole path, never ../md/…
    r = run("scrape", "https://example.org/b", "--topic", "t")
    assert r.out == f"saved    [2] {md_root / 't' / 'web' / 'example-org-b.md'}  (262 words)  https://example.org/b\n"


@pytest.fixture
def far_east_clock():
    """The machine's clock set to UTC+14 (Kiritimati), where the local date is a day ahead of UTC's."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "<+14>-14"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_a_run_id_carries_the_utc_time_whatever_the_machines_zone(run, far_east_clock):
    r = run("init", "tide", "pools", "--topic", "t", "--json")
    started = datetime.datetime.strptime(r.json["run"].split("-")[0], "%Y%m%dT%H%M%SZ")
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert r.code == 0 and abs(now - started) < datetime.timedelta(minutes=10), r.json["run"]
