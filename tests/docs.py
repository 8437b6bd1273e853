#!/usr/bin/env python3
"""README's examples, produced by the code: one scripted /research session against the loopback
stand-ins' tide-pools box, run in a temporary copy of the project.

    python3 tests/docs.py           check: exit 1 with a diff when README differs from what the code prints
    python3 tests/docs.py --write   rewrite README's generated blocks, and the -h texts in tests/fixtures/help/

A block follows a marker: `<!-- example: NAME -->` then a fenced block (a command and its output,
or a file), `<!-- table: NAME -->` then a markdown table. The session starts the stand-ins as README
does (`python3 tests/standins.py`, free ports) and shows their ports as one fixed pair throughout
(SHOWN_PORTS), its run and day as one (SHOWN_RUN). Only what truly varies between runs is normalised
when checking: dates, run ids, hashes of dated files, timings. What README quotes in its prose
(messages, file names, exit codes) is checked against web.py and the session's files by test_docs.
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
POLICY = """# Source policy of the demo topic: `block` or `prefer`, a domain (its subdomains too), a note
block tidepool-facts.example.com   content farm: copies other sites
prefer shore.example.edu           university field station
"""


GUIDE = "md/demo/web/guide-example-org-tide-pools.md"
SURVEY = "md/demo/field-survey.md"   # a corpus file long enough to be read in parts
SURVEY_TEXT = "".join(f"# Chapter {c}\n\n" + "".join(f"Pool {c}.{n} held {n} sea stars and {c} urchins on the survey "
                                                     f"day, as counted at low tide by the volunteers.\n\n"
                                                     for n in range(1, 400)) for c in range(1, 4))
NOTE = "Contributes: who lives in each zone.\nPassages:\nnone\nNumbers:\nnone\nInstructions seen: none\n"


def agent_answer(agent, prompt, text):
    """What `hook post` reads after a subagent answered, as the real client sends it (cwd: the project's)."""
    with open(os.path.join(TESTS, "fixtures", "claude-code", "posttooluse-agent.json"), encoding="utf-8") as handle:
        payload = json.load(handle)
    payload["tool_input"] = dict(payload["tool_input"], subagent_type=agent, prompt=prompt)
    payload["tool_response"] = dict(payload["tool_response"], content=[{"type": "text", "text": text}])
    return payload


def picks(rows):
    """A picks file as Claude writes it: a JSON array, one candidate a line."""
    return "[\n" + ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n]\n"


