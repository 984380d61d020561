"""Plain data across the sandbox boundary: JSON with tagged types.

This module uses the standard library only: the sandboxed worker loads it from a
read-only file without the rest of codetrial. Exact types are required (a subclass of
list with a forged __eq__ is not plain data), so every value the trusted side gets
back compares by the built-in rules.

Tags: {"$tuple": [...]}, {"$set": [...]}, {"$frozenset": [...]}, {"$bytes": b64},
{"$bytearray": b64}, {"$dict": [[k, v], ...]}, {"$float": "nan"|"inf"|"-inf"},
{"$complex": [real, imag]},
{"$iter": [...]}: an iterator (a generator, map, filter...) consumed on the candidate's
side, which arrives as an iterator over those items (so `list(f(x))` works and
`f(x) == [...]` stays False), and {"$ref": [step, ...]}: the same object as an
argument (or a container inside one), so `result is not argument` checks keep their
meaning.

Objects across two processes (see remote.py) use the same encoding, with what is not
plain data handed to a caller's function instead of refused: an instance of a
subclass of a built-in type then crosses as the built-in value, read through the
built-in's own methods, and an iterator as a reference (it may never end). Values of
the standard library that are data cross as themselves: {"$decimal": text},
{"$fraction": [numerator, denominator]}, {"$range": [start, stop, step]},
{"$counter": [[k, v], ...]} and {"$defaultdict": [factory, [[k, v], ...]]} (its factory
one of plain data's classes, by name, or null).
"""

from __future__ import annotations

import base64
import itertools
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

MAX_DEPTH = 100
MAX_ITEMS = 100_000

Path = list[Any]
_NO_TAGS: Mapping[str, Any] = MappingProxyType({})


class NotPlainData(TypeError):
    """A value that cannot cross the boundary as plain data."""


def _float(value: float) -> Any:
    if math.isfinite(value):
        return value
    return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


_BUILTIN_VALUES: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (int, int.__int__),
    (float, float.__float__),
    (complex, lambda v: complex(complex.real.__get__(v), complex.imag.__get__(v))),
    (str, str.__str__),
    (bytes, lambda v: bytes.__getitem__(v, slice(None))),
    (bytearray, lambda v: bytearray.__getitem__(v, slice(None))),
    (list, lambda v: list(list.__iter__(v))),
    (tuple, lambda v: tuple(tuple.__iter__(v))),
    (set, lambda v: set(set.__iter__(v))),
    (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
    (dict, lambda v: dict(dict.items(v))),
)
_PLAIN_TYPES = frozenset({type(None), bool, *(kind for kind, _ in _BUILTIN_VALUES)})


def _builtin_value(value: Any) -> Any:
    """The built-in value inside an instance of a subclass of a built-in type, read
    with the built-in's own methods (none of the subclass's runs); `value` itself
    when its type derives from none."""
    kind = type(value)
    for builtin, read in _BUILTIN_VALUES:
        if issubclass(kind, builtin):
            return read(value)
    return value


# Factories a defaultdict keeps when it crosses: plain data's own classes.
_FACTORIES: dict[Any, type] = {k.__name__: k for k in (int, float, str, list, tuple, set, dict)}


def _library_type(value: Any, module: str, name: str) -> bool:
    """Whether `value` is exactly the standard library's `module.name` (a module that
    is not loaded made no value)."""
    loaded = sys.modules.get(module)
    return loaded is not None and type(value) is getattr(loaded, name, None)


def _library_value(value: Any, depth: int, other: Callable[[Any], Any]) -> Any:
    """Tagged JSON for a value of the standard library that is data (a Decimal, a
    Fraction, a range, a Counter, a defaultdict of a plain factory), kept as itself
    rather than read as the built-in it derives from; None for anything else."""
    if type(value) is range:
        return {"$range": [value.start, value.stop, value.step]}
    if _library_type(value, "decimal", "Decimal"):
        return {"$decimal": str(value)}
    if _library_type(value, "fractions", "Fraction"):
        return {"$fraction": [value.numerator, value.denominator]}
    counter = _library_type(value, "collections", "Counter")
    defaults = _library_type(value, "collections", "defaultdict")
    if not (counter or defaults):
        return None
    pairs = [
        [encode(k, None, depth + 1, other), encode(v, None, depth + 1, other)]
        for k, v in dict.items(value)
    ]
    if counter:
        return {"$counter": pairs}
    factory: Any = value.default_factory
    named = getattr(factory, "__name__", None)
    return {"$defaultdict": [named if _FACTORIES.get(named) is factory else None, pairs]}


