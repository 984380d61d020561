"""A program run for one case as LiveCodeBench's evaluator runs it, in the sandbox.

Standard library only: this file's text, followed by a call of `run` with the
program's module as that evaluator makes it (see `codetrial.verdict.livecodebench`),
is the program the sandbox runs. The evaluator runs a program inside its own process:
it binds a prefix of imports and the program's own imports in a module, calls the
program's other statements as one function, hands it the case's input as a
`StringIO` in `sys.stdin` and takes as its output what reached `sys.stdout`, a
`StringIO` too. This does the same in the program's process: what the program sees is
what it would see there. Its standard input is empty (descriptor 0 is /dev/null, and
so is the `sys.stdin` it finds as its imports run), and descriptor 1 too: what reaches
`sys.stdout` is written on the descriptor that was 1 once the function has returned.

How the call ended is the exit: 0 when it returned or raised `SystemExit`, whatever
the exit's code, and 1 when it raised anything else (the evaluator's runtime error),
or when the module could not be made: an import that fails, or a module whose text
holds `class Solution` (the evaluator then makes the module's `Solution`, and a
program's own class is inside the function, not in the module). The program can undo
all of this, for it runs in the same process: so it only shapes what an honest
program sees. Nothing it does here is trusted: the trusted side judges the exit and
the output as it would any program's, and a program that subverts this gains what
it could print and exit with anyway.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import linecache
import os
import shutil
import subprocess
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any

MODULE = "tmp_sol"  # the name the evaluator gives the program's module
SOURCE = "<livecodebench>"  # the module's file name in a traceback
FUNCTION = "wrapped_function"
LEETCODE = "class Solution"  # in the module's text: the evaluator takes it for LeetCode's
# What the evaluator's process has done before it runs a program: its reliability
# guard's functions set to None, modules that cannot be imported, and the longest
# integer text it reads or writes (set as its metrics module is imported).
DISABLED = {
    os: (
        "kill",
        "system",
        "putenv",
        "remove",
        "removedirs",
        "rmdir",
        "fchdir",
        "setuid",
        "fork",
        "forkpty",
        "killpg",
        "rename",
        "renames",
        "truncate",
        "replace",
        "unlink",
        "fchmod",
        "fchown",
        "chmod",
        "chown",
        "chroot",
        "lchflags",
        "lchmod",
        "lchown",
        "getcwd",
        "chdir",
    ),
    shutil: ("rmtree", "move", "chown"),
    subprocess: ("Popen",),
    builtins: ("quit", "help"),
}
UNIMPORTABLE = ("ipdb", "joblib", "resource", "psutil", "tkinter")
INT_DIGITS = 50_000


def _read_input() -> str:
    chunks = []
    while chunk := os.read(0, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8")


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _guarded() -> None:
    """The process as the evaluator's is when it runs a program (see DISABLED)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    for owner, names in DISABLED.items():
        for name in names:
            setattr(owner, name, None)
    for module in UNIMPORTABLE:
        sys.modules[module] = None  # type: ignore[assignment]
    sys.set_int_max_str_digits(INT_DIGITS)


def _mock_open(data: str) -> Callable[..., Any]:
    """`builtins.open` as the evaluator replaces it: `unittest.mock.mock_open` reading
    `data`, made on the first call (the program's own `open` is the real one, bound by
    the prefix's `from builtins import *`, so few programs ever call this)."""
    made: list[Any] = []

    def opened(*args: Any, **kwargs: Any) -> Any:
        if not made:
            from unittest import mock

            made.append(mock.mock_open(read_data=data))
        return made[0](*args, **kwargs)

    return opened


def _unclosable(_: object) -> int:
    """The evaluator's `sys.stdout.close`: a function of one argument, which a
    program's `sys.stdout.close()` calls with none."""
    return 1


def _raised(exc: BaseException) -> None:
    """The exception on standard error, from the program's frames on."""
    where = exc.__traceback__.tb_next if exc.__traceback__ else None
    sys.stderr.write("".join(traceback.format_exception(type(exc), exc, where)))


def run(source: str) -> None:
    """Run `source`, the program's module, on the case's input; never returns."""
    given = _read_input()
    null = os.open(os.devnull, os.O_RDWR)
    answer = os.dup(1)
    os.dup2(null, 0)
    os.dup2(null, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 (the program's to close)
    _guarded()
    linecache.cache[SOURCE] = (len(source), None, source.splitlines(True), SOURCE)
    module = types.ModuleType(MODULE, "")
    captured = io.StringIO()
    status = 0
    try:
        exec(compile(source, SOURCE, "exec"), module.__dict__)
        if LEETCODE in source:  # taken for a LeetCode solution: its class is made
            module.Solution()
        function = module.__dict__[FUNCTION]
        lines = iter(given.split("\n"))
        first = sys.stdin
        first.read = lambda *args: given  # type: ignore[method-assign]
        first.readline = lambda *args: next(lines)  # type: ignore[method-assign]
        first.readlines = lambda *args: given.split("\n")  # type: ignore[method-assign]
        sys.stdin = io.StringIO(given)
        builtins.open = _mock_open(given)
        captured.close = _unclosable  # type: ignore[method-assign, assignment]
        sys.stdout = captured
        with contextlib.suppress(SystemExit):
            function()
    except BaseException as exc:  # the evaluator's runtime error, or its own crash
        status = 1
        _raised(exc)
    try:
        _write(answer, captured.getvalue().encode("utf-8", "surrogatepass"))
    finally:
        sys.stderr.flush()
        os._exit(status)
