#!/usr/bin/env python3
"""Benchmark of web.py against its physical limits, measured side by side in one run.

Not a test (pytest does not collect it): `python3 tests/bench.py [--quick] [--json-out PATH]`.
It starts its own loopback stand-ins with injected latency, runs web.py as a user does (one
process per call), and reports each figure as a ratio to the limit measured in the same run.
"""

import argparse
import json
import math
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
sys.path[:0] = [TESTS, ROOT]

import citecheck_corpus  # noqa: E402
from standins import (FirecrawlStandIn, Reply, SearxngStandIn, SilentStandIn, captured_reply, make_hit,  # noqa: E402
                      page_body)
from web import DOCTOR_WAIT, NOTE_LINE as NOTE, OUTLINE_MIN_CHARS, OUTLINE_SHARE  # noqa: E402
import outline_corpus  # noqa: E402

PY = sys.executable   # the interpreter itself, not a shim in front of it
WEB = os.path.join(ROOT, "web.py")


def run_web(env, *argv):
    started = time.perf_counter()
    proc = subprocess.run([PY, WEB, *argv], env=env, capture_output=True)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"bench: web.py {' '.join(argv)} failed ({proc.returncode}): {proc.stderr.decode()}")
    return wall, proc.stdout


def topic(env, name):
    """A topic folder for a scrape by hand (only init starts a topic; scrape refuses a new one)."""
    os.makedirs(os.path.join(env["WEB_MD_ROOT"], name), exist_ok=True)
    return name


def median_wall(env, reps, *argv):
    return statistics.median(run_web(env, *argv)[0] for _ in range(reps))


def fan_out(env, searx, quick):
    latency = 0.1 if quick else 0.3
    searx.delay = latency
    for i in range(8):
        searx.set_results(f"q{i}", [make_hit(f"https://fan.example/{i}/{n}") for n in range(10)])
    reps = 1 if quick else 3
    single = median_wall(env, reps, "search", "q0", "--max", "10", "--json")
    rows = []
    for k in (4, 8):
        wall = median_wall(env, reps, "search", *[f"q{i}" for i in range(k)], "--max", "10", "--json")
        limit = math.ceil(k / 4) * single
        rows.append((f"fan-out search, K={k}, W=4, {int(latency * 1000)} ms/request",
                     wall / limit, "<= 1.15", wall / limit <= 1.15,
                     f"{wall:.3f} s vs {math.ceil(k / 4)} x {single:.3f} s (one single-query call)"))
    searx.delay = 0
    return rows


def budgeted_scrape(env, fire, quick):
    latency = 0.3 if quick else 1.0
    fire.delay = latency
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        picks = os.path.join(tmp, "picks.json")
        urls = [f"https://budget.example/a{i}" for i in range(12)]
        fire.set_articles(*urls)
        with open(picks, "w", encoding="utf-8") as handle:
            json.dump([{"url": u} for u in urls], handle)
        wall, out = run_web(env, "scrape", "--topic", topic(env, "bench-a"), "--from", picks, "--workers", "4",
                            "--limit", "12", "--json")
        saved = len(json.loads(out)["saved"])
        limit = 3 * latency
        rows.append((f"budgeted scrape, 12 candidates, {latency:g} s/page, W=4, --limit 12", wall / limit, "<= 1.10",
                     wall / limit <= 1.10 and saved == 12, f"{wall:.3f} s vs 3 x {latency:g} s; {saved} saved"))
        urls = [f"https://budget.example/b{i}" for i in range(15)]
        fire.set_articles(*urls)
        for url in urls[0:6:2]:
            fire.set_page(url, captured_reply("notfound.json"))   # answers at once: a failed target
        with open(picks, "w", encoding="utf-8") as handle:
            json.dump([{"url": u} for u in urls], handle)
        wall, out = run_web(env, "scrape", "--topic", topic(env, "bench-b"), "--from", picks, "--workers", "4",
                            "--limit", "12", "--json")
        report = json.loads(out)
        rows.append(("  same, 3 of the first 6 failing fast, 15 candidates", wall / limit, "<= 1.20",
                     wall / limit <= 1.20 and len(report["saved"]) == 12,
                     f"{wall:.3f} s; {len(report['saved'])} saved, {len(report['failed'])} failed"))
    fire.delay = 0
    return rows


def deep_paging(env, searx):
    searx.delay = 0.05
    rows = []
    for available, expected in ((70, 5), (25, 4)):
        query = f"deep{available}"
        hits = [make_hit(f"https://deep.example/{query}/{n}") for n in range(available)]
        searx.set_results(query, *[hits[i:i + 10] for i in range(0, available, 10)])
        before = len(searx.requests)
        wall, out = run_web(env, "search", query, "--max", "50", "--json")
        made = len(searx.requests) - before
        got = len(json.loads(out)["results"])
        rows.append((f"deep paging, --max 50, {available} available at 10/page", made / expected,
                     f"== 1.00 ({expected} requests)", made == expected,
                     f"{made} requests, {got} results, {wall:.3f} s"))
    searx.delay = 0
    return rows


def startup(reps):
    """web.py --version against its floor: the interpreter compiling web.py (Python never caches the
    bytecode of the script it runs, so a longer web.py costs compile time that no code change avoids)."""
    floor_code = f"compile(open({WEB!r}, encoding='utf-8').read(), 'web.py', 'exec')"
    version, floor, bare = [], [], []
    for _ in range(reps):   # interleaved, so that machine noise hits all three alike
        for argv, times in (([PY, WEB, "--version"], version), ([PY, "-c", floor_code], floor), ([PY, "-c", "pass"], bare)):
            started = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=True)
            times.append(time.perf_counter() - started)
    v, f, b = (statistics.median(x) for x in (version, floor, bare))
    return [(f"start-up, web.py --version vs compiling web.py, median of {reps}", v / f, "<= 1.25", v / f <= 1.25,
             f"{v * 1000:.1f} ms vs {f * 1000:.1f} ms"),
            ("  the same vs python -c pass", v / b, "(reported)", True, f"{v * 1000:.1f} ms vs {b * 1000:.1f} ms")]


