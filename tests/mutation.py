#!/usr/bin/env python3
"""Mutation testing of all of web.py with mutmut, in a copy of the project.

Not a test (pytest does not collect it); mutmut is a development tool, not a requirement:

    python3 -m venv /tmp/mvenv && /tmp/mvenv/bin/pip install mutmut==3.8.1 pytest
    WEBTOOLS_HOST=127.0.0.1 /tmp/mvenv/bin/python tests/mutation.py --work /tmp/mut

It copies the project's tracked files to --work (kept, so a second run only tests what changed),
writes mutmut's setup.cfg there (every function of web.py mutated; the suite, as CI runs it, the
test command) and runs `mutmut run` on all cores, each mutant's tests ordered so that the tests that
killed its function's other mutants go first. It prints the score and each survivor not judged
equivalent in tests/mutation-equivalents.tsv (`mutmut show NAME` in --work shows one). The verdicts
are cached in tests/.mutation-results.json, outside git (rewritten by every run; a full run rebuilds it): a
run in a new --work folder keeps them for every function whose code is unchanged and tests the rest (delete
the file to start from nothing).
Each verdict is saved as it comes, so a run may be stopped at any time; `--report` shows and saves
what it tested; `--retest-survivors` tests the survivors again once new tests are written; `--try NAME -- TESTS`
runs TESTS on a copy of the project carrying one mutant (exit 0: a test kills it), to see a new test work.
"""

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "tests", ".mutation-results.json")   # a cache: .gitignore keeps it out of git
EQUIVALENTS = os.path.join(ROOT, "tests", "mutation-equivalents.tsv")
# Two tests cannot pass on mutmut's rewritten copy, which imports mutmut's own helpers and reads its
# setup.cfg from the working folder: one runs web.py as `runpy` to watch its imports, one runs a copy of
# web.py in a project folder of its own. They are left out.
# timeout_multiplier: a mutant that hangs (a retry or numbering loop that never ends) is stopped after 5 times
# its tests' time, not mutmut's 15: at 15 the few that hang took a third of a run's time.
SETUP = """[mutmut]
source_paths=web.py
timeout_multiplier=5
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
    """A new --work folder starts from the verdicts cached in tests/.mutation-results.json: mutmut keeps
    them for every function whose code is unchanged and tests the rest (--retest-survivors: the survivors
    too, once new tests are written)."""
    if os.path.exists(meta_path(work)) or not os.path.exists(RESULTS):
        return
    with open(RESULTS, encoding="utf-8") as handle:
        kept = json.load(handle)
    verdicts = dict(kept["killed"], **{mutant: 0 for mutant in kept.get("survived", [])})
    os.makedirs(os.path.dirname(meta_path(work)), exist_ok=True)
    with open(meta_path(work), "w", encoding="utf-8") as handle:
        json.dump({"exit_code_by_key": verdicts, "hash_by_function_name": kept["hash_by_function_name"],
                   "type_check_error_by_key": {}, "durations_by_key": {}, "estimated_durations_by_key": {}}, handle)


def save_verdicts(work):
    """This run's verdicts, for the next: tests/.mutation-results.json (a full run is longer than a session)."""
    verdicts = read_meta(work)
    codes = sorted(verdicts["exit_code_by_key"].items())
    kept = {"mutmut": "3.8.1", "hash_by_function_name": verdicts["hash_by_function_name"],
            "killed": {k: v for k, v in codes if v in KILLED}, "survived": [k for k, v in codes if v == 0]}
    with open(RESULTS + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(kept, handle, indent=0, sort_keys=True)
        handle.write("\n")
    os.replace(RESULTS + ".tmp", RESULTS)


def read_meta(work):
    """mutmut's verdicts. A running mutmut rewrites the file in place: a read that meets it half-written waits."""
    for _ in range(100):
        try:
            with open(meta_path(work), encoding="utf-8") as handle:
                return json.load(handle)
        except json.JSONDecodeError:
            time.sleep(0.1)
    sys.exit(f"mutation: {meta_path(work)} stays unreadable")


def function_of(mutant):
    """web.x_name__mutmut_7 -> x_name, the key of mutmut's function hashes."""
    return mutant.split(".", 1)[1].rsplit("__mutmut_", 1)[0]


def read_equivalents():
    """{mutant: (its function's hash, why)}: the survivors judged equivalent, in tests/mutation-equivalents.tsv."""
    judged = {}
    with open(EQUIVALENTS, encoding="utf-8") as handle:
        for line in handle:
            if line.strip() and not line.startswith("#"):
                mutant, digest, why = line.rstrip("\n").split("\t")
                judged[mutant] = (digest, why)
    return judged


def survivors(work):
    return sorted(k for k, c in read_meta(work)["exit_code_by_key"].items() if c == 0)


def report(work):
    """The score, then each survivor not judged equivalent (a judgement holds while its function is unchanged)."""
    meta = read_meta(work)
    codes, hashes = meta["exit_code_by_key"], meta["hash_by_function_name"]
    tested = {k: c for k, c in codes.items() if c is not None}
    killed = sum(1 for c in tested.values() if c in KILLED)
    survivors = sorted(k for k, c in tested.items() if c == 0)
    others = sorted(k for k, c in tested.items() if c != 0 and c not in KILLED)
    judged = read_equivalents()
    unjudged = [k for k in survivors if judged.get(k, ("",))[0] != hashes.get(function_of(k))]
    equivalent = len(survivors) - len(unjudged)
    print(f"mutation score: {killed} of {len(tested)} tested killed ({killed / max(1, len(tested)):.1%}; "
          f"{killed / max(1, len(tested) - equivalent):.2%} of those not judged equivalent); "
          f"{len(survivors)} survived ({equivalent} judged equivalent, {len(unjudged)} not judged), "
          f"{len(others)} reached by no test or suspicious; {len(codes) - len(tested)} of {len(codes)} mutants "
          f"not tested yet")
    for mutant in unjudged + others:
        print(f"    {mutant}: {'survived' if mutant in unjudged else 'exit ' + str(codes[mutant])}")


KILLS_LOG = "kills.log"   # in --work/mutants: a line "function<TAB>test" for each test that failed on a mutant


def killers_first(function, tests, kills_log):
    """The tests that killed this function's other mutants first (most kills first), then as mutmut gave
    them (fastest first). With -x a mutant is done at its first failing test, and mutants of one function
    mostly fall to the same few tests: the help-text mutants of an argparse function to the one test that
    reads -h, not to the 579 fast ones mutmut would run before it."""
    kills = {}
    try:
        with open(kills_log, encoding="utf-8") as handle:
            for line in handle:
                killed_function, _, test = line.rstrip("\n").partition("\t")
                if killed_function == function:
                    test = test.split("[")[0]   # a parametrized test's cases share its kills
                    kills[test] = kills.get(test, 0) + 1
    except FileNotFoundError:
        pass
    position = {test: i for i, test in enumerate(tests)}
    return sorted(tests, key=lambda test: (-kills.get(test.split("[")[0], 0), position[test]))


def mutmut_with_killers_first(args):
    """`mutmut ARGS`, each mutant's tests ordered by killers_first and every failing test logged for the next."""
    from mutmut.runners.harness import PytestRunner
    from mutmut.utils.file_utils import change_cwd
    from mutmut.utils.format_utils import mangled_name_from_mutant_name
    from mutmut.__main__ import cli
    kills_log = os.path.abspath(os.path.join("mutants", KILLS_LOG))

    class LogKiller:
        def __init__(self, function):
            self.function = function

        def pytest_runtest_logreport(self, report):
            if report.failed:
                with open(kills_log, "a", encoding="utf-8") as handle:
                    handle.write(f"{self.function}\t{report.nodeid.removeprefix('mutants/')}\n")

    def run_tests(self, *, mutant_name, tests):
        plugins = []
        if mutant_name:
            function = mangled_name_from_mutant_name(mutant_name)
            tests = killers_first(function, list(tests), kills_log)
            plugins = [LogKiller(function)]
        with change_cwd("mutants"):
            return int(self.execute_pytest(self._pytest_args_regular_run(tests), plugins=plugins))

    PytestRunner.run_tests = run_tests
    cli(args)


def run_mutmut(args, work, env):
    """mutmut ARGS in --work. Ctrl-C reaches it too: it stops with what it tested saved, and this waits for it."""
    command = [sys.executable, "-c", f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
                                     "import mutation; mutation.mutmut_with_killers_first(sys.argv[1:])", *args]
    child = subprocess.Popen(command, cwd=work, env=env)
    while True:
        try:
            return child.wait()
        except KeyboardInterrupt:
            continue


def mutant_source(work, name):
    """web.py as it is in the project, with mutant `name` (from the run in `work`) in place of its function;
    None when the function changed since that run."""
    import libcst
    from mutmut.mutation.diff_apply import read_functions_from_index
    from mutmut.utils.format_utils import orig_function_and_class_names_from_key
    from mutmut.utils.file_utils import change_cwd
    with change_cwd(work):
        pair = read_functions_from_index(name, "web.py")
    if pair is None:
        sys.exit(f"mutation: the run in {work} has no mutant {name}")
    original, mutated = pair
    function, cls = orig_function_and_class_names_from_key(name)
    function = function.rpartition(".")[-1]
    with open(os.path.join(ROOT, "web.py"), encoding="utf-8") as handle:
        module = libcst.parse_module(handle.read())
    scopes = [c.body.body for c in module.body if isinstance(c, libcst.ClassDef) and c.name.value == cls] if cls else \
        [module.body]
    found = [f for scope in scopes for f in scope if isinstance(f, libcst.FunctionDef) and f.name.value == function]
    if not found or libcst.Module([found[0]]).code.strip() != libcst.Module([original]).code.strip():
        return None
    return module.deep_replace(found[0], mutated.with_changes(name=libcst.Name(function))).code


def try_mutant(work, name, pytest_args):
    """pytest PYTEST_ARGS in a throw-away copy of the project whose web.py carries one mutant: how a new test
    is seen to kill a survivor in seconds, before mutmut confirms it. Exit 0: killed; 1: survived."""
    source = mutant_source(work, name)
    if source is None:
        sys.exit(f"mutation: web.py's function of {name} changed since the run in {work}: run it again")
    copy = tempfile.mkdtemp(prefix="mutant-")
    try:
        shutil.copytree(ROOT, copy, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", ".pytest_cache", os.path.basename(RESULTS)))
        with open(os.path.join(copy, "web.py"), "w", encoding="utf-8") as handle:
            handle.write(source)
        code = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *pytest_args],
                              cwd=copy, env=dict(os.environ, WEBTOOLS_HOST="127.0.0.1")).returncode
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    if code not in (0, 1):
        sys.exit(f"mutation: pytest exit {code} — no test ran, or it did not collect")
    print(f"{name}: {'killed' if code == 1 else 'survived'}")
    return 0 if code == 1 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True, help="the folder for the copy and mutmut's results (kept)")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2, help="mutants tested at once")
    parser.add_argument("--report", action="store_true", help="only the score and survivors of the run in --work "
                                                              "(a stopped one too), and its kills saved")
    parser.add_argument("--retest-survivors", action="store_true",
                        help="test only the survivors of the run in --work again, with the tests as they are now")
    parser.add_argument("--try", dest="mutant", metavar="NAME",
                        help="run the pytest arguments after -- on a copy of the project carrying mutant NAME of the "
                             "run in --work: exit 0 when a test kills it")
    args, pytest_args = parser.parse_known_args()
    if pytest_args[:1] == ["--"]:
        pytest_args = pytest_args[1:]
    if pytest_args and not args.mutant:
        parser.error(f"unrecognized arguments: {' '.join(pytest_args)}")
    if importlib.util.find_spec("mutmut") is None:
        sys.exit("mutation: mutmut is not installed here — pip install mutmut pytest into this interpreter")
    if args.mutant:
        return try_mutant(args.work, args.mutant, pytest_args)
    env = dict(os.environ, WEBTOOLS_HOST="127.0.0.1")
    if not args.report:
        os.makedirs(args.work, exist_ok=True)
        copy_project(args.work)
        seed_verdicts(args.work)
        again = survivors(args.work) if args.retest_survivors else []   # mutmut given names tests only those
        run_mutmut(["run", "--max-children", str(args.max_children), *again], args.work, env)
    save_verdicts(args.work)
    report(args.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
