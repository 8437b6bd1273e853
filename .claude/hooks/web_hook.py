"""Claude Code's hooks run web.py through this file (`python3 .claude/hooks/web_hook.py pre|post|stop`,
the same as `python3 web.py hook pre|post|stop`): imported, web.py is compiled once and its bytecode kept
in __pycache__/ (unless PYTHONDONTWRITEBYTECODE is set), where a script run by python3 is compiled again on
every Read, Write, Edit and Agent call. A Read of a file outside the md root, the most common call, is none
of the gate's business: it is let through before web.py is even loaded."""

import io
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # web.py's folder
data = sys.stdin.buffer.read()
try:
    payload = json.loads(data)
    path = os.path.join(str(payload.get("cwd") or ""), payload["tool_input"]["file_path"])
    root = os.path.realpath(os.environ.get("WEB_MD_ROOT") or os.path.join(ROOT, "md"))
    if sys.argv[1:] == ["pre"] and payload.get("tool_name") == "Read" and \
            not os.path.realpath(path).startswith(root + os.sep):
        sys.exit(0)
except (ValueError, TypeError, KeyError, AttributeError):
    pass   # web.py says what is wrong with it
sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
sys.path.insert(0, ROOT)
import web  # noqa: E402

sys.exit(web.main(["hook", *sys.argv[1:]]))