def encode(
    value: Any,
    refs: dict[int, Path] | None = None,
    depth: int = 0,
    other: Callable[[Any], Any] | None = None,
) -> Any:
    """Tagged JSON for `value`; containers found in `refs` become {"$ref": path}.
    With `other`, a value that is not plain data (or is nested too deeply) is
    encoded by `other(value)` instead of refused."""
    if other is not None and (depth > MAX_DEPTH or type(value) not in _PLAIN_TYPES):
        if depth <= MAX_DEPTH and (library := _library_value(value, depth, other)) is not None:
            return library
        plain = _builtin_value(value) if depth <= MAX_DEPTH else value
        if type(plain) not in _PLAIN_TYPES:
            return other(value)
        value = plain
    if depth > MAX_DEPTH:
        raise NotPlainData("the value is nested too deeply (or is cyclic)")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return _float(value)
    if kind is complex:
        return {"$complex": [_float(value.real), _float(value.imag)]}
    if refs is not None and id(value) in refs:
        return {"$ref": refs[id(value)]}
    deeper = depth + 1
    if kind is list:
        return [encode(item, refs, deeper, other) for item in value]
    if kind is tuple:
        return {"$tuple": [encode(item, refs, deeper, other) for item in value]}
    if kind is set or kind is frozenset:
        items = [encode(item, None, deeper, other) for item in value]
        return {"$set" if kind is set else "$frozenset": items}
    if kind is bytes or kind is bytearray:
        tag = "$bytes" if kind is bytes else "$bytearray"
        return {tag: base64.b64encode(bytes(value)).decode("ascii")}
    if kind is dict:
        return {
            "$dict": [
                [encode(k, None, deeper, other), encode(v, refs, deeper, other)]
                for k, v in value.items()
            ]
        }
    if isinstance(value, Iterator):
        items = list(itertools.islice(value, MAX_ITEMS + 1))
        if len(items) > MAX_ITEMS:
            raise NotPlainData(f"an iterator of more than {MAX_ITEMS} items")
        return {"$iter": [encode(item, None, deeper) for item in items]}
    raise NotPlainData(f"a value of type {kind.__name__} is not plain data")


def decode(data: Any, resolve: Any = None, tags: Mapping[str, Any] = _NO_TAGS) -> Any:
    """The inverse of encode; `resolve(path)` returns the object a $ref points to, and
    `tags` decode the tags an `other` made (tag -> a function of the tagged body)."""
    if isinstance(data, list):
        return [decode(item, resolve, tags) for item in data]
    if not isinstance(data, dict):
        return data
    if len(data) != 1:
        raise NotPlainData("malformed tagged value")
    ((tag, body),) = data.items()
    if tag in tags:
        return tags[tag](body)
    if tag == "$tuple":
        return tuple(decode(item, resolve, tags) for item in body)
    if tag == "$set":
        return {decode(item, resolve, tags) for item in body}
    if tag == "$frozenset":
        return frozenset(decode(item, resolve, tags) for item in body)
    if tag == "$bytes":
        return base64.b64decode(body)
    if tag == "$bytearray":
        return bytearray(base64.b64decode(body))
    if tag == "$dict":
        return {decode(k, resolve, tags): decode(v, resolve, tags) for k, v in body}
    if tag == "$iter":
        return iter([decode(item, resolve, tags) for item in body])
    if tag == "$float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "$complex" and isinstance(body, list) and len(body) == 2:
        return complex(*(float(decode(part)) for part in body))
    if tag == "$ref" and resolve is not None:
        return resolve(body)
    if tag in _LIBRARY_TAGS:
        return _LIBRARY_TAGS[tag](body, lambda item: decode(item, resolve, tags))
    raise NotPlainData(f"unknown tag {tag!r}")


def _decimal(body: Any, decode: Callable[[Any], Any]) -> Any:
    import decimal

    return decimal.Decimal(str(body))


def _fraction(body: Any, decode: Callable[[Any], Any]) -> Any:
    import fractions

    numerator, denominator = body
    return fractions.Fraction(int(numerator), int(denominator))


def _range(body: Any, decode: Callable[[Any], Any]) -> range:
    start, stop, step = (int(part) for part in body)
    return range(start, stop, step)


def _counter(body: Any, decode: Callable[[Any], Any]) -> Any:
    import collections

    return collections.Counter({decode(k): decode(v) for k, v in body})


def _defaultdict(body: Any, decode: Callable[[Any], Any]) -> Any:
    import collections

    named, pairs = body
    factory = _FACTORIES[named] if named is not None else None
    return collections.defaultdict(factory, {decode(k): decode(v) for k, v in pairs})


_LIBRARY_TAGS: dict[str, Callable[[Any, Callable[[Any], Any]], Any]] = {
    "$decimal": _decimal,
    "$fraction": _fraction,
    "$range": _range,
    "$counter": _counter,
    "$defaultdict": _defaultdict,
}


def container_paths(roots: list[Any]) -> dict[int, Path]:
    """id -> path of every mutable container reachable from the arguments."""
    paths: dict[int, Path] = {}

    def walk(value: Any, path: Path, depth: int) -> None:
        kind = type(value)
        if depth > MAX_DEPTH or kind not in (list, dict, set, bytearray) or id(value) in paths:
            return
        paths[id(value)] = path
        if kind is list:
            for index, item in enumerate(value):
                walk(item, [*path, index], depth + 1)
        elif kind is dict:
            for key, item in value.items():
                if type(key) in (str, int):
                    walk(item, [*path, ["k", key]], depth + 1)

    for index, root in enumerate(roots):
        walk(root, [index], 0)
    return paths


def follow(roots: list[Any], path: Path) -> Any:
    """The object at `path` (as produced by container_paths) under `roots`."""
    value = roots[path[0]]
    for step in path[1:]:
        value = value[step[1]] if isinstance(step, list) else value[step]
    return value


def mirror(target: Any, source: Any) -> Any:
    """Make `target` equal `source` in place, keeping nested containers' identity;
    returns the object the caller should hold (target when it could be updated)."""
    kind = type(target)
    if kind is not type(source):
        return source
    if kind is list:
        for index in range(min(len(target), len(source))):
            target[index] = mirror(target[index], source[index])
        del target[len(source) :]
        target.extend(source[len(target) :])
    elif kind is dict:
        for key in [k for k in target if k not in source]:
            del target[key]
        for key, value in source.items():
            target[key] = mirror(target[key], value) if key in target else value
    elif kind is set:
        target.clear()
        target.update(source)
    elif kind is bytearray:
        target[:] = source
    else:
        return source
    return target
