"""The documentation holds together: docs/commands.md is the commands' help as it is
now, whatever terminal it is written from, and every relative link in README.md and
docs/ leads to a file, and a heading in it, that exist."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

from codetrial.cli.helpdoc import commands_md

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)


def _prose(page: Path) -> str:
    """The page without its fenced blocks, whose `#` lines and brackets are code."""
    return FENCE.sub("", page.read_text())


@functools.cache
def _anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, made as GitHub makes them."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#+ (.+)$", _prose(page), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        suffix = 0
        while (anchor := slug if suffix == 0 else f"{slug}-{suffix}") in anchors:
            suffix += 1
        anchors.add(anchor)
    return anchors


def _relative_links(page: Path) -> list[str]:
    return [target for target in LINK.findall(_prose(page)) if not re.match(r"[a-z]+:", target)]


def test_commands_md_is_the_help_the_commands_print_now() -> None:
    written = (DOCS / "commands.md").read_text()
    assert written == commands_md(), (
        "docs/commands.md is not the commands' help as it is now: run `make docs`"
    )


def test_the_commands_page_is_the_same_from_any_terminal() -> None:
    env = {
        **os.environ,
        "COLUMNS": "40",
        "TERMINAL_WIDTH": "40",
        "FORCE_COLOR": "1",
        "TERM": "xterm-256color",
    }
    printed = subprocess.run(
        [sys.executable, "-m", "codetrial.cli.helpdoc"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    ).stdout
    assert printed == commands_md()
    assert "\x1b[" not in printed


def test_every_relative_link_leads_to_a_file_and_heading_that_exist() -> None:
    broken = []
    for page in PAGES:
        for target in _relative_links(page):
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_readme_maps_every_docs_page() -> None:
    mapped = {(ROOT / target).resolve() for target in _relative_links(ROOT / "README.md")}
    missing = [p.relative_to(ROOT) for p in sorted(DOCS.rglob("*.md")) if p not in mapped]
    assert not missing, f"pages the README's map of docs/ leaves out: {missing}"
