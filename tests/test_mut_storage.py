"""What the full mutation run found that no test held in a topic's storage: the ledger's lines as a person
greps them, the files a topic's web folder holds and their permissions, the message when they cannot be
written, the lock two writers share (on Windows too, through msvcrt), and elapsed_ms's unit."""

import errno
import json
import os
import stat
import sys
import threading
import time
import types

import pytest

import web
from conftest import read_ledger


def web_folder(md_root):
    return md_root / "t" / "web"


# --- the ledger and the lock file, as a person sees them ---------------------------------------------------

def test_the_ledger_is_one_compact_json_event_a_line_with_the_goal_as_typed(run, md_root):
    goal = "comment les récifs « guérissent »"
    run("init", goal, "--topic", "t")
    text = (web_folder(md_root) / "_ledger.jsonl").read_text("utf-8")
    event = json.loads(text)
    assert text == (   # what `grep '"command":"init"'` or `grep récifs` finds
        f'{{"run":"{event["run"]}","time":"{event["time"]}","command":"init","round":0,"goal":"{goal}","topic":"t",'
        f'"options":{{"max_sources":12,"deep":false,"max_rounds":1,"with_corpus":false}},'
        f'"synthesis":"{event["synthesis"]}"}}\n')


def test_a_topic_keeps_its_lock_file_beside_its_ledger_and_writes_nothing_where_web_py_runs(run, md_root, tmp_path,
                                                                                           monkeypatch):
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    run("init", "g", "--topic", "t")
    assert sorted(os.listdir(web_folder(md_root))) == [".index", ".lock", "_ledger.jsonl"]   # .gitignore names .lock
    assert (web_folder(md_root) / ".index" / ".gitignore").read_text() == "*\n"   # the ledger's index: no git sees it
    assert os.listdir(here) == []


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_the_ledger_and_the_lock_file_are_readable_by_all_and_writable_by_their_owner_only(run, md_root):
    old = os.umask(0o022)
    try:
        run("init", "g", "--topic", "t")
    finally:
        os.umask(old)
    modes = {name: stat.S_IMODE(os.stat(web_folder(md_root) / name).st_mode) for name in (".lock", "_ledger.jsonl")}
    assert modes == {".lock": 0o644, "_ledger.jsonl": 0o644}   # ls -l: -rw-r--r--, nothing executable


# --- a web folder that cannot be written ----------------------------------------------------------------------

def refuse_to_open(monkeypatch, name):
    """os.open refuses the file `name` of any folder, as a read-only file or folder does for a user without root."""
    real_open = os.open

    def refusing(path, *args, **kwargs):
        if os.path.basename(path) == name:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, *args, **kwargs)
    monkeypatch.setattr(os, "open", refusing)


@pytest.mark.parametrize("name", [".lock", "_ledger.jsonl"])
def test_a_lock_file_or_ledger_that_cannot_be_written_is_exit_3_naming_it(run, md_root, monkeypatch, name):
    refuse_to_open(monkeypatch, name)
    r = run("init", "g", "--topic", "t")
    assert (r.code, r.out) == (web.EXIT_CONFIG, "")
    assert r.err == (f"web.py: storage: cannot write {web.display_path(web_folder(md_root) / name)} (Permission "
                     f"denied) — make the md root writable or point WEB_MD_ROOT elsewhere\n")


# --- the topic lock on Windows --------------------------------------------------------------------------------

