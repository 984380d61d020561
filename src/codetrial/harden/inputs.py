"""New inputs for a function task, made from the inputs its own tests use.

Two generators, both seeded: type-aware mutation of the seed inputs (EvalPlus's idea:
an int moves, a string gains or loses a character, a list gains, loses or changes an
element, and so on, keeping each argument's type), and property-based generation with
Hypothesis, from strategies built from the signature's annotations or, where an
argument has none, from the types of its seed values. Seeds are the literal argument
lists of the calls the tests make to the function (or to `candidate`, as HumanEval's
`check` calls it).
"""

from __future__ import annotations

import ast
import importlib
import random
import tempfile
import typing
from collections.abc import Sequence
from typing import Any

from codetrial.extras import require
from codetrial.literals import literal_calls
from codetrial.tasks import Task

Args = tuple[Any, ...]
MAX_ITEMS = 8
MAX_INT = 1000


def seed_inputs(task: Task) -> list[Args]:
    """The literal argument lists the task's tests call its function with, in order,
    each once, with as many arguments as the signature takes."""
    calls = literal_calls((t.source for t in task.tests), {task.entry_point, "candidate"})
    return [tuple(args) for args in calls if len(args) == task.signature.n_params]


def source_of(value: Any) -> str:
    """`value` as a Python literal, sets in a fixed order (their own iteration order
    depends on the process's hash seed)."""
    if isinstance(value, set | frozenset):
        items = sorted(source_of(v) for v in value)
        return "{" + ", ".join(items) + "}" if items else "set()"
    if isinstance(value, list):
        return "[" + ", ".join(source_of(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(source_of(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{source_of(k)}: {source_of(v)}" for k, v in value.items()) + "}"
    return repr(value)


def mutated(value: Any, rng: random.Random) -> Any:
    """`value` changed a little, its type kept."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([value + 1, value - 1, -value, 2 * value, rng.randint(-100, 100)])
    if isinstance(value, float):
        return rng.choice([value + 1.0, value - 0.5, -value, value * 2.5, rng.uniform(-100, 100)])
    if isinstance(value, str):
        return _mutated_text(value, rng)
    if isinstance(value, list):
        return _mutated_items(value, rng)
    if isinstance(value, tuple):
        if not value:
            return value
        index = rng.randrange(len(value))
        return (*value[:index], mutated(value[index], rng), *value[index + 1 :])
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        return {**value, key: mutated(value[key], rng)}
    return value


def _mutated_text(text: str, rng: random.Random) -> str:
    alphabet = text or "abc"
    where = rng.randint(0, len(text))
    choice = rng.randrange(4) if text else 0
    if choice == 0:
        return text[:where] + rng.choice(alphabet + " 0aZ") + text[where:]
    if choice == 1:
        return text[: where - 1] + text[where:] if where else text[1:]
    if choice == 2:
        return text[::-1]
    return text + text[: rng.randint(1, len(text))]


def _mutated_items(items: list[Any], rng: random.Random) -> list[Any]:
    if not items:
        return items
    copy = list(items)
    index = rng.randrange(len(copy))
    action = rng.randrange(4)
    if action == 0 and len(copy) < 4 * MAX_ITEMS:
        copy.insert(rng.randint(0, len(copy)), mutated(copy[index], rng))
    elif action == 1:
        del copy[index]
    elif action == 2:
        copy[index] = mutated(copy[index], rng)
    else:
        rng.shuffle(copy)
    return copy


def mutation_inputs(seeds: Sequence[Args], count: int, seed: int) -> list[Args]:
    """`count` inputs, each a seed (or an input made before) with one argument
    mutated."""
    rng = random.Random(seed)
    pool = list(seeds)
    made: list[Args] = []
    for _ in range(count if pool else 0):
        base = rng.choice(pool)
        if not base:
            break
        index = rng.randrange(len(base))
        args = (*base[:index], mutated(base[index], rng), *base[index + 1 :])
        made.append(args)
        pool.append(args)
    return made


_NAMES: dict[str, Any] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "list": list,
    "List": list,
    "tuple": tuple,
    "Tuple": tuple,
    "dict": dict,
    "Dict": dict,
    "set": set,
    "Set": set,
    "Optional": typing.Optional,
    "Union": typing.Union,
}


def _type_of(node: ast.expr | None) -> Any:
    """The type an annotation names, read from its AST (never evaluated); None for
    what the generator does not know."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and node.value is None:
        return type(None)
    if isinstance(node, ast.Name | ast.Attribute):
        return _NAMES.get(node.id if isinstance(node, ast.Name) else node.attr)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = [_type_of(node.left), _type_of(node.right)]
        return None if None in parts else typing.Union[parts[0], parts[1]]  # noqa: UP007
    if isinstance(node, ast.Subscript):
        origin = _type_of(node.value)
        inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        args = [
            Ellipsis if isinstance(a, ast.Constant) and a.value is Ellipsis else _type_of(a)
            for a in inner
        ]
        if origin is None or None in args:
            return None
        return origin[tuple(args)] if len(args) > 1 else origin[args[0]]
    return None


def _annotations(task: Task) -> list[Any]:
    """Each parameter's annotated type, or None."""
    args = task.signature.definition().args
    return [_type_of(p.annotation) for p in [*args.posonlyargs, *args.args]]


def _from_type(kind: Any, st: Any) -> Any:
    """A Hypothesis strategy for an annotation, bounded so inputs stay small."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    simple = {
        bool: st.booleans(),
        int: st.integers(-MAX_INT, MAX_INT),
        float: st.floats(-MAX_INT, MAX_INT, allow_nan=False, allow_infinity=False),
        str: st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=MAX_ITEMS),
    }
    if kind in simple:
        return simple[kind]
    if kind is type(None):
        return st.none()
    inner = [_from_type(a, st) for a in args if a is not Ellipsis]
    if not inner or None in inner:
        return None  # a bare container, or one of what it holds is unknown
    if origin in (list, set):
        return st.lists(inner[0], max_size=MAX_ITEMS).map(origin)
    if origin is tuple and args[-1] is not Ellipsis:
        return st.tuples(*inner)
    if origin is tuple:
        return st.lists(inner[0], max_size=MAX_ITEMS).map(tuple)
    if origin is dict and len(inner) == 2:
        return st.dictionaries(inner[0], inner[1], max_size=MAX_ITEMS)
    if origin is typing.Union:
        return st.one_of(*inner)
    return None


def _from_value(value: Any, st: Any) -> Any:
    """A strategy for values shaped like `value`."""
    if isinstance(value, list | tuple) and value:
        inner = st.one_of(*[_from_value(v, st) for v in value[:3]])
        strategy = st.lists(inner, max_size=MAX_ITEMS)
        return strategy if isinstance(value, list) else strategy.map(tuple)
    if isinstance(value, dict) and value:
        key, item = next(iter(value.items()))
        return st.dictionaries(_from_value(key, st), _from_value(item, st), max_size=MAX_ITEMS)
    strategy = _from_type(type(value), st)
    return st.just(value) if strategy is None else strategy


def property_inputs(task: Task, seeds: Sequence[Args], count: int, seed: int) -> list[Args]:
    """`count` inputs drawn by Hypothesis, reproducibly for a given `seed`."""
    hypothesis = require("hypothesis", "hypothesis", "harden", "codetrial harden")
    st = hypothesis.strategies
    strategies = []
    for position, kind in enumerate(_annotations(task)):
        strategy = _from_type(kind, st) if kind is not None else None
        if strategy is None and seeds:
            strategy = _from_value(seeds[0][position], st)
        if strategy is None:
            return []
        strategies.append(strategy)
    drawn: list[Args] = []
    settings = hypothesis.settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(hypothesis.HealthCheck),
    )

    def collect(args: Args) -> None:
        drawn.append(args)

    configuration = importlib.import_module("hypothesis.configuration")
    with tempfile.TemporaryDirectory(prefix="codetrial-hypothesis-") as scratch:
        # Its caches go to a scratch folder, not a .hypothesis folder where the user is.
        configuration.set_hypothesis_home_dir(scratch)
        try:
            hypothesis.seed(seed)(settings(hypothesis.given(st.tuples(*strategies))(collect)))()
        finally:
            configuration.set_hypothesis_home_dir(None)
    return drawn
