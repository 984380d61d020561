"""The gate's rules: one small check each, with a stable id and a message.

Rules register themselves in RULES the way a plugin would. Each yields the
violations it finds in a parsed candidate; the gate reports the first one by line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from codetrial.registry import Registry
from codetrial.tasks import Signature

FORBIDDEN_CALLS = frozenset(
    {
        "eval",
        "exec",
        "open",
        "compile",
        "__import__",
        "input",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
    }
)


@dataclass(frozen=True)
class Violation:
    rule_id: str
    message: str
    line: int


@dataclass(frozen=True)
class Context:
    """What a rule checks against; `signature` is None for a program, which defines
    no requested function."""

    signature: Signature | None
    allowed_modules: frozenset[str]
    allow_helpers: bool
    allowed_calls: frozenset[str] = frozenset()


Check = Callable[[ast.Module, Context], Iterator[Violation]]


@dataclass(frozen=True)
class Rule:
    id: str
    summary: str
    check: Check


RULES: Registry[Rule] = Registry("gate rule")


def rule(rule_id: str, summary: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        RULES.register(rule_id, Rule(rule_id, summary, check))
        return check

    return register


def _line(node: ast.AST) -> int:
    return getattr(node, "lineno", 0)


def _top_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


@rule("G001", "imports outside the profile's allowed modules")
def no_imports(tree: ast.Module, ctx: Context) -> Iterator[Violation]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or "." * node.level]
        else:
            continue
        for name in names:
            if name.split(".")[0] not in ctx.allowed_modules:
                kind = type(node).__name__
                yield Violation("G001", f"Blocked AST node: {kind} ({name})", _line(node))


@rule("G002", "class definitions")
def no_classes(tree: ast.Module, ctx: Context) -> Iterator[Violation]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            yield Violation("G002", f"Blocked AST node: ClassDef ({node.name})", _line(node))


@rule("G003", "global and nonlocal statements")
def no_global_state(tree: ast.Module, ctx: Context) -> Iterator[Violation]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Global | ast.Nonlocal):
            names = ", ".join(node.names)
            yield Violation(
                "G003", f"Blocked AST node: {type(node).__name__} ({names})", _line(node)
            )


@rule("G004", "top-level functions other than the requested one")
def only_requested_function(tree: ast.Module, ctx: Context) -> Iterator[Violation]:
    if ctx.allow_helpers or ctx.signature is None:
        return
    for fn in _top_functions(tree):
        if fn.name != ctx.signature.entry_point:
            yield Violation(
                "G004",
                f"function {fn.name!r} was not requested (define only {ctx.signature.entry_point})",
                _line(fn),
            )


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


@rule("G005", "top-level statements other than function definitions and a docstring")
def no_top_level_statements(tree: ast.Module, ctx: Context) -> Iterator[Violation]:
    for index, node in enumerate(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if index == 0 and _is_docstring(node):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom) and ctx.allowed_modules:
            continue
        yield Violation(
            "G005", f"top-level statement {type(node).__name__} is not allowed", _line(node)
        )


@rule("G006", "calls to or references of dynamic-execution, I/O and reflection built-ins")
def no_forbidden_builtins(tree: ast.Module, ctx: Context) -> Iterator[Violation]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_CALLS - ctx.allowed_calls:
            yield Violation("G006", f"use of forbidden built-in {node.id}()", _line(node))


@rule("G007", "dunder attribute access and dunder names")
def no_dunders(tree: ast.Module, ctx: Context) -> Iterator[Violation]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            yield Violation("G007", f"dunder attribute access .{node.attr}", _line(node))
        elif isinstance(node, ast.Name) and node.id.startswith("__") and node.id.endswith("__"):
            yield Violation("G007", f"dunder name {node.id}", _line(node))


@rule("G008", "the requested function is defined, once")
def defines_requested_function(tree: ast.Module, ctx: Context) -> Iterator[Violation]:
    if ctx.signature is None:
        return
    wanted = ctx.signature.entry_point
    found = [fn for fn in _top_functions(tree) if fn.name == wanted]
    if not found:
        yield Violation("G008", f"the requested function {wanted!r} is not defined", 0)
    elif len(found) > 1:
        yield Violation("G008", f"{wanted!r} is defined {len(found)} times", _line(found[1]))


@rule("G009", "the requested function takes the requested parameters")
def matches_signature(tree: ast.Module, ctx: Context) -> Iterator[Violation]:
    if ctx.signature is None:
        return
    for fn in _top_functions(tree):
        if fn.name != ctx.signature.entry_point:
            continue
        args = fn.args
        positional = len(args.posonlyargs) + len(args.args)
        required = positional - len(args.defaults)
        wanted = ctx.signature.n_params
        takes_enough = positional >= wanted or args.vararg is not None
        if required > wanted or not takes_enough:
            yield Violation(
                "G009",
                f"{fn.name}() takes {positional} positional parameter(s) but the "
                f"specification requires {wanted}: {ctx.signature.source.splitlines()[0]}",
                _line(fn),
            )