# (name, action, argument), played in order: "serve" shows how the stand-ins were started (the session
# starts them first); "run" a command; "write" a file (path, text[, lines]); "show" a file (path, lines).
# `lines`: None for all, N for the first N, (first, last) for a range; "…" marks a cut. Not shown: "quiet"
# runs a command (or a hook fed a payload), "write-quiet" writes a file, "edit" replaces text in a file and
# "change" the text of a page the box serves (later commands reach a box of the session's own that serves it).
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
    ("search-2", "quiet", 'python3 web.py search "tide pool species survey" --topic demo'),
    ("picks-2", "write-quiet", ("md/demo/web/_picks-1.2.json", picks([
        {"url": "https://census.example.org/shore-species-2023", "relevance": "The 2023 census of shore species"},
        {"url": "https://example.org/tides", "relevance": "already saved"},
        {"url": "https://sealife.example.net/barnacles", "relevance": "How barnacles live in the high zone"}]))),
    ("scrape-2", "quiet", "python3 web.py scrape --topic demo --from md/demo/web/_picks-1.2.json --limit 2"),
    ("page", "show", ("md/demo/web/example-org-tides.md", 12)),
    ("outline", "run", "python3 web.py outline guide.md"),
    ("manifest", "run", "python3 web.py manifest --topic demo"),
    ("draft", "write", (SYNTHESIS, DRAFT, (18, 20))),
    ("cite-check-draft", "run", f"python3 web.py cite-check {SYNTHESIS}"),
    ("synthesis", "write", (SYNTHESIS, FIXED, (7, 11))),
    ("cite-check", "quiet", f"python3 web.py cite-check {SYNTHESIS}"),
    ("status", "run", "python3 web.py status --topic demo"),
    ("refresh", "run", "python3 web.py refresh --topic demo"),
    ("export-bibtex", "run",
     f"python3 web.py export --topic demo --format bibtex --cited-in {SYNTHESIS} --out demo.bib"),
    ("policy", "write", ("md/demo/sources.txt", POLICY)),
    # not shown: the rest of what a topic holds in time, for the file names README quotes (test_docs)
    ("evidence", "quiet", f"python3 web.py cite-check {SYNTHESIS} --table"),
    ("audit", "quiet", ("python3 web.py hook post", agent_answer("citation-auditor", f"Synthesis: {SYNTHESIS}",
                                                                 "Problems: 0\n"))),
    ("long-page", "quiet", "python3 web.py scrape https://guide.example.org/tide-pools --topic demo --force"),
    ("note", "quiet", ("python3 web.py hook post", agent_answer("page-reader", f"Page: {GUIDE}", NOTE))),
    *[step for n, (old, new) in enumerate((("rocky hollows", "rock pools"), ("rock pools", "rockpools")), 1) for step in (
        (f"changed-{n}", "change", ("https://example.org/tides", old, new)),   # the site changes the page …
        (f"refresh-{n}", "quiet", "python3 web.py refresh --topic demo --all"))],   # … and refresh saves it again
    ("corpus", "write-quiet", (SURVEY, SURVEY_TEXT)),
    ("find", "quiet", "python3 web.py find sea stars --topic demo"),
    ("corpus-note", "quiet", ("python3 web.py hook post", agent_answer(
        "page-reader", f"Page: {SURVEY}\nLines: {'–'.join(map(str, web.text_parts(web.text_facts(SURVEY_TEXT)['words'], web.text_facts(SURVEY_TEXT)['headings'])[0]))}", NOTE))),
]
SHOWN = ("serve", "run", "write", "show")   # the actions whose block README shows
SHOWN_PORTS = {"SEARXNG_URL": 38861, "FIRECRAWL_URL": 39347}   # the stand-ins' ports as README shows them
SHOWN_RUN = "20261204T183513Z-2462"   # the run's id and day as README shows them, whenever it was written
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
    """({example name: block text}, [every file and folder the session left, as a path from the project
    with folders ending in /, and every md/ path it printed]) from a session against the stand-ins, in a
    temporary copy of the project. `runner(project, env, argv, stdin)` → (exit code, stdout, stderr) runs one
    command; by default `python3 web.py` in its own process, as README shows it."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") and not k.startswith(
        ("WEB_", "SEARXNG_", "FIRECRAWL_", "CLAUDE_"))}
    env.update(WEBTOOLS_HOST="127.0.0.1", LANG="C.UTF-8", PYTHONPATH=os.path.join(TESTS, "guard"))
    standins, banner, urls = start_standins(next(arg for _, action, arg in SESSION if action == "serve"), env)
    project = tempfile.mkdtemp(prefix="web-docs-")
    try:
        shutil.copy(os.path.join(ROOT, "web.py"), project)
        os.mkdir(os.path.join(project, "md"))   # the md root, as the repository ships it
        env.update(urls)
        blocks, printed = play(project, env, runner or run_process, banner)
        files = [os.path.relpath(os.path.join(folder, name), project).replace(os.sep, "/") + end
                 for folder, folders, names in os.walk(project) for name, end in
                 [(n, "/") for n in folders] + [(n, "") for n in names]]
    finally:
        standins.terminate()
        standins.communicate(timeout=10)
        shutil.rmtree(project, ignore_errors=True)
    shown = {str(urlsplit(urls[name]).port): str(port) for name, port in SHOWN_PORTS.items()}
    return {name: show_run(show_ports(block, shown)) for name, block in blocks.items()}, files + printed


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


def show_run(text):
    """Text with the session's run id and today's date as SHOWN_RUN's: README keeps one day, as it keeps one port."""
    shown_day = f"{SHOWN_RUN[:4]}-{SHOWN_RUN[4:6]}-{SHOWN_RUN[6:8]}"
    return re.sub(r"\d{8}T\d{6}Z-[0-9a-f]{4}", SHOWN_RUN, text).replace(f"{web.now_utc():%Y-%m-%d}", shown_day)


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
    """({name: block} of the shown steps, [every md/ path the commands printed])."""
    blocks, fill, printed, site = {}, {}, [], None
    for name, action, argument in SESSION:
        if action == "change":
            if site is None:
                from standins import FirecrawlStandIn, SearxngStandIn, demo_box
                site = (SearxngStandIn(), FirecrawlStandIn())
                demo_box(*site)
                env = dict(env, FIRECRAWL_URL=site[1].url)
            url, old, new = argument
            page = site[1].pages[url]["data"]
            page["markdown"] = page["markdown"].replace(old, new)
            continue
        if action == "serve":
            blocks[name] = f"$ {argument}\n{banner}"
            continue
        if action in ("run", "quiet"):
            command, payload = argument if action == "quiet" and isinstance(argument, tuple) else (argument, None)
            stdin = json.dumps(dict(payload, cwd=project)).encode("utf-8") if payload else None
            code, out, err = runner(project, env, shlex.split(command)[1:], stdin)
            printed += re.findall(r"(?<![\w/])md/[\w./-]+[\w/]", err + out)
            if action == "run":
                blocks[name] = f"$ {argument}\n{err}{out}".replace(project, SHOWN_PROJECT) + (
                    f"[exit {code}]\n" if code else "")
            if name == "init":
                fill = {"run": json.loads(out)["run"], "date": f"{web.now_utc():%Y-%m-%d}"}
            continue
        if action == "write-quiet":
            with open(os.path.join(project, argument[0]), "w", encoding="utf-8") as handle:
                handle.write(argument[1])
            continue
        if action == "edit":
            path, old, new = argument
            with open(os.path.join(project, path), encoding="utf-8", newline="") as handle:
                text = handle.read()
            with open(os.path.join(project, path), "w", encoding="utf-8", newline="") as handle:
                handle.write(text.replace(old, new))
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
    for standin in site or ():
        standin.close()
    return blocks, printed


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


