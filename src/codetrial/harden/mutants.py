"""Mutants of a reference solution, made by small AST changes, one change each.

The operators are the classic ones of mutation testing: a comparison replaced by its
neighbour (`<` by `<=`, `==` by `!=`, `in` by `not in`...), an arithmetic operator by
another (`+` by `-`, `*` by `/`...), `and` by `or`, a `not` dropped, `True` by
`False`, an integer constant moved by one either way, a statement removed (replaced
by `pass`), the first two positional arguments of a call swapped, and a returned
value replaced by `None`. A mutant whose source is the reference's, or another
mutant's, is left out. Mutants that behave exactly as the reference (equivalent
mutants) cannot be told apart by any test: they are not guessed at here, and a
report lists every survivor with its diff for a person to judge.
"""

from __future__ import annotations

import ast
import copy
import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from codetrial.syntax import parse

_COMPARISONS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitAnd,
}


@dataclass(frozen=True)
class Mutant:
    """One change to the reference: `operator` names its kind, `line` where it is."""

    number: int
    operator: str
    line: int
    source: str

    def diff(self, reference: str) -> str:
        """The change, against the reference as `normalized` writes it."""
        lines = difflib.unified_diff(
            normalized(reference).splitlines(),
            self.source.splitlines(),
            "reference",
            f"mutant {self.number}",
            lineterm="",
            n=1,
        )
        return "\n".join(lines)


def normalized(source: str) -> str:
    """`source` as the AST writes it back, the form every mutant is written in."""
    return ast.unparse(parse(source))


# A change applied in place to the node it was found at; it returns what replaces the
# node in its parent (usually the node itself).
Change = Callable[[ast.AST], ast.AST]


def _changes(node: ast.AST) -> Iterator[tuple[str, Change]]:
    """Every single change the operators make at `node`."""
    if isinstance(node, ast.Compare):
        for position, op in enumerate(node.ops):
            if type(op) in _COMPARISONS:
                yield "comparison", _set_op(position, _COMPARISONS[type(op)])
    elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _ARITHMETIC:
        yield "arithmetic", _replace_field("op", _ARITHMETIC[type(node.op)])
    elif isinstance(node, ast.BoolOp):
        yield "and/or", _replace_field("op", ast.Or if isinstance(node.op, ast.And) else ast.And)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not dropped", lambda n: n.operand  # type: ignore[attr-defined]
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield "boolean", _constant(not node.value)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield "boundary +1", _constant(node.value + 1)
        yield "boundary -1", _constant(node.value - 1)
    elif isinstance(node, ast.Call) and len(node.args) >= 2:
        yield "arguments swapped", _swap_arguments
    elif isinstance(node, ast.Return) and not _returns_none(node):
        yield "returns None", _return_none
    if isinstance(node, ast.stmt) and _removable(node):
        yield "statement removed", lambda n: ast.copy_location(ast.Pass(), n)


def _returns_none(node: ast.Return) -> bool:
    return node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)


def _removable(node: ast.stmt) -> bool:
    """Not a definition, an import, a docstring or a `pass` already."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Pass):
        return False
    if isinstance(node, ast.Import | ast.ImportFrom):
        return False
    return not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))


def _set_op(position: int, op: type[ast.cmpop]) -> Change:
    def change(node: ast.AST) -> ast.AST:
        node.ops[position] = op()  # type: ignore[attr-defined]
        return node

    return change


def _replace_field(field: str, op: type[ast.AST]) -> Change:
    def change(node: ast.AST) -> ast.AST:
        setattr(node, field, op())
        return node

    return change


def _constant(value: bool | int) -> Change:
    return lambda node: ast.copy_location(ast.Constant(value), node)


def _swap_arguments(node: ast.AST) -> ast.AST:
    args = node.args  # type: ignore[attr-defined]
    args[0], args[1] = args[1], args[0]
    return node


def _return_none(node: ast.AST) -> ast.AST:
    node.value = ast.Constant(None)  # type: ignore[attr-defined]
    return node


def _replaced(tree: ast.AST, target: ast.AST, change: Change) -> ast.AST:
    """`tree` with `target` changed, replacing it in its parent when the change gives
    back another node."""
    replacement = change(target)
    if replacement is target:
        return tree
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, field, replacement)
                return tree
            if isinstance(value, list) and any(item is target for item in value):
                value[[id(item) for item in value].index(id(target))] = replacement
                return tree
    raise ValueError("the node to change is not in the tree")


def mutants(reference: str) -> list[Mutant]:
    """Every distinct mutant of `reference`, numbered from 1 in source order."""
    original = parse(reference)
    seen = {normalized(reference)}
    found: list[tuple[int, int, str, str]] = []
    for index, node in enumerate(ast.walk(original)):
        for position, (operator, _) in enumerate(_changes(node)):
            tree = copy.deepcopy(original)
            target = list(ast.walk(tree))[index]
            _, change = list(_changes(target))[position]
            source = ast.unparse(ast.fix_missing_locations(_replaced(tree, target, change)))
            if source not in seen:
                seen.add(source)
                where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
                found.append((*where, operator, source))
    return [
        Mutant(number, operator, line, source)
        for number, (line, _, operator, source) in enumerate(sorted(found), start=1)
    ]