class WindowsLocks:
    """msvcrt.locking as Microsoft documents it: locking(fd, mode, nbytes) locks or unlocks nbytes from the
    file's current position (without moving it); a region overlapping a locked one cannot be locked, even
    through the same file, and LK_LOCK raises OSError when it stays locked through its retries (here one short
    wait); LK_UNLCK unlocks exactly a region this descriptor locked and raises OSError for any other; closing
    the file does not stand for unlocking (the caller must unlock first)."""

    LK_UNLCK, LK_LOCK, LK_NBLCK, LK_RLCK, LK_NBRLCK = 0, 1, 2, 3, 4

    def __init__(self):
        self.changed = threading.Condition()
        self.held = {}        # (st_dev, st_ino) -> [(start, nbytes, fd)]
        self.refused = 0      # LK_LOCK calls that raised because the region stayed locked
        self.over = False

    def module(self):
        module = types.ModuleType("msvcrt")
        for name in ("LK_UNLCK", "LK_LOCK", "LK_NBLCK", "LK_RLCK", "LK_NBRLCK"):
            setattr(module, name, getattr(self, name))
        module.locking = self.locking
        return module

    def locking(self, fd, mode, nbytes, /):
        if not all(isinstance(value, int) for value in (fd, mode, nbytes)):
            raise TypeError("'NoneType' object cannot be interpreted as an integer")
        start, info = os.lseek(fd, 0, os.SEEK_CUR), os.fstat(fd)
        with self.changed:
            regions = self.held.setdefault((info.st_dev, info.st_ino), [])
            if mode == self.LK_UNLCK:
                if (start, nbytes, fd) not in regions:
                    raise OSError(errno.EACCES, "Permission denied")
                regions.remove((start, nbytes, fd))
                self.changed.notify_all()
                return
            assert mode == self.LK_LOCK, "web.py asks only for LK_LOCK"
            if self.over:
                raise RuntimeError("the test is over")

            def locked():
                return any(s < start + nbytes and start < s + n for s, n, _ in regions)
            if locked():
                self.changed.wait(0.01)   # LK_LOCK tries again (ten times, a second apart)
            if locked():
                self.refused += 1
                self.changed.notify_all()
                raise OSError(errno.EDEADLOCK, "Resource deadlock avoided")
            regions.append((start, nbytes, fd))

    def wait_for(self, predicate):
        with self.changed:
            return self.changed.wait_for(predicate, timeout=10)

    def stop(self):
        with self.changed:
            self.over = True
            self.changed.notify_all()


def test_on_windows_a_second_writer_waits_for_the_first_and_the_lock_is_free_once_both_left(md_root, monkeypatch):
    web_dir = str(web_folder(md_root))
    os.makedirs(web_dir)
    ledger = os.path.join(web_dir, "_ledger.jsonl")
    locks, done, errors, seen = WindowsLocks(), threading.Event(), [], {}

    def second_writer():   # a note being recorded while another web.py holds the topic
        try:
            web.append_events(web_dir, [{"run": "r1", "command": "note"}])
        except BaseException as err:  # noqa: B902 — reported below
            errors.append(err)
        finally:
            done.set()
            with locks.changed:
                locks.changed.notify_all()

    with monkeypatch.context() as m:
        m.setattr(os, "name", "nt")
        m.setitem(sys.modules, "msvcrt", locks.module())
        m.setitem(sys.modules, "fcntl", None)   # Windows has no fcntl
        second = threading.Thread(target=second_writer, daemon=True)
        try:
            with web.TopicLock(web_dir):
                second.start()
                locks.wait_for(lambda: locks.refused >= 2 or done.is_set())
                seen["while the first held it"] = (done.is_set(), os.path.exists(ledger))
            second.join(10)
            seen["after"] = done.is_set()
            if seen["after"]:   # else the lock was never given back: a third writer would wait for ever
                with web.TopicLock(web_dir):   # a third writer gets it at once
                    seen["third"] = True
        finally:
            locks.stop()
    assert seen == {"while the first held it": (False, False), "after": True, "third": True} and errors == []
    assert read_ledger(ledger) == [{"run": "r1", "command": "note"}]
    assert [r for regions in locks.held.values() for r in regions] == []   # every lock was unlocked


# --- elapsed_ms -----------------------------------------------------------------------------------------------

def test_elapsed_ms_counts_an_hour_as_3_600_000_milliseconds():
    assert 3_600_000 <= web.elapsed_ms(time.monotonic() - 3600) < 3_601_000