# --- what README quotes in its prose: messages, file names, exit codes, each checked against the code ---

FENCE = re.compile(r"^ {0,3}(```+)[^\n]*\n(.*?)^ {0,3}\1[ \t]*$", re.S | re.M)
PROGRAMS = ("python3", "web.py", "claude", "docker", "npm", "pip", "cd", "unset", "unshare")   # what README runs


def prose(markdown):
    """Markdown without its fenced blocks and HTML comments."""
    return re.sub(r"<!--.*?-->", "", FENCE.sub("", markdown), flags=re.S)


def code_spans(markdown):
    """The `code spans` of the prose, whitespace collapsed (a span may run over a line break)."""
    return [" ".join(m.group(1).split()) for m in re.finditer(r"(?<!`)`([^`]+)`(?!`)", prose(markdown))]


def is_command(span):
    """A command line (web.py's, or a program README names), or an option: what the user types, not output."""
    words = span.split()
    return (words[0] in web.COMMANDS or words[0] in PROGRAMS or words[0].startswith(("/", "$", "-"))
            or any(re.fullmatch(r"--?[a-z][\w-]*", word) for word in words))


def option_problem(span, parser):
    """The first option a web.py command line names that its command does not have, or None."""
    words = re.sub(r"^(?:python3 )?web\.py |^/research ", lambda m: "init " if "research" in m.group() else "",
                   span).split()
    commands = next(action for action in parser._actions if action.choices and "search" in action.choices).choices
    if words[0] not in commands:
        return None
    known = {option for action in commands[words[0]]._actions for option in action.option_strings}
    return next((word for word in re.findall(r"--[a-z][\w-]*", span) if word not in known), None)


def printable(path):
    """(chunks, strings) of a Python file: the literal parts of its strings (an f-string's between its
    fields), and each whole string but docstrings, whitespace collapsed: all the text it can print."""
    import ast
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    strings = {" ".join(n.value.split()) for n in ast.walk(tree)
               if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings}
    parts = {" ".join(v.value.split()) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)
             for v in n.values if isinstance(v, ast.Constant)}
    return "\n".join(strings | parts), strings


PLAIN = re.compile(r"[(\"'“‘]*[A-Za-z][A-Za-z'’-]*[)\"'”’,.;:?!]*")