def hook_start(env, reps, baseline):
    """The PreToolUse hook on an ordinary Read (a file outside md/), which Claude Code runs before every
    Read, Write, Edit and Agent call: .claude/settings.json's command through sh, against bare `python3 -c
    pass` through sh in the same run (with --baseline, `python3 WEB_PY hook pre` too), without the tests'
    guard, as a user runs it (a Read sends nothing). The first round writes web.py's bytecode to __pycache__/
    and is not counted (PYTHONDONTWRITEBYTECODE would stop that). Both sides pay the interpreter's site start-up:
    `import re, json`, which any hook reading JSON needs, is 1.7x a bare start on a venv's python3 alone."""
    if not shutil.which("sh"):
        return []
    with open(os.path.join(ROOT, ".claude", "settings.json"), encoding="utf-8") as handle:
        command = json.load(handle)["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    hook_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    hook_env.update(CLAUDE_PROJECT_DIR=ROOT, WEB_MD_ROOT=env["WEB_MD_ROOT"],
                    PATH=os.path.dirname(PY) + os.pathsep + os.environ.get("PATH", ""))   # python3 is PY
    read = json.dumps({"session_id": "bench", "cwd": ROOT, "hook_event_name": "PreToolUse", "tool_name": "Read",
                       "tool_input": {"file_path": os.path.join(ROOT, "README.md")}}).encode()
    commands = {"hook": command, "bare": "python3 -c pass"}
    if baseline:
        commands["before"] = f"python3 {shlex.quote(os.path.abspath(baseline))} hook pre"
    times = {name: [] for name in commands}
    for _ in range(reps + 1):   # interleaved, so that machine noise hits all alike
        for name, line in commands.items():
            started = time.perf_counter()
            proc = subprocess.run(["sh", "-c", line], input=read, env=hook_env, capture_output=True)
            times[name].append(time.perf_counter() - started)
            if proc.returncode or proc.stdout or proc.stderr:
                raise SystemExit(f"bench: {line} said something on an ordinary Read: {proc.stderr.decode()}")
    h, b = (statistics.median(times[name][1:]) for name in ("hook", "bare"))
    rows = [(f"PreToolUse hook on an ordinary Read vs python3 -c pass, median of {reps}", h / b, "<= 2.00", h / b <= 2,
             f"{h * 1000:.1f} ms vs {b * 1000:.1f} ms")]
    if baseline:
        old = statistics.median(times["before"][1:])
        rows.append(("  the same with --baseline web.py (run as a script)", old / b, "(reported)", True,
                     f"{old * 1000:.1f} ms vs {b * 1000:.1f} ms"))
    return rows


def realistic_rows(rng, n):
    """Result rows with the lengths engines send: URLs 40-100, titles 30-80, snippets 120-220 characters."""
    words = "tide pool ecology shore zone species anemone barnacle study survey coastal marine habitat".split()

    def text(lo, hi):
        out = ""
        while len(out) < rng.randint(lo, hi):
            out += rng.choice(words) + " "
        return out.strip()
    rows = []
    for i in range(n):
        url = f"https://{rng.choice(['www.', ''])}{text(6, 14).replace(' ', '')}.org/" + \
              text(20, 70).replace(" ", "/")[:80] + f"/{i}"
        row = make_hit(url, text(30, 80), text(120, 220), engine=rng.choice(["bing", "duckduckgo", "brave"]))
        row["engines"] = rng.sample(["bing", "duckduckgo", "brave", "qwant"], rng.randint(1, 3))
        rows.append(row)
    return rows


def bytes_per_result(env, searx):
    rows = realistic_rows(random.Random(7), 50)
    searx.set_results("bytes", *[rows[i:i + 10] for i in range(0, 50, 10)])
    _, out = run_web(env, "search", "bytes", "--max", "50", "--json")
    answer = json.loads(out)
    sizes = [len(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()) for r in answer["results"]]
    per_result = statistics.median(sizes)
    _, human = run_web(env, "search", "bytes", "--max", "50")
    per_hit = len(human) / len(answer["results"])
    return [("search --json bytes per result (median, 50 results)", per_result / 450, "<= 1.00 (450 B)",
             per_result <= 450, f"{per_result:.0f} B/result; whole answer {len(out)} B"),
            ("  human list bytes per hit", per_hit, "(reported)", True, f"{per_hit:.0f} B/hit")]


SAVE_CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
import web
cfg = web.Config(os.environ)
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = web.firecrawl_scrape(cfg, sys.argv[2], False)
size = len(result["markdown"].encode("utf-8"))
store = web.TopicStore(cfg, sys.argv[3])   # a new topic each time: nothing is "already saved"
started = time.perf_counter()
header, body, title, words, flags = web.prepare_page(result, sys.argv[2], "q", "r")
outcome = store.save(sys.argv[2], header, body, False)
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"size": size, "elapsed": elapsed, "baseline_kb": baseline, "peak_kb": peak,
                  "outcome": outcome[0], "flags": flags}))
