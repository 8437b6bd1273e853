"""Shared fixtures: the loopback guard, the stand-ins, and ways to run web.py."""

import io
import json
import os
import subprocess
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
GUARD = os.path.join(TESTS, "guard")
sys.path[:0] = [ROOT, TESTS]

import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location("sitecustomize_guard", os.path.join(GUARD, "sitecustomize.py"))
_guard_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_guard_module)  # the guard, installed for this process too
sys.modules["sitecustomize_guard"] = _guard_module
import web  # noqa: E402
from standins import FirecrawlStandIn, SearxngStandIn, fixture  # noqa: E402

PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
              "NO_PROXY")


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch, tmp_path):
    """Every test talks to 127.0.0.1 only: the box address is replaced, proxies are cleared,
    and the audit-hook guard refuses any other connection or name lookup."""
    for name in PROXY_VARS + ("SEARXNG_URL", "FIRECRAWL_URL", "FIRECRAWL_API_KEY", "WEB_TIMEOUT", "WEB_WORKERS",
                              "SEARXNG_PORT", "FIRECRAWL_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WEBTOOLS_HOST", "127.0.0.1")
    monkeypatch.setenv("SEARXNG_PORT", "9")      # discard port: nothing listens unless a stand-in is used
    monkeypatch.setenv("FIRECRAWL_PORT", "9")
    monkeypatch.setenv("WEB_RETRIES", "2")
    (tmp_path / "md" / "t").mkdir(parents=True)  # the md root exists, as md/ does in the repository, with a
    #                                              topic t: only init starts a topic, scrape and search refuse a new one
    monkeypatch.setenv("WEB_MD_ROOT", str(tmp_path / "md"))
    monkeypatch.setenv("PYTHONPATH", GUARD)
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setattr(web, "BACKOFF_BASE", 0.01)  # fast retries; Retry-After is still honoured
    monkeypatch.setattr(web, "open", _open_naming_its_encoding, raising=False)
    web._opener = None
    yield


def _open_naming_its_encoding(file, mode="r", *args, **kwargs):
    """web.py's open(): a text file is opened with its encoding named. Here the locale is UTF-8, so a file
    opened without one would pass; on Windows or under LANG=C it would be read as cp1252 or ASCII."""
    if "b" not in mode and (args[2] if len(args) > 2 else kwargs.get("encoding")) is None:
        raise AssertionError(f"web.py opened {file!r} as text without naming its encoding")
    return open(file, mode, *args, **kwargs)


def _serve(monkeypatch, standin_class, variable):
    server = standin_class()
    monkeypatch.setenv(variable, server.url)
    yield server
    server.close()


@pytest.fixture
def searx(monkeypatch):
    yield from _serve(monkeypatch, SearxngStandIn, "SEARXNG_URL")


@pytest.fixture
def fire(monkeypatch):
    yield from _serve(monkeypatch, FirecrawlStandIn, "FIRECRAWL_URL")


@pytest.fixture
def doctor_box(searx, fire):
    """Stand-ins that answer doctor's two probes: its query gets the captured hits, its test page an article."""
    searx.set_results("searxng", fixture("searxng", "normal.json")["results"])
    fire.set_articles("https://example.com")
    return searx, fire


@pytest.fixture
def md_root(tmp_path):
    return tmp_path / "md"


class Result:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err

    @property
    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return f"Result(code={self.code}, out={self.out[:400]!r}, err={self.err[:400]!r})"


class _Terminal(io.TextIOWrapper):
    """A captured stream that says it is a terminal, as stderr is for a person at a shell."""

    def isatty(self):
        return True


def _stream(tty=False):
    return (_Terminal if tty else io.TextIOWrapper)(io.BytesIO(), encoding="utf-8", newline="")


def _value(stream):
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8")


@pytest.fixture
def run(monkeypatch):
    """Run web.main(argv) in this process, capturing UTF-8 stdout and stderr (a terminal with `tty`)."""
    def run_(*argv, stdin=None, tty=False):
        out, err = _stream(), _stream(tty)
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
        code = web.main([str(a) for a in argv])
        return Result(code, _value(out), _value(err))
    return run_


def read_ledger(path):
    """Every event of a topic's ledger, read whole as a person would (a line that is no JSON object is skipped)."""
    events = []
    try:
        with open(path, "rb") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return [event for event in events if isinstance(event, dict)]


def run_process(*argv, env=None, timeout=30, stdin=None):
    """Run `python3 web.py …` as a user would, in its own process (guarded by sitecustomize)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "web.py"), *map(str, argv)], capture_output=True,
                          env=full_env, timeout=timeout, input=stdin)
    return Result(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))


@pytest.fixture
def cli():
    return run_process
