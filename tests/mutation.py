#!/usr/bin/env python3
"""Mutation testing of all of web.py with mutmut, in a copy of the project.

Not a test (pytest does not collect it); mutmut is a development tool, not a requirement:

    python3 -m venv /tmp/mvenv && /tmp/mvenv/bin/pip install mutmut==3.8.1 pytest
    WEBTOOLS_HOST=127.0.0.1 /tmp/mvenv/bin/python tests/mutation.py --work /tmp/mut

It copies the project's tracked files to --work (kept, so a second run only tests what changed),
writes mutmut's setup.cfg there (every function of web.py mutated; the suite, as CI runs it, the
test command), runs `mutmut run` on all cores, and prints the score and the surviving mutants
(`mutmut show NAME` in --work shows one). A full run on 2 cores takes longer than a session, so the
kills are kept in tests/mutation-results.json: a run in a new --work folder keeps them for every
function whose code is unchanged and tests the rest, survivors included (delete the file to start
from nothing). Each verdict is saved as it comes, so a run may be stopped at any time; `--report`
shows and saves what it tested.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "tests", "mutation-results.json")
# Two tests cannot pass on mutmut's rewritten copy, which imports mutmut's own helpers and reads its
# setup.cfg from the working folder: one runs web.py as `runpy` to watch its imports, one runs a copy of
# web.py in a project folder of its own. They are left out.
SETUP = """[mutmut]
source_paths=web.py
also_copy=
    .claude/
    README.md
    requirements.txt
    md/
    .ci/
    .gitignore
pytest_add_cli_args_test_selection=
    tests/
pytest_add_cli_args=
    -q
    -p
    no:cacheprovider
    --deselect
    tests/test_cli.py::test_version_and_help_do_not_import_the_http_stack
    --deselect
    tests/test_defaults.py::test_the_md_root_is_md_beside_web_py_when_unset
"""

# Appended to the copy's tests/guard/sitecustomize.py, which every web.py the tests start loads first.
FAST_START = '''

def _run_big_script_from_its_cached_compile():
    """mutmut's web.py holds every mutant (26 MB): run as a script, Python compiles it afresh each time
    (6-16 s); imported, it is compiled once. Run it here, at start-up, from the import's cached compile."""
    import importlib.machinery
    import os
    import traceback
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] not in ("", "-c", "-m") else ""
    if os.path.basename(script) != "web.py" or os.path.getsize(script) < MIN_SIZE:
        return
    code = importlib.machinery.SourceFileLoader("__main__", script).get_code("__main__")
    sys.path.insert(0, os.path.dirname(script))
    main = sys.modules["__main__"]
    main.__file__ = script
    status = 0
    try:
        exec(code, main.__dict__)
    except SystemExit as end:
        if end.code is None:
            status = 0
        elif isinstance(end.code, int):
            status = end.code
        else:
            print(end.code, file=sys.stderr)
            status = 1
    except BaseException:
        traceback.print_exc()
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(status)


MIN_SIZE = 5_000_000
_run_big_script_from_its_cached_compile()
'''


def copy_project(work):
    """The project's tracked files, as a clean clone has them, in `work` (web.py and tests refreshed)."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        os.makedirs(os.path.join(work, os.path.dirname(name)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, name), os.path.join(work, name))
    with open(os.path.join(work, "setup.cfg"), "w", encoding="utf-8") as handle:
        handle.write(SETUP)
    with open(os.path.join(work, "tests", "guard", "sitecustomize.py"), "a", encoding="utf-8") as handle:
        handle.write(FAST_START)


KILLED = {1, 3, 36, -24, 24, 152, 255}   # mutmut's exit codes of a killed mutant and of a timeout (caught too)


def meta_path(work):
    return os.path.join(work, "mutants", "web.py.meta")


def seed_verdicts(work):
    """A new --work folder starts from the kills recorded in tests/mutation-results.json: mutmut keeps
    them for every function whose code is unchanged, and tests the rest, survivors included, again."""
    if os.path.exists(meta_path(work)) or not os.path.exists(RESULTS):
        return
    with open(RESULTS, encoding="utf-8") as handle:
        kept = json.load(handle)
    os.makedirs(os.path.dirname(meta_path(work)), exist_ok=True)
    with open(meta_path(work), "w", encoding="utf-8") as handle:
        json.dump({"exit_code_by_key": kept["killed"], "hash_by_function_name": kept["hash_by_function_name"],
                   "type_check_error_by_key": {}, "durations_by_key": {}, "estimated_durations_by_key": {}}, handle)


def save_verdicts(work):
    """The kills of this run, for the next: tests/mutation-results.json (a full run is longer than a session)."""
    verdicts = read_meta(work)
    kept = {"mutmut": "3.8.1", "hash_by_function_name": verdicts["hash_by_function_name"],
            "killed": {k: v for k, v in sorted(verdicts["exit_code_by_key"].items()) if v in KILLED}}
    with open(RESULTS + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(kept, handle, indent=0, sort_keys=True)
        handle.write("\n")
    os.replace(RESULTS + ".tmp", RESULTS)


def read_meta(work):
    with open(meta_path(work), encoding="utf-8") as handle:
        return json.load(handle)


def report(work):
    codes = list(read_meta(work)["exit_code_by_key"].values())
    tested = [c for c in codes if c is not None]
    killed = sum(1 for c in tested if c in KILLED)
    survived = sum(1 for c in tested if c == 0)
    print(f"mutation score: {killed} of {len(tested)} tested killed ({killed / max(1, len(tested)):.1%}); "
          f"{survived} survived, {len(tested) - killed - survived} reached by no test or suspicious; "
          f"{len(codes) - len(tested)} of {len(codes)} mutants not tested yet")


def run_mutmut(command, work, env):
    """mutmut in --work. Ctrl-C reaches it too: it stops with what it tested saved, and this waits for it."""
    child = subprocess.Popen(command, cwd=work, env=env)
    while True:
        try:
            return child.wait()
        except KeyboardInterrupt:
            continue


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="the folder for the copy and mutmut's results (kept)")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2, help="mutants tested at once")
    parser.add_argument("--report", action="store_true", help="only the score and survivors of the run in --work "
                                                              "(a stopped one too), and its kills saved")
    args = parser.parse_args()
    mutmut = shutil.which("mutmut", path=os.path.dirname(sys.executable)) or shutil.which("mutmut")
    if not mutmut:
        sys.exit("mutation: mutmut is not installed here — pip install mutmut pytest into this interpreter")
    env = dict(os.environ, WEBTOOLS_HOST="127.0.0.1")
    if not args.report:
        os.makedirs(args.work, exist_ok=True)
        copy_project(args.work)
        seed_verdicts(args.work)
        run_mutmut([mutmut, "run", "--max-children", str(args.max_children)], args.work, env)
    save_verdicts(args.work)
    report(args.work)
    survivors = subprocess.run([mutmut, "results"], cwd=args.work, env=env, capture_output=True, text=True).stdout
    print("".join(line for line in survivors.splitlines(True) if not line.rstrip().endswith(": not checked")), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