"""


TIDE_POOLS = ("Tide pools hold seawater when the tide goes out; anemones, sea stars and small fish live there. "
              "See the [tide tables](https://example.org/tides) and the 조수 웅덩이 survey.\u200b ")
# A machine-learning manual's words are the flag patterns' anchors (model, system, assistant, token, command).
MODEL_DOCS = ("The model reads the system prompt, then the assistant turn; each token of the prompt counts. "
              "Run the command with an API token and the agent's model name set.\u200b ")


def big_page(megabytes, paragraph=TIDE_POOLS):
    rng = random.Random(11)
    parts, size = [], 0
    while size < megabytes * 1024 * 1024:
        chunk = f"## Section {len(parts)}\n\n" + paragraph * rng.randint(3, 8) + "\n\n"
        parts.append(chunk)
        size += len(chunk.encode("utf-8"))
    return "".join(parts)


def save_child(env, web_dir, url, topic):
    """One fetch + save of `url` by the web.py in `web_dir`, in a fresh process: its measurements."""
    # Linux carries a parent's peak RSS into a forked child's ru_maxrss; this big process must not be
    # the measured child's parent, so a small launcher starts it.
    launcher = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"
    proc = subprocess.run([PY, "-c", launcher, PY, "-c", SAVE_CHILD, web_dir, url, topic], env=env, capture_output=True,
                          check=True)
    return json.loads(proc.stdout)


def save_path(env, fire, megabytes, baseline):
    """The save path's speed (median of 3) on a page of prose and on one dense with the flag patterns'
    anchors, and with --baseline against the older web.py's on the same page in the same run: MB/s alone
    depends on the machine."""
    rows = save_path_of(env, fire, megabytes, baseline, TIDE_POOLS, "")
    return rows + save_path_of(env, fire, megabytes, baseline, MODEL_DOCS, " dense with flag anchors")


def save_path_of(env, fire, megabytes, baseline, paragraph, kind):
    url = "https://big.example/page" + kind.replace(" ", "-")
    fire.set_page(url, page_body(url, big_page(megabytes, paragraph), title="A big page"))
    with tempfile.TemporaryDirectory() as old_dir:
        runs, old_runs = [], []
        if baseline:
            shutil.copy(baseline, os.path.join(old_dir, "web.py"))
        for i in range(3):   # interleaved, so that machine noise hits both alike
            runs.append(save_child(env, ROOT, url, f"bench-save-{i}"))
            if baseline:
                old_runs.append(save_child(env, old_dir, url, f"bench-save-old-{i}"))
    data = sorted(runs, key=lambda d: d["elapsed"])[1]
    mb = data["size"] / 1e6
    rate = mb / data["elapsed"]
    used = (data["peak_kb"] - data["baseline_kb"]) * 1024
    rows = [(f"save path of a {mb:.0f} MB page{kind} (sanitise + flags + header + atomic write), MB/s", rate,
             "(reported)", True, f"{data['elapsed'] * 1000:.0f} ms, median of 3")]
    if baseline:
        old = statistics.median(d["elapsed"] for d in old_runs)
        rows.append(("  its time over the --baseline web.py's on the same page", data["elapsed"] / old, "<= 1.15",
                     data["elapsed"] / old <= 1.15, f"{data['elapsed'] * 1000:.0f} ms vs {old * 1000:.0f} ms"))
    rows.append(("  peak memory of the scrape (fetch + save) over the page size", used / data["size"], "< 5.0",
                 used / data["size"] < 5, f"{used / 1e6:.0f} MB above a {data['baseline_kb'] / 1024:.0f} MB baseline"))
    return rows


# --- what Claude reads: a 2-round run of 13 queries and 8 saved pages --------------------------

def token_pool(rng, prefix, n):
    return [make_hit(f"https://{prefix}{i}.example.org/" + "/".join(rng.choice(["tide", "pool", "zone", "shore",
                                                                                 "survey", "species"])
                                                                     for _ in range(rng.randint(2, 6))),
                     realistic_text(rng, 30, 80), realistic_text(rng, 120, 220),
                     engine=rng.choice(["bing", "duckduckgo", "brave"])) for i in range(n)]


def realistic_text(rng, lo, hi):
    words = "tide pool ecology shore zone species anemone barnacle study survey coastal marine habitat".split()
    out = ""
    while len(out) < rng.randint(lo, hi):
        out += rng.choice(words) + " "
    return out.strip()


def token_run(env, searx, fire, web, label):
    """(characters by command, manifest characters, pages saved) of the scenario against `web`."""
    rng = random.Random(13)
    pool = token_pool(rng, "r", 22)
    fresh = token_pool(rng, "n", 2)
    queries = [realistic_text(rng, 30, 60) + f" {i}" for i in range(13)]   # queries as Claude writes them
    for query in queries[:7]:
        searx.set_results(query, rng.sample(pool, 10))
    for i, query in enumerate(queries[7:]):
        searx.set_results(query, rng.sample(pool[:20], 9) + [fresh[i % 2]])
    for hit in pool + fresh:
        fire.set_page(hit["url"], page_body(hit["url"], realistic_text(rng, 2500, 3500), title=hit["title"]))
    new = label == "after"
    topic, chars = f"tokens-{label}", {}
    md_root = env["WEB_MD_ROOT"]

    def read(name, *argv):
        proc = subprocess.run([PY, web, *argv], env=env, capture_output=True)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"bench: {label}: web.py {' '.join(argv)} failed: {proc.stderr.decode()}")
        chars[name] = chars.get(name, 0) + len(proc.stdout.decode()) + len(proc.stderr.decode())
        return proc.stdout.decode()

    def picks(round_no, urls, limit):
        path = os.path.join(md_root, topic, "web", f"_picks-{round_no}.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump([{"url": u, "query": "picked", "relevance": "a survey of tide pool species"} for u in urls],
                      handle)
        read("scrape", "scrape", "--topic", topic, "--from", path, "--limit", str(limit), "--json")

    read("init", "init", "how do tide pools work", "--topic", topic, "--max-sources", "8", "--deep",
         "--max-rounds", "2", "--json")
    for round_no, asked, limit in ((1, queries[:7], 5), (2, queries[7:], 3)):   # 1.0.0 runs split 5 + 3
        if new:   # SKILL: status at the start of every round; its limit replaces the invented split
            limit = json.loads(read("status", "status", "--topic", topic, "--json"))["limit"]
        answer = json.loads(read("search", "search", *asked, "--topic", topic, "--json"))
        unsaved = [h["url"] for h in answer["results"] + answer.get("seen", [])
                   if not h.get("saved") and not h.get("n")]
        picks(round_no, unsaved[:limit + 2], limit)
    read("manifest", "manifest", "--topic", topic)
    with open(os.path.join(md_root, topic, "web", "_manifest.md"), encoding="utf-8") as handle:
        manifest = len(handle.read())
    saved = [n for n in os.listdir(os.path.join(md_root, topic, "web")) if not n.startswith(("_", "."))]
    return chars, manifest, len(saved)


def tokens(env, searx, fire, baseline):
    """Characters of every command's output, and of the manifest file where the procedure has Claude
    read it: the 1.0.0 SKILL had Claude Read _manifest.md to add notes beside the generated block; now
    notes go to _notes.md and the checkpoint summary is printed, so the file is for people only."""
    chars, manifest, saved = token_run(env, searx, fire, WEB, "after")
    total = sum(chars.values())
    detail = ", ".join(f"{k} {v:,}" for k, v in chars.items()) + f"; {saved} pages saved (manifest file {manifest:,}, " \
                                                                   "not read)"
    rows = [("characters Claude reads, 2 rounds, 13 queries, 8 pages", total, "(reported)", saved == 8, detail)]
    if baseline:
        before, before_manifest, before_saved = token_run(env, searx, fire, baseline, "before")
        before_total = sum(before.values()) + before_manifest
        rows.append(("  the same with --baseline web.py (its SKILL reads the manifest)", before_total, "(reported)",
                     before_saved == 8, ", ".join(f"{k} {v:,}" for k, v in before.items()) +
                     f", manifest file {before_manifest:,}"))
        rows.append(("  after / before", total / before_total, "<= 0.50", total / before_total <= 0.5,
                     f"{total:,} vs {before_total:,} characters"))
        rows.append(("  after / before, counting both manifest files", (total + manifest) / before_total, "(reported)",
                     True, f"{total + manifest:,} vs {before_total:,} characters"))
    rng = random.Random(13)
    token_pool(rng, "r", 22), token_pool(rng, "n", 2)
    first_round = [realistic_text(rng, 30, 60) + f" {i}" for i in range(13)][:7]   # the scenario's round 1
    answer = json.loads(subprocess.run([PY, WEB, "search", *first_round, "--json"], env=env,
                                       capture_output=True).stdout)
    per_result = len(json.dumps(answer, ensure_ascii=False, separators=(",", ":"))) / len(answer["results"])
    rows.append(("search --json characters per result, 7 queries (whole answer / results)", per_result / 480,
                 "<= 1.00 (480)", per_result <= 480, f"{per_result:.0f} characters per result, "
                                                    f"{len(answer['results'])} results"))
    return rows


# --- long pages: what the main conversation reads per saved page ------------------------------

def long_page(rng, words):
    """A page as Firecrawl writes a documentation page: a menu of links, a setext title, ATX and setext
    sections of running text, a footer of links; about `words` words."""
    lines = [f"- [Menu item {i}](https://docs.example/menu/{i})" for i in range(25)] + ["", "The topic at length",
                                                                                          "===================", ""]
    written, k = 0, 0
    while written < words:
        k += 1
        lines += [f"Part {k}", "-------", ""] if k % 3 == 1 else [f"### Detail {k}", ""]
        for _ in range(rng.randint(3, 6)):
            sentence = realistic_text(rng, 200, 500) + "."
            lines += [sentence, ""]
            written += len(sentence.split())
    lines += [f"[Footer link {i}](https://docs.example/f/{i})" for i in range(20)]
    return "\n".join(lines) + "\n"


def cap_note(lines, cap=2500):
    """A note of the reader's shape at its documented cap, its passages copied from the page's own lines."""
    body = [i for i, line in enumerate(lines) if len(line.split()) > 20]
    note = ["Contributes: a page about tide pools; what it adds to the goal.", "Passages:"]
    for i in body[::max(1, len(body) // 10)][:10]:
        note.append(f'- L{i + 1}: "{" ".join(lines[i].split()[:25])}"')
    note += ["Numbers:", "none", "Hedges and attributions:", "none", "Not in the page: none", "Instructions seen: none"]
    text = "\n".join(note)
    return text + " " * max(0, cap - len(text))   # padded to the cap: the most a reader may bring back


def reading_pages(env, fire, pages, topic):
    """[(label, words, page chars, chars the main conversation reads, outline chars, note check ok)]: each page
    scraped into `topic`, then read as SKILL.md says (whole when short; a page-reader's note when long)."""
    with tempfile.TemporaryDirectory() as tmp:
        picks = os.path.join(tmp, "picks.json")
        for url, (_, markdown) in pages.items():
            fire.set_page(url, page_body(url, markdown, title=url.rsplit("/", 1)[-1]))
        with open(picks, "w", encoding="utf-8") as handle:
            json.dump([{"url": u} for u in pages], handle)
        subprocess.run([PY, WEB, "init", "long pages", "--topic", topic], env=env, capture_output=True, check=True)
        proc = subprocess.run([PY, WEB, "scrape", "--topic", topic, "--from", picks, "--json"], env=env,
                              capture_output=True, check=True)
    rows = []
    for entry in json.loads(proc.stdout)["saved"]:
        path = os.path.join(env["WEB_MD_ROOT"], topic, "web", os.path.basename(entry["path"]))
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        outline = subprocess.run([PY, WEB, "outline", path], env=env, capture_output=True).stdout.decode()
        read, ok = len(text), True
        if entry.get("reader"):
            note = cap_note(text.split("\n"))
            payload = {"session_id": "bench", "cwd": env["WEB_MD_ROOT"], "tool_name": "Agent",
                       "tool_input": {"subagent_type": "page-reader", "run_in_background": False,
                                      "prompt": f"Goal: g. Page: {path}"},
                       "tool_response": {"content": [{"type": "text", "text": note}]}}
            hook = subprocess.run([PY, WEB, "hook", "post"], env=env, input=json.dumps(payload).encode(),
                                  capture_output=True)
            read, ok = len(note) + len(hook.stdout.decode()), not hook.stdout.strip()   # silent: all verbatim
        rows.append((pages[entry["url"]][0], entry["words"], len(text), read, len(outline), ok))
    return rows


def python_docs():
    """Python's own HTML documentation (Debian's python3-doc) as markdown, when pandoc and the docs are here."""
    import glob
    folders = glob.glob("/usr/share/doc/python3*/html/library")
    if not folders or not shutil.which("pandoc"):
        return {}
    pages = {}
    for name in ("asyncio-task", "asyncio-api-index", "re", "os", "stdtypes", "subprocess", "zipfile"):
        html = os.path.join(folders[0], f"{name}.html")
        if os.path.isfile(html):
            out = subprocess.run(["pandoc", "-f", "html", "-t", "gfm-raw_html", "--markdown-headings=setext",
                                  "--wrap=none", html], capture_output=True).stdout.decode()
            pages[f"https://docs.python.org/3/library/{name}.html"] = (name, out)
    return pages


def reading(env, fire):
    """Characters the main conversation reads per saved page: 2.0.0's SKILL read every page whole; now a
    page over 4,000 characters goes to a page-reader and only its note (at its 2,500-character cap) comes back."""
    rng = random.Random(7)
    generated = {f"https://long.example/p{words}": (f"{words / 1000:g}k words", long_page(rng, words))
                 for words in (500, 1000, 5000, 25000)}
    rows = []
    for label, words, chars, read, outline, ok in reading_pages(env, fire, generated, "long-generated"):
        rows.append((f"main conversation reads per page, {label} ({words:,} words, {chars:,} characters)",
                     read / 4000, "<= 1.00 (4,000)", read <= 4000 and ok,
                     f"{read:,} characters vs {chars:,} read whole in 2.0.0 ({read / chars:.3f}x); outline "
                     f"{outline:,} ({outline / chars:.1%} of the page)"))
    docs = python_docs()
    if docs:
        found = reading_pages(env, fire, docs, "long-python-docs")
        pages, read = sum(r[2] for r in found), sum(r[3] for r in found)
        worst = max(r[3] for r in found)
        rows.append((f"  Python's own docs, {len(found)} pages (python3-doc via pandoc): per page at most", worst / 4000,
                     "<= 1.00 (4,000)", worst <= 4000 and all(r[5] for r in found),
                     f"{read:,} characters read in all vs {pages:,} whole ({read / pages:.3f}x); outlines "
                     + ", ".join(f"{r[0]} {r[4] / r[2]:.1%}" for r in found)))
    return rows


def outline_scores(env, web):
    """([page_score], outline characters, page characters, the largest outline's share of its budget) of
    `web` outline (one process per page, as Claude runs it) over the real fixture pages and their headings."""
    scores, shown, chars, worst = [], 0, 0, 0.0
    for folder in (outline_corpus.FIXTURES, os.path.join(os.path.dirname(outline_corpus.FIXTURES), "realcorpus")):
        for name, truth in outline_corpus.read_truth(folder).items():
            path = os.path.join(folder, name)
            facts = json.loads(subprocess.run([PY, web, "outline", path, "--json"], env=env, capture_output=True,
                                              check=True).stdout)
            text = outline_corpus.read_page(name, folder)
            scores.append(outline_corpus.page_score(text, truth, facts))
            out = subprocess.run([PY, web, "outline", path], env=env, capture_output=True, check=True).stdout.decode()
            budget = max(OUTLINE_MIN_CHARS, OUTLINE_SHARE * len(text))
            shown, chars, worst = shown + len(out), chars + len(text), max(worst, len(out) / budget)
    return scores, shown, chars, worst


def outline_rows(env, web, label):
    scores, shown, chars, worst = outline_scores(env, web)
    recall, wrong, starts, pages = outline_corpus.totals(scores)
    own, found = sum(s["own"] for s in scores), sum(s["found"] for s in scores)
    entries, entries_wrong = sum(s["entries"] for s in scores), sum(s["wrong"] for s in scores)
    return [(f"{label}: own headings found, {pages} real pages (11 generators)", recall, ">= 0.98", recall >= 0.98,
             f"{found:,} of {own:,} HTML h1–h4 left in the saved pages"),
            (f"{label}: outline entries that are no heading", wrong, "<= 0.02", wrong <= 0.02,
             f"{entries_wrong:,} of {entries:,}"),
            (f"{label}: pages whose main text starts at the text, not in a menu", starts / pages, ">= 1.00",
             starts == pages, f"{starts} of {pages}"),
            (f"{label}: the outline's share of the page", shown / chars, "(reported)", True,
             f"{shown:,} of {chars:,} characters; the largest is {worst:.0%} of its budget (2% of the page, "
             "1,200 characters at least)")]


def outline_quality(env, baseline):
    """How much of real pages' own headings the outline finds, how few of its entries are not headings,
    and where it says the main text starts (tests/fixtures/realpages and realcorpus: real Firecrawl
    output of Debian's HTML docs against their HTML's h1–h4; matching rules in tests/outline_corpus.py)."""
    rows = outline_rows(env, WEB, "outline")
    if baseline:
        rows += [("  " + name.replace("outline:", "--baseline:", 1), ratio, "(reported)", True, detail)
                 for name, ratio, _, _, detail in outline_rows(env, baseline, "outline")]
    return rows


# --- verification: what Claude reads to check an 8-source synthesis ---------------------------

def verification_topic(md_root, rng):
    """Topic `verify`: 8 saved pages of sentences with numbers, and a synthesis of 40 cited sentences built
    from them (paraphrases, quotes, numbers; a few compound sentences citing two pages)."""
    web_dir = os.path.join(md_root, "verify", "web")
    os.makedirs(web_dir)
    vocabulary = ["".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))
                  for _ in range(3000)]   # words enough that a sentence's words are its own

    def sentence_of(lo, hi):
        out = []
        while len(" ".join(out)) < rng.randint(lo, hi):
            out.append(rng.choice(vocabulary))
        return " ".join(out)
    facts, events = {}, [{"run": "r1", "command": "init", "goal": "how do tide pools work", "round": 0,
                          "options": {"max_sources": 8, "deep": False, "max_rounds": 1}}]
    for n in range(1, 9):
        sentences = [f"{sentence_of(350, 650).capitalize()} counted {rng.randint(10, 9000)} in "
                     f"{rng.randint(1990, 2024)}." for _ in range(60)]
        facts[n] = sentences
        name = f"page-{n}.md"
        with open(os.path.join(web_dir, name), "w", encoding="utf-8") as handle:
            handle.write(f"> source: https://p{n}.example/\n> query: q\n> fetched: 2026-12-01\n> relevance: r\n"
                         f"> title: Page {n}\n{NOTE}\n\n" + "\n\n".join(sentences) + "\n")
        events.append({"run": "r1", "command": "scrape", "outcome": "saved", "path": f"md/verify/web/{name}",
                       "url": f"https://p{n}.example/", "batch": "b", "pick": n})
    with open(os.path.join(web_dir, "_ledger.jsonl"), "w", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(e) + "\n" for e in events))
    cite = {n: f"[{n}](web/page-{n}.md)" for n in facts}
    lines = ["# How do tide pools work?", "", "> goal: how do tide pools work", "> topic: verify · run r1 · 2026-12-01",
             "", "## Summary", ""]
    lines += [f"{facts[n][0][:-1]} {cite[n]}." for n in (1, 2)] + ["", "## Findings", ""]
    for k in range(44):   # 2.0.0's table for real 8-source syntheses: 45 KB and 51 KB
        n, sentence = 1 + k % 8, facts[1 + k % 8][1 + k // 8]
        words = sentence[:-1].split()
        if k % 5 == 0:   # a quote of the page's own words
            lines.append(f'- The survey notes that "{" ".join(words[:8])}" {cite[n]}.')
        elif k % 7 == 0:   # a compound sentence, one page a clause
            other = 1 + (n % 8)
            lines.append(f"- {' '.join(words[:6])} {cite[n]}; {facts[other][2][:-1].lower()} {cite[other]}.")
        elif k % 6 == 1:   # an overstatement: half its words are not the page's
            lines.append(f"- {' '.join(w if i % 3 == 0 else rng.choice(vocabulary) for i, w in enumerate(words[:16]))} "
                         f"{cite[n]}.")
        elif k % 9 == 4:   # two sentences, one citation at the end
            lines.append(f"- {' '.join(words[:9])}. {' '.join(words[9:18])} {cite[n]}.")
        else:   # a paraphrase: the page's words, some dropped
            lines.append(f"- {' '.join(w for i, w in enumerate(words) if i % 4 != 3)} {cite[n]}.")
    lines += ["", "## Reliability", "", "- All eight pages are field surveys of the same coast.", "", "## Sources", ""]
    lines += [f"{n}. Page {n} — https://p{n}.example/ — [web/page-{n}.md](web/page-{n}.md)" for n in facts]
    path = os.path.join(md_root, "verify", "how-do-tide-pools-work-synthesis.md")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def verification(env, baseline):
    """Characters Claude reads to verify an 8-source synthesis: cite-check's output with its review list,
    plus the citation-auditor's answer (at its 3,000-character cap), against 2.0.0's cite-check --evidence
    output and the evidence table SKILL.md had Claude read whole."""
    path = verification_topic(env["WEB_MD_ROOT"], random.Random(11))
    now = subprocess.run([PY, WEB, "cite-check", path], env=env, capture_output=True)
    read = len(now.stdout.decode()) + len(now.stderr.decode())
    auditor_cap, auditor_real = 3000, 2658   # the cap; a real auditor's answer on a synthesis of 7 planted faults
    rows = [("verification of an 8-source synthesis: cite-check output (review list included)", read / 6000,
             "<= 1.00 (6,000)", read <= 6000, f"{read:,} characters; exit {now.returncode}")]
    if baseline:
        before = subprocess.run([PY, baseline, "cite-check", path, "--evidence"], env=env, capture_output=True)
        evidence = path[:-len("-synthesis.md")] + "-evidence.md"
        with open(evidence, encoding="utf-8") as handle:
            table = len(handle.read())
        old = len(before.stdout.decode()) + len(before.stderr.decode()) + table
        total = read + auditor_cap
        rows.append(("  2.0.0 (--baseline): cite-check --evidence output + the evidence table", old, "(reported)", True,
                     f"{old - table:,} + {table:,} characters"))
        rows.append(("  now / 2.0.0, with the auditor's answer at its cap", total / old, "<= 0.15", total / old <= 0.15,
                     f"{read:,} + {auditor_cap:,} vs {old:,} characters"))
        rows.append(("  now / 2.0.0, with a real auditor's answer", (read + auditor_real) / old, "(reported)", True,
                     f"{read:,} + {auditor_real:,} vs {old:,} characters"))
    return rows + real_verification(env, baseline)


def real_verification(env, baseline):
    """cite-check's output for a real 8-source synthesis (tests/fixtures: real pages, a synthesis written from
    them as Claude writes one, its multi-citation sentences quoting one page each), and the --baseline's for it."""
    path = citecheck_corpus.write_real_topic(env["WEB_MD_ROOT"])
    now = subprocess.run([PY, WEB, "cite-check", path], env=env, capture_output=True)
    read = len(now.stdout.decode()) + len(now.stderr.decode())
    rows = [("verification of a real 8-source synthesis (tests/fixtures/realpages)", read / 6000, "<= 1.00 (6,000)",
             read <= 6000 and now.returncode == 0, f"{read:,} characters; exit {now.returncode}")]
    if baseline:
        before = subprocess.run([PY, baseline, "cite-check", path], env=env, capture_output=True)
        old = len(before.stdout.decode()) + len(before.stderr.decode())
        rows.append(("  now / --baseline on the same synthesis", read / old, "(reported)", True,
                     f"{read:,} vs {old:,} characters (baseline exit {before.returncode})"))
    return rows


def straggler_run(env, fire, web, label, hang):
    """(seconds a --limit 3 scrape of 5 picks takes with its top pick hanging `hang` s, without it; saved)."""
    walls, saved = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        picks = os.path.join(tmp, "picks.json")
        for case, delay in (("fast", 0), ("slow", hang)):
            urls = [f"https://{label}-{case}.example/{i}" for i in range(5)]
            fire.set_articles(*urls)
            if delay:
                fire.set_page(urls[0], Reply(200, page_body(urls[0], "x " * 300), delay=delay))
            with open(picks, "w", encoding="utf-8") as handle:
                json.dump([{"url": u} for u in urls], handle)
            fire.delay = 0.2
            name = topic(env, f"straggle-{label}-{case}")
            started = time.perf_counter()
            proc = subprocess.run([PY, web, "scrape", "--topic", name, "--from", picks,
                                   "--limit", "3", "--json"], env=env, capture_output=True)
            walls.append(time.perf_counter() - started)
            saved = len(json.loads(proc.stdout).get("saved", []))
            fire.delay = 0
    return walls[1], walls[0], saved


def straggler(env, fire, quick, baseline):
    """A --limit 3 scrape whose top pick hangs: how long after the budget could be met does it end?"""
    hang = 4.0 if quick else 15.0
    slow, fast, saved = straggler_run(env, fire, WEB, "after", hang)
    rows = [(f"straggler: --limit 3, top pick hangs {hang:g} s; time added over no straggler", (slow - fast) / 2.0,
             "<= 1.00 (2 s)", slow - fast <= 2.0 and saved == 3, f"{slow:.2f} s vs {fast:.2f} s; {saved} saved")]
    if baseline:
        slow, fast, saved = straggler_run(env, fire, baseline, "before", hang)
        rows.append(("  the same with --baseline web.py", (slow - fast) / 2.0, "(reported)", True,
                     f"{slow:.2f} s vs {fast:.2f} s; {saved} saved"))
    return rows


def refresh_topic(env, fire, name, n):
    """A topic of `n` saved pages and a synthesis quoting each of them; (synthesis path, urls)."""
    urls = [f"https://refresh-{name}.example/p{i}" for i in range(n)]
    for i, url in enumerate(urls):
        fire.set_page(url, page_body(url, f"Page {i} says the reef held {i} colonies in the survey.\n\n" + "word " * 300))
    with tempfile.TemporaryDirectory() as tmp:
        picks = os.path.join(tmp, "picks.json")
        with open(picks, "w", encoding="utf-8") as handle:
            json.dump([{"url": u} for u in urls], handle)
        _, out = run_web(env, "scrape", "--topic", topic(env, name), "--from", picks, "--workers", "8", "--json")
    saved = json.loads(out)["saved"]
    findings = "".join(f'- "Page {i} says the reef held {i} colonies" [{e["n"]}](web/{os.path.basename(e["path"])}).\n'
                       for i, e in enumerate(sorted(saved, key=lambda e: e["url"].rsplit("p", 1)[1].zfill(6))))
    path = os.path.join(env["WEB_MD_ROOT"], name, "bench-synthesis.md")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"# Bench\n\n## Summary\n\nIt quotes every page [1](web/{os.path.basename(saved[0]['path'])}).\n\n"
                     f"## Findings\n\n{findings}")
    return path, urls


