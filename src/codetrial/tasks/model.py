"""The task model. A task owns its spec, its signature and its tests."""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from typing import ClassVar

from codetrial.records import Visibility
from codetrial.syntax import parse

HEAVY_INPUT = "heavy_input.txt"
PACKAGES = "packages.txt"


@dataclass(frozen=True)
class TestFile:
    """One pytest file; it imports the candidate with `from candidate import <entry point>`."""

    __test__: ClassVar[bool] = False

    name: str
    source: str
    visibility: Visibility


def tests_digest(digest: hashlib._Hash, tests: tuple[TestFile, ...]) -> str:
    """`digest` with every test's visibility, name and source added, as hex."""
    for test in tests:
        digest.update(f"\0{test.visibility}:{test.name}\0{test.source}".encode())
    return digest.hexdigest()


def _definition(text: str) -> ast.FunctionDef:
    """The one function a `def` line (a body is optional) defines; a ValueError when
    there is not exactly one."""
    try:
        tree = parse(text)
    except SyntaxError:
        tree = parse(text + "\n    ...")
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(functions) != 1:
        raise ValueError("expected exactly one function definition")
    return functions[0]


@dataclass(frozen=True)
class Signature:
    """The function a candidate must define: its name and how many positional parameters."""

    source: str
    entry_point: str
    n_params: int

    @classmethod
    def parse(cls, source: str) -> Signature:
        """Parse a `def` line (a body is optional). Raises ValueError when there is none."""
        text = source.rstrip()
        fn = _definition(text)
        return cls(
            source=text,
            entry_point=fn.name,
            n_params=len(fn.args.posonlyargs) + len(fn.args.args),
        )

    def definition(self) -> ast.FunctionDef:
        """The signature's `def` as an AST node (its annotations, its defaults)."""
        return _definition(self.source)


@dataclass(frozen=True)
class Task:
    """One task. `harness` names how its tests run on the trusted side: "pytest"
    (test files importing `candidate`) or "check" (a benchmark's check(candidate)
    function or top-level asserts). `prelude` is trusted code placed before the
    candidate's (a benchmark prompt's imports and helpers); `context` is trusted code
    run before the tests (the helpers a benchmark's test calls). `prompt` is a
    benchmark's code prompt, which completion-style samples continue. `policy` is the
    gate profile the task was written for. `heavy_input` is a Python literal of an
    argument tuple that exercises the function's performance (see `codetrial
    harden`), on which efficiency is measured against the reference (an input that
    is not one is reported there, not refused here: a task's verdicts do not rest on it).
    `packages` are the requirements of the libraries the candidate may import (see
    `codetrial.environments`); the candidate still returns plain data, which the
    tests check on the trusted side."""

    id: str
    suite: str
    title: str
    spec: str
    signature: Signature
    tests: tuple[TestFile, ...]
    reference: str | None = None
    harness: str = "pytest"
    prelude: str = ""
    context: str = ""
    prompt: str = ""
    policy: str = "builtins-only"
    heavy_input: str = ""
    packages: tuple[str, ...] = ()
    trust: ClassVar[str] = "trusted-side"
    kind: ClassVar[str] = "function"

    @property
    def digest(self) -> str:
        """Changes whenever the spec, the libraries or any test changes."""
        digest = hashlib.sha256(self.spec.encode())
        if self.packages:
            digest.update(json.dumps(self.packages).encode())
        return tests_digest(digest, self.tests)

    @property
    def entry_point(self) -> str:
        return self.signature.entry_point

    def program(self, code: str) -> str:
        """What runs in the sandbox: the task's prelude, then the candidate's code."""
        return f"{self.prelude}\n\n{code}" if self.prelude else code

    def tests_of(self, visibility: Visibility) -> tuple[TestFile, ...]:
        return tuple(t for t in self.tests if t.visibility is visibility)
