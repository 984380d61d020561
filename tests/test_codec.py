"""Plain data across the boundary: tagged types survive, forged types do not."""

from __future__ import annotations

import json
import math

import pytest

from codetrial.sandbox import codec


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -(2**100),
        1.5,
        "ü",
        [],
        [1, [2, [3]]],
        (1, (2,)),
        {1, 2},
        frozenset({"a"}),
        b"\x00\xff",
        bytearray(b"ab"),
        {(1, 2): [3], "k": {"n": None}},
        float("inf"),
        float("-inf"),
    ],
)
def test_round_trip(value: object) -> None:
    decoded = codec.decode(codec.encode(value))
    assert decoded == value and type(decoded) is type(value)


def test_nan_survives() -> None:
    assert math.isnan(codec.decode(codec.encode(float("nan"))))


def test_subclasses_and_objects_are_not_plain() -> None:
    class Sneaky(list):  # type: ignore[type-arg]
        def __eq__(self, other: object) -> bool:
            return True

    for value in (Sneaky(), object(), print):
        with pytest.raises(codec.NotPlainData):
            codec.encode(value)


def test_complex_numbers_cross_with_their_special_parts() -> None:
    for value in (1j, complex(-2.5, 0.0), complex(float("inf"), float("nan"))):
        back = codec.decode(json.loads(json.dumps(codec.encode(value), allow_nan=False)))
        assert type(back) is complex
        assert repr(back) == repr(value)


def test_with_other_a_builtins_subclass_crosses_as_the_builtin_read_by_its_own_methods() -> None:
    class Sneaky(list):  # type: ignore[type-arg]
        def __iter__(self):  # type: ignore[no-untyped-def]
            return iter([0])

        def __eq__(self, other: object) -> bool:
            return True

    class Loud(str):
        def __str__(self) -> str:
            return "forged"

    other = []
    encoded = codec.encode([Sneaky([1, 2]), Loud("x"), object()], other=other.append)
    assert codec.decode(encoded[:2]) == [[1, 2], "x"]
    assert type(codec.decode(encoded[0])) is list
    assert len(other) == 1 and type(other[0]) is object


def test_cycles_and_depth_are_refused() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(codec.NotPlainData):
        codec.encode(cycle)


def test_mirror_keeps_identity_of_nested_containers() -> None:
    inner = [1, 3]
    outer = [inner, [2, 6]]
    codec.mirror(outer, [[1, 6], [8, 10], [11, 12]])
    assert outer == [[1, 6], [8, 10], [11, 12]] and outer[0] is inner
    table = {"a": [1], "b": 2}
    codec.mirror(table, {"a": [1, 2]})
    assert table == {"a": [1, 2]}


def test_refs_point_back_into_the_arguments() -> None:
    rows = [[1, 2], [3, 4]]
    encoded = codec.encode([rows[1], [5]], codec.container_paths([rows]))
    decoded = codec.decode(encoded, lambda path: codec.follow([rows], path))
    assert decoded[0] is rows[1] and decoded[1] == [5]


def test_unknown_tags_are_refused() -> None:
    with pytest.raises(codec.NotPlainData):
        codec.decode({"$pickle": "..."})


def test_iterators_cross_as_iterators() -> None:
    decoded = codec.decode(codec.encode(map(str, range(3))))
    assert decoded != ["0", "1", "2"]
    assert list(decoded) == ["0", "1", "2"]
    with pytest.raises(codec.NotPlainData):
        codec.encode(iter(range(codec.MAX_ITEMS + 1)))


def test_with_other_the_standard_library_s_data_crosses_as_itself() -> None:
    import collections
    import decimal
    import fractions

    values = [
        range(2, 11, 3),
        decimal.Decimal("6800.00"),
        fractions.Fraction(3, 4),
        collections.Counter("abca"),
        collections.defaultdict(set, {"a": {1}}),
        collections.defaultdict(lambda: 0, {"b": 2}),  # a factory that is code: none kept
    ]
    other: list[object] = []
    back = codec.decode(json.loads(json.dumps(codec.encode(values, other=other.append))))
    assert other == []
    assert back[:5] == values[:5] and [type(v) for v in back] == [type(v) for v in values]
    assert back[4]["missing"] == set() and back[5].default_factory is None
    assert back[1] == 6800 and back[2] == 0.75