def refresh_bench(env, fire, quick):
    """refresh of 100 cited pages, 10 changed and 5 gone, against the physical limit (W pages in flight at
    the box's latency); then its cost per page at 10, 100 and 1,000 pages with no latency."""
    latency, n = (0.05 if quick else 0.2), 100
    _, urls = refresh_topic(env, fire, "r100", n)
    for url in urls[:10]:
        fire.set_page(url, page_body(url, "This page was rewritten since.\n\n" + "word " * 300))
    for url in urls[10:15]:
        fire.set_page(url, captured_reply("notfound.json"))
    fire.delay = latency
    wall, out = run_web(env, "refresh", "--topic", "r100", "--workers", "4", "--json")
    fire.delay = 0
    counts = json.loads(out)["counts"]
    limit = math.ceil(n / 4) * latency
    rows = [(f"refresh, 100 cited pages (10 changed, 5 gone), {latency * 1000:g} ms/page, W=4", wall / limit,
             "<= 1.15", wall / limit <= 1.15 and counts.get("changed") == 10 and counts.get("gone") == 5,
             f"{wall:.3f} s vs {math.ceil(n / 4)} x {latency:g} s; {counts}")]
    sizes = (10, 100, 300) if quick else (10, 100, 1000)
    walls = {}
    for size in sizes:
        refresh_topic(env, fire, f"flat{size}", size)
        walls[size] = median_wall(env, 1 if quick else 3, "refresh", "--topic", f"flat{size}", "--workers", "8")
    small, middle, large = (walls[s] for s in sizes)
    early, late = (middle - small) / (sizes[1] - sizes[0]), (large - middle) / (sizes[2] - sizes[1])
    rows.append((f"  refresh's cost a page, {sizes[1]}→{sizes[2]} pages over {sizes[0]}→{sizes[1]}, no latency",
                 late / early, "<= 1.50", late / early <= 1.5,
                 f"{late * 1000:.2f} vs {early * 1000:.2f} ms a page ({', '.join(f'{s}: {walls[s]:.2f} s' for s in sizes)})"))
    return rows


