#!/usr/bin/env python3
"""README's examples, produced by the code: one scripted /research session against the loopback
stand-ins' tide-pools box, run in a temporary copy of the project.

    python3 tests/docs.py           check: exit 1 with a diff when README differs from what the code prints
    python3 tests/docs.py --write   rewrite README's generated blocks, and the -h texts in tests/fixtures/help/

A block follows a marker: `<!-- example: NAME -->` then a fenced block (a command and its output,
or a file), `<!-- table: NAME -->` then a markdown table. The session starts the stand-ins as README
does (`python3 tests/standins.py`, free ports) and shows their ports as one fixed pair throughout
(SHOWN_PORTS). Only what truly varies between runs is normalised when checking: dates, run ids,
hashes of dated files, timings.
"""

import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from urllib.parse import urlsplit

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
README = os.path.join(ROOT, "README.md")
sys.path[:0] = [ROOT, TESTS]

import web  # noqa: E402

SYNTHESIS = f"md/demo/how-do-tide-pools-work-{web.now_utc():%Y-%m-%d}-synthesis.md"   # a run's, named by its day
TIDES, ZONES = "[1](web/example-org-tides.md)", "[2](web/shore-example-edu-intertidal-zones.md)"
CENSUS, BARNACLES = "[3](web/census-example-org-shore-species-2023.md)", "[4](web/sealife-example-net-barnacles.md)"
DRAFT = f"""# How do tide pools work?

> goal: how do tide pools work
> topic: demo · run {{run}} · {{date}}
> sources: see web/_manifest.md

## Summary

Tide pools are rocky hollows that hold seawater when the tide goes out {TIDES}.
The shore is divided into bands by how long each stays dry {ZONES}. Tide pools are the most
studied habitat on Earth {ZONES}.

## Findings

- The shore has four zones: "the splash zone, the high zone, the middle zone and the
  low zone" {TIDES}.
- A 2019 survey found 5 to 9 species in the high zone and more than 40 in the low zone {ZONES}.
- Sea stars are doing well: "Volunteers counted 1,420 ochre sea stars across 32 pools" {CENSUS}.
- Their count grew by 260 (= 1,240 − 980) in two years {CENSUS}.
- Acorn barnacles live for 20 years {BARNACLES}.

## Reliability

- [1] is flagged `instructions`: it tries to instruct its reader. Its facts agree with [2].

## Sources

1. Understanding Tide Pools | Coastal Notes — https://example.org/tides
2. Intertidal zonation — https://shore.example.edu/intertidal-zones
3. Shore species census 2023 — https://census.example.org/shore-species-2023
4. Barnacles: filter feeders of the high zone — https://sealife.example.net/barnacles
"""
FIXED = DRAFT.replace("counted 1,420 ochre", "counted 1,240 ochre").replace(
    "Acorn barnacles live for 20 years", "Acorn barnacles close their plates at low tide to keep from drying out")
POLICY = """# Source policy of the shore topic: `block` or `prefer`, a domain (its subdomains too), a note
block tidepool-facts.example.com   content farm: copies other sites
prefer shore.example.edu           university field station
"""


def picks(rows):
    """A picks file as Claude writes it: a JSON array, one candidate a line."""
    return "[\n" + ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n]\n"


