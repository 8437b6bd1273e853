"""Claude Code's hooks run web.py through this file (`python3 .claude/hooks/web_hook.py pre|post|stop`,
the same as `python3 web.py hook pre|post|stop`): imported, web.py is compiled once and its bytecode kept
in __pycache__/ (unless PYTHONDONTWRITEBYTECODE is set), where a script run by python3 is compiled again on
every Read, Write, Edit and Agent call."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))   # web.py's folder
import web  # noqa: E402

sys.exit(web.main(["hook", *sys.argv[1:]]))