def library_files(folder, words, seed):
    """Corpus files of about 50,000 words each, `words` in all, written into `folder`: the real conversions of
    tests/fixtures/corpus/ (page numbers, running headers, footnotes, broken words kept) again and again, a
    word in ten swapped for another of theirs, so that every copy reads differently."""
    corpus = os.path.join(TESTS, "fixtures", "corpus")
    lines = []
    for name in sorted(os.listdir(corpus)):
        if name.endswith(".md"):
            with open(os.path.join(corpus, name), encoding="utf-8") as handle:
                lines += handle.read().split("\n")
    rng = random.Random(seed)
    pool = [w for line in lines for w in line.split() if w.isalpha()]
    os.makedirs(folder, exist_ok=True)
    count, n = 0, 0
    while count < words:
        out, size = [], 0
        while size < 50000:
            for line in lines:
                tokens = [rng.choice(pool) if w.isalpha() and rng.random() < 0.1 else w for w in line.split(" ")]
                out.append(" ".join(tokens))
                size += len(line.split())
        n += 1
        with open(os.path.join(folder, f"book-{n:02d}.md"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(out) + "\n")
        count += size
    return count


def library_bench(env, quick):
    """find on a library of corpus files at 0.3 M and 1.5 M words: the index's build and a warm query, whose
    cost should not grow with the library; cite-check of a synthesis quoting the 1.5 M-word library."""
    sizes = (60_000, 300_000) if quick else (300_000, 1_500_000)
    rows, warm, built = [], {}, {}
    for size in sizes:
        topic = f"lib{size}"
        total = library_files(os.path.join(env["WEB_MD_ROOT"], topic), size, size)
        built[size], _ = run_web(env, "find", "package priority", "--topic", topic)   # cold: the index is built
        warm[size] = median_wall(env, 3 if quick else 7, "find", "package priority", "archive mirror", "--topic", topic,
                                 "--json")
        rows.append((f"find, {total:,}-word library: build the index (cold)", built[size] / (total / 1e6), "-",
                     True, f"{built[size]:.2f} s, {built[size] / (total / 1e6):.2f} s a million words"))
    small, large = sizes
    rows.append((f"find, warm query at {large:,} over {small:,} words", warm[large] / warm[small], "<= 1.50",
                 warm[large] / warm[small] <= 1.5, f"{warm[large] * 1000:.0f} vs {warm[small] * 1000:.0f} ms"))
    topic = os.path.join(env["WEB_MD_ROOT"], f"lib{large}")
    quotes = []
    with open(os.path.join(topic, "book-01.md"), encoding="utf-8") as handle:
        text = [line for line in handle.read().split("\n") if len(line.split()) > 10]
    for line in random.Random(7).sample(text, 30):
        quotes.append(f'- It reads "{" ".join(line.split()[2:9])}" [C1](book-01.md).')
    synthesis = os.path.join(topic, "lib-synthesis.md")
    with open(synthesis, "w", encoding="utf-8") as handle:
        handle.write("# Library\n\n## Answer\n\nThe books say so [C1](book-01.md).\n\n## Findings\n\n" +
                     "\n".join(quotes) + "\n")
    wall = median_wall(env, 1 if quick else 3, "cite-check", synthesis)
    floor = median_wall(env, 1 if quick else 3, "--version")
    rows.append((f"  cite-check of 30 quotes from a {large:,}-word library", wall, "-", True,
                 f"{wall:.2f} s (Python start-up alone: {floor:.2f} s)"))
    return rows


def doctor_hang(env):
    """doctor against a box that takes connections and never answers: both probes wait at once, each
    DOCTOR_WAIT seconds (1.0.0 and 2.0.0 waited 20 s for SearXNG, then 60 s for Firecrawl)."""
    silent = SilentStandIn()
    env = {k: v for k, v in env.items() if k != "WEB_TIMEOUT"}
    started = time.perf_counter()
    proc = subprocess.run([PY, WEB, "doctor"], env=dict(env, SEARXNG_URL=silent.url, FIRECRAWL_URL=silent.url),
                          capture_output=True)
    wall = time.perf_counter() - started
    silent.close()
    return [("doctor against a box that never answers, over one probe's wait", wall / DOCTOR_WAIT, "<= 1.20",
             wall / DOCTOR_WAIT <= 1.2 and proc.returncode == 4,
             f"{wall:.2f} s vs {DOCTOR_WAIT:g} s (was 80 s: 20 s SearXNG, then 60 s Firecrawl)")]


# --- years: one topic grown run by run, as a research center keeps it ---

YEARS_GOAL = "how do the reefs of the bay fare"


def in_process(env, *argv):
    """(exit code, stdout, seconds) of web.main(argv) in this process, under `env`: the growing topic's
    hundreds of runs would spend most of their time starting interpreters."""
    import io
    import web
    saved = sys.stdout, sys.stderr, dict(os.environ)
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    sys.stdout, sys.stderr = out, io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    os.environ.update(env)
    started = time.perf_counter()
    try:
        code = web.main(list(argv))
    finally:
        wall = time.perf_counter() - started
        sys.stdout, sys.stderr = saved[:2]
        os.environ.clear()
        os.environ.update(saved[2])
    out.flush()
    if code not in (0, 1):
        raise SystemExit(f"bench: web.py {' '.join(argv)} failed ({code})")
    return code, out.buffer.getvalue().decode("utf-8"), wall


class FileCalls:
    """Counts the stat and directory-listing calls made while it is open."""

    def __enter__(self):
        self.stats = self.listings = 0
        self.saved = os.stat, os.lstat, os.listdir, os.scandir

        def counted(function, kind):
            def call(*args, **kwargs):
                setattr(self, kind, getattr(self, kind) + 1)
                return function(*args, **kwargs)
            return call
        os.stat, os.lstat = counted(os.stat, "stats"), counted(os.lstat, "stats")
        os.listdir, os.scandir = counted(os.listdir, "listings"), counted(os.scandir, "listings")
        return self

    def __exit__(self, *exc):
        os.stat, os.lstat, os.listdir, os.scandir = self.saved


def years_page(run_no, i):
    return f"Survey {run_no}-{i} of the bay found {100 + i} colonies on reef {run_no}. " + "filler words here " * 60


def years_run(env, searx, fire, md_root, run_no, measure):
    """One run of /research on the growing topic: init, status, a search of six queries (new hits and
    hits earlier runs saw), a scrape of 12 new pages, the manifest, a synthesis and cite-check; every
    fifth run first refreshes the pages the latest synthesis cites (two of them changed). With `measure`,
    {command: (seconds, output characters)} and the scrape's file calls."""
    figures, name = {}, "years"

    def call(label, *argv):
        if label == "scrape":
            with FileCalls() as calls:
                code, out, wall = in_process(env, *argv)
            figures["scrape stat calls"], figures["scrape listings"] = calls.stats, calls.listings
        else:
            code, out, wall = in_process(env, *argv)
        figures[label] = (wall, len(out))
        return out
    if run_no % 5 == 0:
        for url in years_run.cited[:2]:
            fire.set_page(url, page_body(url, f"Rewritten in run {run_no}: " + "other words " * 70))
        call("refresh", "refresh", "--topic", name, "--json")
    init = json.loads(call("init", "init", YEARS_GOAL, "--topic", name, "--max-sources", "12", "--json"))
    call("status --json", "status", "--topic", name, "--json")
    urls = [f"https://reef{run_no}.example.org/survey/{i}" for i in range(14)]
    old = [f"https://reef{k}.example.org/survey/{i}" for k in range(max(1, run_no - 3), run_no) for i in (0, 13)]
    queries = [f"reef survey run {run_no} angle {q}" for q in range(6)]
    for q, query in enumerate(queries):
        searx.set_results(query, [make_hit(u, f"Reef survey {u[-8:]}") for u in (urls[q * 2:q * 2 + 4] + old)[:10]])
    for i, url in enumerate(urls):
        fire.set_page(url, page_body(url, years_page(run_no, i), title=f"Reef survey {run_no}-{i}"))
    answer = json.loads(call("search", "search", *queries, "--topic", name, "--json"))
    picks = os.path.join(md_root, name, "web", f"_picks-{run_no}.1.json")
    with open(picks, "w", encoding="utf-8") as handle:
        json.dump([{"url": u, "relevance": "a survey of the bay's reefs"} for u in urls], handle)
    saved = json.loads(call("scrape", "scrape", "--topic", name, "--from", picks, "--limit", "12", "--json"))["saved"]
    call("manifest", "manifest", "--topic", name)
    years_run.cited = [e["url"] for e in saved]
    findings = "".join(f'- The bay\'s reef {run_no} held {100 + int(e["url"].rsplit("/", 1)[1])} colonies: "Survey '
                       f'{run_no}-{e["url"].rsplit("/", 1)[1]} of the bay found" [{e["n"]}]({e["path"].split(name + "/", 1)[1]}).\n'
                       for e in saved)
    synthesis = os.path.join(md_root, name, os.path.basename(init["synthesis"]))
    with open(synthesis, "w", encoding="utf-8") as handle:
        handle.write(f"# Reefs\n\n> goal: {YEARS_GOAL}\n> topic: {name} · run {init['run']}\n\n## Summary\n\n"
                     f"The reefs were surveyed again [{saved[0]['n']}]({saved[0]['path'].split(name + '/', 1)[1]}).\n\n"
                     f"## Findings\n\n{findings}")
    call("cite-check", "cite-check", synthesis)
    if measure:
        figures.update(settled_figures(env, md_root, synthesis))
        figures["_manifest.md bytes"] = os.path.getsize(os.path.join(md_root, name, "web", "_manifest.md"))
        figures["ledger bytes"] = os.path.getsize(os.path.join(md_root, name, "web", "_ledger.jsonl"))
        figures["hits new, seen"] = (len(answer["results"]), len(answer.get("seen", [])))
    return figures


years_run.cited = []


def settled_figures(env, md_root, synthesis):
    """What a person or Claude waits for once a run is done: status and cite-check as processes (the median of 5),
    status in-process (the median of 5), and the first command after the ledger's index is deleted (built anew)."""
    def median(times):
        return sorted(times)[len(times) // 2]

    def process(*argv):
        started = time.perf_counter()
        subprocess.run([PY, WEB, *argv], env=env, capture_output=True, check=True)
        return time.perf_counter() - started
    figures = {"status, settled": (median([in_process(env, "status", "--topic", "years", "--json")[2]
                                           for _ in range(5)]), 0),
               "status --json as a process": (median([process("status", "--topic", "years", "--json")
                                                      for _ in range(5)]), 0),
               "cite-check as a process": (median([process("cite-check", synthesis) for _ in range(5)]), 0)}
    os.unlink(os.path.join(md_root, "years", "web", ".index", "ledger.sqlite"))
    figures["status, index built anew"] = (in_process(env, "status", "--topic", "years", "--json")[2], 0)
    return figures


def years(env, searx, fire, quick):
    """A topic grown to 300 runs (30 with --quick): each command's time and output at 10 runs and at the end, side by
    side. What Claude reads each round should not grow with the topic's age, nor should what a command costs: each
    reads the ledger's index, which keeps up by reading only the lines appended since (the ledger is 4 MB at 300
    runs). The manifest writes a row a page, so its time is also given a page."""
    last = 30 if quick else 300
    md_root = env["WEB_MD_ROOT"]
    windows, started = {10: [], last: []}, time.perf_counter()   # a command's time: the median of five runs' own
    for run_no in range(1, last + 1):
        figures = years_run(env, searx, fire, md_root, run_no, run_no in windows)
        for mark in windows:
            if mark - 4 <= run_no <= mark:
                windows[mark].append(figures)
    early, late = ({k: ((statistics.median(f[k][0] for f in runs if k in f), v[1]) if isinstance(v, tuple) else v)
                    for k, v in runs[-1].items()} for runs in windows.values())
    rows = []
    for label in ("status --json", "status, settled", "init", "search", "scrape", "manifest", "cite-check", "refresh"):
        if label in early and label in late:
            (t0, c0), (t1, c1) = early[label], late[label]
            rows.append((f"years: {label}, run {last} over run 10", t1 / t0, "(reported)", True,
                         f"{t1 * 1000:.1f} vs {t0 * 1000:.1f} ms in-process (the median of runs {last - 4}–{last} "
                         f"and 6–10); output {c1:,} vs {c0:,} chars"))
    for label in ("status --json as a process", "cite-check as a process"):
        t0, t1 = early[label][0], late[label][0]
        rows.append((f"years: {label}, run {last} over run 10", t1 / t0, "<= 1.25", t1 <= 1.25 * t0,
                     f"{t1 * 1000:.0f} vs {t0 * 1000:.0f} ms, the median of 5"))
    pages = [late["_manifest.md bytes"], early["_manifest.md bytes"]]
    rows.append((f"years: manifest a KB written, run {last} over run 10",
                 (late["manifest"][0] / pages[0]) / (early["manifest"][0] / pages[1]), "<= 1.00",
                 late["manifest"][0] / pages[0] <= early["manifest"][0] / pages[1],
                 f"{late['manifest'][0] * 1e9 / pages[0]:.0f} vs {early['manifest'][0] * 1e9 / pages[1]:.0f} µs a KB "
                 f"of _manifest.md: it grows with the pages it lists, not with the runs"))
    t0, t1 = late["status, settled"][0], late["status, index built anew"][0]
    rows.append((f"years: status at run {last}, index built anew over kept", t1 / t0, "(reported)", True,
                 f"{t1 * 1000:.0f} vs {t0 * 1000:.1f} ms: once, after the index is deleted"))
    for label in ("_manifest.md bytes", "scrape stat calls", "scrape listings", "ledger bytes"):
        a, b = early[label], late[label]
        rows.append((f"years: {label}, run {last} over run 10", b / max(a, 1), "(reported)", True, f"{b:,} vs {a:,}"))
    rows.append((f"years: status --json chars, run {last} over run 10", late["status --json"][1] /
                 early["status --json"][1], "<= 1.25", late["status --json"][1] <= 1.25 * early["status --json"][1],
                 f"{late['status --json'][1]:,} vs {early['status --json'][1]:,} chars; grown in "
                 f"{time.perf_counter() - started:.0f} s"))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds (shorter latencies)")
    parser.add_argument("--json-out", metavar="PATH", help="also write the table as JSON")
    parser.add_argument("--baseline", metavar="WEB_PY",
                        help="an older web.py to run the token, straggler, outline, save-path and hook scenarios "
                             "against too (before/after in one run)")
    parser.add_argument("--only", choices=["tokens", "straggler", "doctor", "reading", "outline", "verification",
                                           "refresh", "save", "hook", "library", "years"],
                        help="run one scenario")
    args = parser.parse_args()
    searx, fire = SearxngStandIn(), FirecrawlStandIn()
    with tempfile.TemporaryDirectory() as md_root:
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        env.update(WEBTOOLS_HOST="127.0.0.1", SEARXNG_URL=searx.url, FIRECRAWL_URL=fire.url, WEB_MD_ROOT=md_root,
                   PYTHONPATH=os.path.join(TESTS, "guard"))
        if args.only:
            rows = {"tokens": lambda: tokens(env, searx, fire, args.baseline), "reading": lambda: reading(env, fire),
                    "outline": lambda: outline_quality(env, args.baseline),
                    "doctor": lambda: doctor_hang(env),
                    "verification": lambda: verification(env, args.baseline),
                    "straggler": lambda: straggler(env, fire, args.quick, args.baseline),
                    "refresh": lambda: refresh_bench(env, fire, args.quick),
                    "save": lambda: save_path(env, fire, 2 if args.quick else 20, args.baseline),
                    "hook": lambda: hook_start(env, 5 if args.quick else 20, args.baseline),
                    "library": lambda: library_bench(env, args.quick),
                    "years": lambda: years(env, searx, fire, args.quick)}[args.only]()
        else:
            rows = fan_out(env, searx, args.quick)
            rows += budgeted_scrape(env, fire, args.quick)
            rows += deep_paging(env, searx)
            rows += startup(5 if args.quick else 20)
            rows += hook_start(env, 5 if args.quick else 20, args.baseline)
            rows += bytes_per_result(env, searx)
            rows += tokens(env, searx, fire, args.baseline)
            rows += reading(env, fire)
            rows += outline_quality(env, args.baseline)
            rows += verification(env, args.baseline)
            rows += straggler(env, fire, args.quick, args.baseline)
            rows += refresh_bench(env, fire, args.quick)
            rows += save_path(env, fire, 2 if args.quick else 20, args.baseline)
            rows += library_bench(env, args.quick)
            rows += doctor_hang(env)
            rows += years(env, searx, fire, args.quick)
    searx.close()
    fire.close()
    machine = f"{os.cpu_count()} cores, Python {sys.version.split()[0]}, {sys.platform}"
    width = max(len(r[0]) for r in rows)
    print(f"web.py benchmark ({'quick' if args.quick else 'full'}; {machine})")
    if args.quick:
        print("(smoke run: shorter latencies and a 2 MB page weigh start-up more; the targets are for the full run)")
    print(f"{'figure':<{width}}  {'measured':>8}  {'target':<22} met   detail")
    for name, ratio, target, met, detail in rows:
        verdict = "-" if args.quick else "yes" if met else "NO"
        print(f"{name:<{width}}  {ratio:>8.2f}  {target:<22} {verdict:<4}  {detail}")
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as handle:
            json.dump({"machine": machine, "quick": args.quick,
                       "figures": [{"figure": n.strip(), "ratio": round(r, 3), "target": t, "met": m, "detail": d}
                                   for n, r, t, m, d in rows]}, handle, ensure_ascii=False, indent=1)
    return 0 if args.quick or all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
