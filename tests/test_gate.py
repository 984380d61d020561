"""Each gate rule fires on what it names, and only there; profiles change the policy."""

from __future__ import annotations

import ast

import pytest

from codetrial.errors import ConfigError
from codetrial.gate import PROFILES, RULES, check, get_profile
from codetrial.tasks import Signature

SIGNATURE = Signature.parse("def solve(xs: list[int], k: int) -> int:")
CLEAN = 'def solve(xs, k):\n    """Sum the first k."""\n    return sum(xs[:k])\n'

VIOLATIONS = {
    "G001": "import os\ndef solve(xs, k):\n    return 0\n",
    "G002": "def solve(xs, k):\n    class A:\n        pass\n    return 0\n",
    "G003": "def solve(xs, k):\n    global total\n    return 0\n",
    "G004": "def helper():\n    return 0\ndef solve(xs, k):\n    return helper()\n",
    "G005": "print('hi')\ndef solve(xs, k):\n    return 0\n",
    "G006": "def solve(xs, k):\n    return eval('1')\n",
    "G007": "def solve(xs, k):\n    return xs.__class__\n",
    "G008": "def other(xs, k):\n    return 0\n",
    "G009": "def solve(xs):\n    return 0\n",
}

BYPASSES = [
    "def solve(xs, k):\n    f = getattr\n    return f(xs, 'append')\n",
    "def solve(xs, k):\n    return ().__class__.__bases__[0].__subclasses__()\n",
    "def solve(xs, k):\n    return __builtins__\n",
    "def solve(xs, k):\n    return __import__('os').getpid()\n",
    "def solve(xs, k):\n    from operator import attrgetter\n    return attrgetter('x')(xs)\n",
    "def solve(xs, k):\n    return exec\n",
    "def solve(xs, k):\n    return open('/etc/passwd').read()\n",
]


def _check(code: str, profile: str = "builtins-only"):  # type: ignore[no-untyped-def]
    return check(ast.parse(code), SIGNATURE, get_profile(profile))


def test_clean_code_is_allowed() -> None:
    assert _check(CLEAN).allowed


def test_every_rule_has_a_sample() -> None:
    assert sorted(VIOLATIONS) == sorted(RULES.names())


@pytest.mark.parametrize("rule_id", sorted(VIOLATIONS))
def test_rule_fires(rule_id: str) -> None:
    verdict = _check(VIOLATIONS[rule_id])
    assert not verdict.allowed
    assert verdict.rule_id == rule_id
    assert verdict.message


@pytest.mark.parametrize("code", BYPASSES)
def test_known_bypasses_are_rejected(code: str) -> None:
    assert not _check(code).allowed


def test_seed_message_for_import_from() -> None:
    code = "from collections import deque\ndef solve(xs, k):\n    return 0\n"
    verdict = _check(code)
    assert (verdict.rule_id, verdict.message) == (
        "G001",
        "Blocked AST node: ImportFrom (collections)",
    )


def test_default_arguments_beyond_the_signature_are_fine() -> None:
    assert _check("def solve(xs, k, cache=None):\n    return 0\n").allowed
    assert _check("def solve(*args):\n    return 0\n").allowed


def test_stdlib_profile_allows_harmless_modules_and_helpers() -> None:
    code = (
        "from collections import deque\nimport heapq\n\n"
        "def helper(x):\n    return x\n\n"
        "def solve(xs, k):\n    return helper(heapq.nlargest(k, deque(xs)))\n"
    )
    assert _check(code, "stdlib").allowed
    assert _check(code).rule_id == "G001"
    assert _check("import os\ndef solve(xs, k):\n    return 0\n", "stdlib").rule_id == "G001"
    assert _check("import operator\ndef solve(xs, k):\n    return 0\n", "stdlib").rule_id == "G001"


def test_off_profile_checks_nothing() -> None:
    assert _check("import os\nprint(os.getcwd())\n", "off").allowed


def test_profiles_describe_their_policy() -> None:
    for _, profile in PROFILES.items():
        assert profile.allowed and profile.forbidden


def test_unknown_profile_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match="builtins-only"):
        get_profile("strict")
