"""Code out of a model response. The raw text is always kept beside what is extracted."""

from __future__ import annotations

import ast
import re

from codetrial.records import Candidate
from codetrial.syntax import parse

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.S | re.M)
_PYTHON_TAGS = {"", "python", "py", "python3"}
_DEFINITIONS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
)


def without_reasoning(text: str) -> str:
    """The text without <think> blocks (an unclosed one runs to the end)."""
    return _THINK.sub("", text)


def fenced_blocks(raw: str) -> list[tuple[str, str]]:
    """The fenced blocks of a response outside its reasoning, in order: each block's
    language tag (lower case, "" for none) and its text."""
    return [(tag.lower(), body) for tag, body in _FENCE.findall(without_reasoning(raw))]


def _looks_like_code(text: str) -> bool:
    try:
        tree = parse(text)
    except SyntaxError:
        return re.search(r"^\s*def\s+\w+\s*\(", text, re.MULTILINE) is not None
    return any(not isinstance(node, ast.Expr) for node in tree.body)


def _longest_parsable_prefix(code: str) -> tuple[list[str], ast.Module] | None:
    lines = code.splitlines(keepends=True)
    for end in range(len(lines), 0, -1):
        try:
            return lines[:end], parse("".join(lines[:end]))
        except SyntaxError:
            continue
    return None


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}


def _source(lines: list[str], node: ast.stmt) -> str:
    """A statement's lines, its decorators' included."""
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return "".join(lines[start - 1 : node.end_lineno])


def definitions(code: str, entry_point: str) -> str:
    """The code as EvalPlus's sanitizer leaves it: of its longest parsable prefix, the
    imports and the top-level definitions and assignments that `entry_point` needs
    (all of them when it defines no `entry_point`); example calls, prints, asserts and
    `__main__` blocks go. Code with nothing of that kind is returned as it was."""
    parsed = _longest_parsable_prefix(code)
    if parsed is None:
        return code
    lines, tree = parsed
    imports: list[ast.stmt] = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    named: list[ast.stmt] = [n for n in tree.body if isinstance(n, _DEFINITIONS) and _defined(n)]
    by_name = {name: n for n in named for name in _defined(n)}
    if entry_point in by_name:
        needed, todo = set(), [entry_point]
        while todo:
            name = todo.pop()
            if name in by_name and name not in needed:
                needed.add(name)
                todo += [n.id for n in ast.walk(by_name[name]) if isinstance(n, ast.Name)]
        named = [n for n in named if _defined(n) & needed]
    if not named:
        return code
    kept = sorted(imports + named, key=lambda n: n.lineno)
    return "\n".join(_source(lines, n) for n in kept)


def extract(raw: str, entry_point: str, definitions_only: bool = False) -> Candidate:
    """Pick the fenced block that defines `entry_point`, else the first Python block;
    with `definitions_only`, only its `definitions`.

    An unfenced response counts as code only when it looks like Python; prose, empty
    and reasoning-only responses give a candidate without code (outcome no_code).
    """
    text = without_reasoning(raw)
    blocks = [(tag, body) for tag, body in fenced_blocks(raw) if tag in _PYTHON_TAGS]
    defines = re.compile(rf"^\s*def\s+{re.escape(entry_point)}\s*\(", re.MULTILINE)
    chosen = next((body for _, body in blocks if defines.search(body)), None)
    if chosen is None and blocks:
        chosen = blocks[0][1]
    if chosen is None and "```" not in text and _looks_like_code(text):
        chosen = text
    if chosen is None or not chosen.strip():
        return Candidate(raw=raw, code=None)
    if definitions_only:
        chosen = definitions(chosen, entry_point)
    return Candidate(raw=raw, code=chosen.strip("\n") + "\n")
