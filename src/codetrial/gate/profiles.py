"""Named gate profiles: which rules run, which modules and helpers are allowed.

Each profile also says, in words, what the execution environment allows; that text
goes into the system prompt so the model is told the policy it will be held to.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from codetrial.registry import Registry

HARMLESS_MODULES = frozenset(
    {
        "math",
        "cmath",
        "itertools",
        "functools",
        "collections",
        "heapq",
        "bisect",
        "re",
        "string",
        "statistics",
        "fractions",
        "decimal",
        "typing",
        "dataclasses",
        "enum",
    }
)


# The standard library a program, or a task that imports libraries, may import: all
# of it but what starts processes, opens connections, loads native code or imports
# by name at run time.
STANDARD_MODULES = frozenset(sys.stdlib_module_names) - {
    "subprocess",
    "socket",
    "ssl",
    "socketserver",
    "multiprocessing",
    "concurrent",
    "asyncio",
    "ctypes",
    "pty",
    "pdb",
    "signal",
    "importlib",
    "runpy",
    "code",
    "codeop",
    "urllib",
    "http",
    "ftplib",
    "smtplib",
    "poplib",
    "imaplib",
    "telnetlib",
    "xmlrpc",
    "webbrowser",
    "_socket",
    "_ssl",
    "_ctypes",
    "_posixsubprocess",
    "_multiprocessing",
    "antigravity",
}


@dataclass(frozen=True)
class Profile:
    """`allowed_calls`: built-ins of the forbidden set that this profile lets through."""

    name: str
    rules: tuple[str, ...]
    allowed_modules: frozenset[str]
    allow_helpers: bool
    allowed: str
    forbidden: str
    allowed_calls: frozenset[str] = frozenset()

    def allowing(self, libraries: Iterable[str]) -> Profile:
        """This profile, with imports of the `libraries` (top-level modules of a
        task's package environment) and of the standard library allowed too."""
        added = sorted(set(libraries) - self.allowed_modules)
        if not added:
            return self
        return dataclasses.replace(
            self,
            allowed_modules=self.allowed_modules | STANDARD_MODULES | set(added),
            allowed=f"{self.allowed} Also imports of the standard library and of these "
            f"installed libraries: {', '.join(added)}.",
        )


_ALL_RULES = ("G001", "G002", "G003", "G004", "G005", "G006", "G007", "G008", "G009")

PROFILES: Registry[Profile] = Registry("gate profile")
for _profile in (
    Profile(
        name="builtins-only",
        rules=_ALL_RULES,
        allowed_modules=frozenset(),
        allow_helpers=False,
        allowed="only the requested function, using Python built-ins.",
        forbidden=(
            "imports, classes, other functions, I/O (files, print-based output, input), "
            "network, subprocess, dynamic execution (eval, exec, compile), reflection "
            "(getattr, setattr, globals, dunder attributes), global state and top-level "
            "statements."
        ),
    ),
    Profile(
        name="stdlib",
        rules=tuple(r for r in _ALL_RULES if r not in ("G002", "G004")),
        allowed_modules=HARMLESS_MODULES,
        allow_helpers=True,
        allowed=(
            "the requested function, helper functions and classes, Python built-ins and "
            f"imports of these standard modules: {', '.join(sorted(HARMLESS_MODULES))}."
        ),
        forbidden=(
            "other imports, I/O, network, subprocess, dynamic execution, reflection "
            "(getattr, setattr, globals, dunder attributes), global state and top-level "
            "statements other than imports."
        ),
    ),
    Profile(
        name="program",
        rules=("G001", "G006"),
        allowed_modules=STANDARD_MODULES,
        allow_helpers=True,
        allowed=(
            "a whole program: reading the input files, printing, writing files in the "
            "current folder, and imports of the standard library."
        ),
        forbidden=(
            "processes, network, native code and dynamic execution (eval, exec, compile, "
            "__import__, getattr, setattr, globals)."
        ),
        allowed_calls=frozenset({"open"}),
    ),
    Profile(
        name="contest",
        rules=("G001", "G006"),
        allowed_modules=STANDARD_MODULES,
        allow_helpers=True,
        allowed=(
            "a whole program: reading standard input (input, sys.stdin, open(0)), "
            "printing, and imports of the standard library."
        ),
        forbidden=(
            "processes, network, native code and dynamic execution (eval, exec, compile, "
            "__import__, getattr, setattr, globals)."
        ),
        allowed_calls=frozenset({"open", "input"}),
    ),
    Profile(
        name="off",
        rules=(),
        allowed_modules=frozenset(),
        allow_helpers=True,
        allowed="any Python code that defines the requested function.",
        forbidden="nothing is checked statically.",
    ),
):
    PROFILES.register(_profile.name, _profile)


def get_profile(name: str) -> Profile:
    return PROFILES.get(name)