def message_problem(span, printed):
    """For a span that quotes output (it starts `web.py:` or holds two plain words in a row): the first run
    of its words (between placeholders `…`, `<x>`, `N` and values such as `5`, `host:port`) that no string of
    the code holds, else None. A run may join strings at punctuation (`SearXNG: answered`) or be whole
    strings side by side (`FAIL firecrawl`)."""
    chunks, strings = printed
    words = re.sub(r"<[^<>]*>", " … ", span).split()
    runs, run = [], []
    for word in words + ["…"]:
        if PLAIN.fullmatch(word) and not re.fullmatch(r"[A-Z]|NN|true|false|null", word.strip("(),.;:\"")):
            run.append(word)
        elif run:
            runs, run = runs + [" ".join(run)], []
    if not span.startswith("web.py:") and not any(" " in r for r in runs):
        return None

    def found(text):
        text = text.strip(" (),.;:?!\"'“”‘’")
        return not text or re.search(rf"(?<!\w){re.escape(text)}(?!\w)", chunks) is not None

    def held(run):
        if found(run):   # in one string
            return True
        parts = re.split(r"(?<=[,;:?!)])\s+|\s+(?=\()", run)
        if len(parts) > 1 and all(held(part) for part in parts):   # strings joined at punctuation
            return True
        if all(word.strip(" ,;:") in strings for word in run.split()):   # whole strings side by side
            return True
        noun, _, rest = run.partition(" ")   # `3 quotes no longer …`: a count's noun, then a string
        return bool(rest) and noun[:-1] in strings and held(rest)
    return next((run for run in runs if not held(run)), None)


def trees(markdown):
    """[path, …] of each fenced block that draws a folder (its first line a path ending in /): each entry as
    a full path, a folder ending in /; lines indented past an entry's children continue its description."""
    paths = []
    for block in FENCE.finditer(markdown):
        lines = block.group(2).splitlines()
        if not lines or not re.fullmatch(r"\S+/", lines[0]):
            continue
        stack = [(0, lines[0])]
        paths.append(lines[0])
        for line in lines[1:]:
            indent = len(line) - len(line.lstrip())
            while len(stack) > 1 and stack[-1][0] >= indent:
                stack.pop()
            if not line.strip() or indent != stack[-1][0] + 2:
                continue
            path = stack[-1][1] + line.split()[0]
            paths.append(path)
            if path.endswith("/"):
                stack.append((indent, path))
    return paths


TOPIC_NAME = re.compile(r"(?:md/|web/|notes/|[_*<-])[\w.<>*/-]*(?:\.(?:md|json|jsonl|txt)|/)")
FILLS = {"date": r"\d{4}-\d{2}-\d{2}", "today": r"\d{4}-\d{2}-\d{2}", "YYYY-MM-DD": r"\d{4}-\d{2}-\d{2}",
         "slug": r"[a-z0-9-]+", "page": r"[a-z0-9-]+", "topic": r"[^/]+", "run": r"\d+", "round": r"\d+",
         "name": r"[^/]+", "first": r"\d+", "last": r"\d+"}


def topic_names(markdown):
    """The names of a topic's files and folders the prose quotes (`md/T/web/<slug>.md`, `_notes.md`, `-audit.md`
    …) and the paths its folder drawings show."""
    spans = [s for s in code_spans(markdown) if TOPIC_NAME.fullmatch(s)]
    return spans + trees(markdown)


def name_pattern(name, goal_slug):
    """A regex for the paths a quoted name stands for: <goal-slug> is the session's, <date>, <slug> … what
    fills them (KeyError for another), `*` and an upper-case letter (md/T/, .vN.md) any part of a name,
    a day a day, and a topic any topic (md/python-asyncio/…); a name not under md/ may end any path."""
    fills = dict(FILLS, **{"goal-slug": re.escape(goal_slug)})

    def fill(part):
        if part.startswith("<"):
            return fills[part[1:-1]]
        if part == "*":
            return "[^/]*"
        if part[:1].isdigit():
            return FILLS["date"]
        return "[^/]+" if part.isupper() else re.escape(part)
    name = re.sub(r"^md/[^/]+/", "md/<topic>/", name.rstrip("."))
    pattern = "".join(fill(part) for part in re.split(r"(<[^<>]+>|\*|\d{4}-\d{2}-\d{2}|[A-Z]+)", name))
    return ("^" if name.startswith("md/") else "" if name.startswith(("-", "*")) else "(?:^|/)") + pattern + "$"


def quoted_exit_codes(markdown):
    """Every exit code the prose names: `exit 2`, and each code or range opening a clause of a sentence that
    starts with one (`Exit 0 when …, 1 when …, 3–5 when …`)."""
    codes = set()
    for sentence in re.findall(r"\b[Ee]xits?\s+\d[^.]*", prose(markdown)):
        for first, last in re.findall(r"(?:[,;]\s+|\bor\s+|\b[Ee]xits?\s+)(\d+)(?:–(\d+))?(?=[\s,)]|$)", sentence):
            codes.update(range(int(first), int(last or first) + 1))
    return codes


def main():
    with open(README, encoding="utf-8") as handle:
        readme = handle.read()
    blocks, generated = session_outputs()[0], tables()
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
