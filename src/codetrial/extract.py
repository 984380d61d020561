"""Code out of a model response. The raw text is always kept beside what is extracted."""

from __future__ import annotations

import ast
import re

from codetrial.records import Candidate

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.S | re.M)
_PYTHON_TAGS = {"", "python", "py", "python3"}


def without_reasoning(text: str) -> str:
    """The text without <think> blocks (an unclosed one runs to the end)."""
    return _THINK.sub("", text)


def _looks_like_code(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return re.search(r"^\s*def\s+\w+\s*\(", text, re.MULTILINE) is not None
    return any(not isinstance(node, ast.Expr) for node in tree.body)


def extract(raw: str, entry_point: str) -> Candidate:
    """Pick the fenced block that defines `entry_point`, else the first Python block.

    An unfenced response counts as code only when it looks like Python; prose, empty
    and reasoning-only responses give a candidate without code (outcome no_code).
    """
    text = without_reasoning(raw)
    blocks = [
        (tag.lower(), body) for tag, body in _FENCE.findall(text) if tag.lower() in _PYTHON_TAGS
    ]
    defines = re.compile(rf"^\s*def\s+{re.escape(entry_point)}\s*\(", re.MULTILINE)
    chosen = next((body for _, body in blocks if defines.search(body)), None)
    if chosen is None and blocks:
        chosen = blocks[0][1]
    if chosen is None and "```" not in text and _looks_like_code(text):
        chosen = text
    if chosen is None or not chosen.strip():
        return Candidate(raw=raw, code=None)
    return Candidate(raw=raw, code=chosen.strip("\n") + "\n")
