"""docs/commands.md is the commands' help as it is now, whatever terminal it is written
from."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from codetrial.cli.helpdoc import commands_md

DOCS = Path(__file__).parents[1] / "docs"


def test_commands_md_is_the_help_the_commands_print_now() -> None:
    written = (DOCS / "commands.md").read_text()
    assert written == commands_md(), (
        "docs/commands.md is not the commands' help as it is now: run `make docs`"
    )


def test_the_commands_page_is_the_same_from_any_terminal() -> None:
    env = {**os.environ, "COLUMNS": "40", "TERMINAL_WIDTH": "40", "FORCE_COLOR": "1",
           "TERM": "xterm-256color"}  # fmt: skip
    printed = subprocess.run(
        [sys.executable, "-m", "codetrial.cli.helpdoc"], capture_output=True, text=True,
        env=env, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert printed == commands_md()
    assert "\x1b[" not in printed