# (name, action, argument), played in order: "serve" shows how the stand-ins were started (the session
# starts them first); "run" a command; "write" a file (path, text[, lines]); "show" a file (path, lines).
# `lines`: None for all, N for the first N, (first, last) for a range; "…" marks a cut.
SESSION = [
    ("standins", "serve", "python3 tests/standins.py"),
    ("doctor", "run", "python3 web.py doctor"),
    ("scrape-out", "run", "python3 web.py scrape https://guide.example.org/tide-pools --out guide.md"),
    ("init", "run", 'python3 web.py init "how do tide pools work" --topic demo --max-sources 4 --deep --max-rounds 2 --json'),
    ("search-1", "run", 'python3 web.py search "tide pool ecology" "intertidal zones" --topic demo --max 3'),
    ("picks-1", "write", ("md/demo/web/_picks-1.1.json", picks([
        {"url": "https://survey.example.gov/tidepools-2019", "relevance": "The 2019 field survey: primary counts"},
        {"url": "https://example.org/tides", "relevance": "A field guide to tide pools, with a species table"},
        {"url": "https://shore.example.edu/intertidal-zones", "relevance": "How ecologists zone the shore"}]))),
    ("scrape-1", "run", "python3 web.py scrape --topic demo --from md/demo/web/_picks-1.1.json --limit 2"),
    ("search-2", "run", 'python3 web.py search "tide pool species survey" --topic demo'),
    ("picks-2", "write", ("md/demo/web/_picks-1.2.json", picks([
        {"url": "https://census.example.org/shore-species-2023", "relevance": "The 2023 census of shore species"},
        {"url": "https://example.org/tides", "relevance": "already saved"},
        {"url": "https://sealife.example.net/barnacles", "relevance": "How barnacles live in the high zone"}]), (1, 3))),
    ("scrape-2", "run", "python3 web.py scrape --topic demo --from md/demo/web/_picks-1.2.json --limit 2"),
    ("page", "show", ("md/demo/web/example-org-tides.md", 12)),
    ("outline", "run", "python3 web.py outline guide.md"),
    ("manifest", "run", "python3 web.py manifest --topic demo"),
    ("draft", "write", (SYNTHESIS, DRAFT, (18, 20))),
    ("cite-check-draft", "run", f"python3 web.py cite-check {SYNTHESIS}"),
    ("synthesis", "write", (SYNTHESIS, FIXED, (7, 11))),
    ("cite-check", "run", f"python3 web.py cite-check {SYNTHESIS}"),
    ("status", "run", "python3 web.py status --topic demo"),
    ("refresh", "run", "python3 web.py refresh --topic demo"),
    ("export-bibtex", "run",
     f"python3 web.py export --topic demo --format bibtex --cited-in {SYNTHESIS} --out demo.bib"),
    ("policy", "write", ("md/shore/sources.txt", POLICY)),
]
SHOWN_PORTS = {"SEARXNG_URL": 38861, "FIRECRAWL_URL": 39347}   # the stand-ins' ports as README shows them
VOLATILE = [(re.compile(r'"elapsed_ms":\d+'), '"elapsed_ms":0'),
            (re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{4}"), "RUN"), (re.compile(r"\d{4}[-/]\d{2}[-/]\d{2}"), "DATE"),
            (re.compile(r"\[\[\d{4}, \d{1,2}, \d{1,2}\]\]"), "[[DATE]]"),
            (re.compile(r"sha256 [0-9a-f]{12}"), "sha256 HASH")]


def normalise(text):
    for pattern, stand_in in VOLATILE:
        text = pattern.sub(stand_in, text)
    return text


def differences(readme, blocks, generated):
    """[(name, README's block, the code's block)] wherever they differ; README's markers filled."""
    found = {m.group(2): m.group(3) for m in EXAMPLE.finditer(readme)}
    found.update({m.group(2): m.group(3) for m in TABLE.finditer(readme)})
    fresh = dict(blocks, **generated)
    return [(name, found[name], fresh[name]) for name in found if normalise(found[name]) != normalise(fresh[name])]


def session_outputs(runner=None):
    """{example name: block text} from a session against the stand-ins, in a temporary copy of the
    project. `runner(project, env, argv, stdin)` → (exit code, stdout, stderr) runs one command; by
    default `python3 web.py` in its own process, as README shows it."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") and not k.startswith(
        ("WEB_", "SEARXNG_", "FIRECRAWL_", "CLAUDE_"))}
    env.update(WEBTOOLS_HOST="127.0.0.1", LANG="C.UTF-8", PYTHONPATH=os.path.join(TESTS, "guard"))
    standins, banner, urls = start_standins(next(arg for _, action, arg in SESSION if action == "serve"), env)
    project = tempfile.mkdtemp(prefix="web-docs-")
    try:
        shutil.copy(os.path.join(ROOT, "web.py"), project)
        os.mkdir(os.path.join(project, "md"))   # the md root, as the repository ships it
        env.update(urls)
        blocks = play(project, env, runner or run_process, banner)
    finally:
        standins.terminate()
        standins.communicate(timeout=10)
        shutil.rmtree(project, ignore_errors=True)
    shown = {str(urlsplit(urls[name]).port): str(port) for name, port in SHOWN_PORTS.items()}
    return {name: show_ports(block, shown) for name, block in blocks.items()}


def start_standins(command, env):
    """The stand-ins started as README starts them, in their own process: (process, what they printed
    on starting, {SEARXNG_URL, FIRECRAWL_URL} from their export line)."""
    proc = subprocess.Popen([sys.executable] + shlex.split(command)[1:], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, encoding="utf-8")
    export, serving = proc.stdout.readline(), proc.stderr.readline()
    if not export.startswith("export "):
        proc.kill()
        raise RuntimeError(f"the stand-ins did not start: {serving.strip() or proc.communicate()[1]}")
    exported = dict(item.split("=", 1) for item in shlex.split(export)[1:])
    return proc, export + serving, {name: exported[name] for name in SHOWN_PORTS}


def show_ports(text, shown):
    """Text with each 127.0.0.1 port in `shown` (real → shown) replaced in one pass."""
    return re.sub(r"(?<=127\.0\.0\.1:)(\d+)", lambda m: shown.get(m.group(1), m.group(1)), text)


def run_process(project, env, argv, stdin):
    proc = subprocess.run([sys.executable] + argv, cwd=project, env=env, capture_output=True, input=stdin,
                          timeout=60)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def excerpt(text, lines):
    """The shown part of a file: all of it, its first N lines, or lines (first, last); "…" marks a cut."""
    if lines is None:
        return text
    rows = text.splitlines(keepends=True)
    first, last = (1, lines) if isinstance(lines, int) else lines
    return ("…\n" if first > 1 else "") + "".join(rows[first - 1:last]) + ("…\n" if last < len(rows) else "")


SHOWN_PROJECT = "/home/you/research"   # the session's project copy, where a whole path names it (doctor's md root)


def play(project, env, runner, banner):
    blocks, fill = {}, {}
    for name, action, argument in SESSION:
        if action == "serve":
            blocks[name] = f"$ {argument}\n{banner}"
            continue
        if action == "run":
            code, out, err = runner(project, env, shlex.split(argument)[1:], None)
            blocks[name] = f"$ {argument}\n{err}{out}".replace(project, SHOWN_PROJECT) + (f"[exit {code}]\n" if code else "")
            if name == "init":
                fill = {"run": json.loads(out)["run"], "date": f"{web.now_utc():%Y-%m-%d}"}
            continue
        path, content, lines = (argument + (None,))[:3]
        path = os.path.join(project, path)
        if action == "write":
            content = content.format(**fill) if "{run}" in content else content
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(content)
        else:   # show
            with open(path, encoding="utf-8") as handle:
                content, lines = handle.read(), content
        blocks[name] = excerpt(content, lines)
    return blocks


def tables():
    env = ["| variable | default | meaning |", "| --- | --- | --- |"]
    env += [f"| `{name}` | {default if default == '–' else f'`{default}`'} | {meaning} |"
            for name, default, meaning in web.ENVIRONMENT]
    codes = ["| code | meaning |", "| --- | --- |"] + [f"| {code} | {meaning} |" for code, meaning in web.EXIT_CODES]
    return {"environment": "\n".join(env) + "\n", "exit-codes": "\n".join(codes) + "\n"}


HELP = os.path.join(TESTS, "fixtures", "help")   # web.py -h and each command's -h, as a person reads them


def help_texts():
    """{"web.py": `web.py -h`, COMMAND: `web.py COMMAND -h`}, 100 columns wide, as web.main prints them here."""
    import contextlib
    import io
    texts, columns = {}, os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"   # argparse wraps to the terminal's width
    try:
        for name in ["web.py", *web.COMMANDS]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                web.main(["-h"] if name == "web.py" else [name, "-h"])
            texts[name] = normalise_help(out.getvalue())
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return texts


def normalise_help(text):
    return text.replace("\noptional arguments:\n", "\noptions:\n")   # Python 3.9's heading, 3.10's name for it


def help_differences():
    """[(name, kept text, printed text)] of the help texts tests/fixtures/help/ holds otherwise."""
    changed = []
    for name, text in help_texts().items():
        try:
            with open(os.path.join(HELP, name + ".txt"), encoding="utf-8") as handle:
                kept = handle.read()
        except FileNotFoundError:
            kept = ""
        if kept != text:
            changed.append((f"help/{name}.txt", kept, text))
    return changed


EXAMPLE = re.compile(r"(<!-- example: ([\w-]+) -->\n```\w*\n)(.*?)(^```)", re.S | re.M)
TABLE = re.compile(r"(<!-- table: ([\w-]+) -->\n)((?:\|.*\n)+)")


def fill(readme, blocks, generated):
    """README with every marked block replaced; KeyError for a marker nothing generates."""
    readme = EXAMPLE.sub(lambda m: m.group(1) + blocks[m.group(2)] + m.group(4), readme)
    return TABLE.sub(lambda m: m.group(1) + generated[m.group(2)], readme)


def markers(readme):
    return [m.group(2) for m in EXAMPLE.finditer(readme)], [m.group(2) for m in TABLE.finditer(readme)]


def main():
    with open(README, encoding="utf-8") as handle:
        readme = handle.read()
    blocks, generated = session_outputs(), tables()
    if "--write" in sys.argv[1:]:
        with open(README, "w", encoding="utf-8") as handle:
            handle.write(fill(readme, blocks, generated))
        os.makedirs(HELP, exist_ok=True)
        for name, text in help_texts().items():
            with open(os.path.join(HELP, name + ".txt"), "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        print(f"wrote {README} and {HELP}")
        return 0
    changed = differences(readme, blocks, generated) + help_differences()
    for name, old, new in changed:
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"README: {name}",
                                                   "what the code prints"))
    print("README's examples match the code" if not changed else f"{len(changed)} README blocks differ")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
