"""LiveCodeBench's rules for a program task: the program run as its evaluator runs
one, for a verdict that is the evaluator's own.

LiveCodeBench's evaluator (`livecodebench/evaluation/testing_util.py`) does not run a
program as a contest judge does. It takes the program's text apart: when its last
statement is an `if __name__ == '__main__':`, that statement's body replaces it;
its top-level imports go to a module, after a prefix of imports of its own
(`PREFIX`: every name of sixteen standard modules, the builtins and `typing`, and
a recursion limit of 50000); every other statement becomes the body of one function,
called once per case with the case's input in `sys.stdin` (see `livecodebench_run`,
which runs in the sandbox). So the program's names are a function's locals (`global`
reaches the module, not them), its `__name__` is `tmp_sol`, the prefix's names are
there unimported (`Counter`, `gcd`, `stdin`), and its imports run before any input
is given (`from sys import stdin` binds the `sys.stdin` of before the call).

`program` makes that module and the program the sandbox runs with it; the output is
then compared on the trusted side with `codetrial.verdict.outputs`' `livecodebench`
comparison, and a program that exits other than 0 (an exception, not `SystemExit`)
fails.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

MODULES = (
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "io",
    "sys",
    "json",
)
PREFIX = (
    "".join(f"from {name} import *\n" for name in (*MODULES, "builtins", "typing"))
    + "".join(f"import {name}\n" for name in MODULES)
    + "sys.setrecursionlimit(50000)\n"
)
MAIN_GUARD = "__name__ == '__main__'"
# What a program's process imports under these rules: the prefix's modules and the
# runner's (see `livecodebench_run`), which a sandbox's server may load once for all.
PRELOAD = (*MODULES, "typing", "contextlib", "linecache", "shutil", "subprocess", "traceback")


@functools.cache
def _runner() -> str:
    return Path(__file__).with_name("livecodebench_run.py").read_text(encoding="utf-8")


def module_of(code: str) -> str | None:
    """The module LiveCodeBench's evaluator makes of `code` and runs: its prefix, the
    program's top-level imports, then its other statements as `wrapped_function`'s
    body. None when the evaluator could not make it (a program it cannot parse or
    write back), which it then judges a runtime error."""
    try:
        body = ast.parse(code).body
        last = body[-1] if body else None
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == MAIN_GUARD:
            body = [*body[:-1], *last.body]
        imports = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
        function = ast.FunctionDef(
            name="wrapped_function",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[s for s in body if not isinstance(s, ast.Import | ast.ImportFrom)],
            decorator_list=[],
            lineno=1,
        )
        hoisted = "\n".join(ast.unparse(s) for s in imports)
        return f"{PREFIX}\n{hoisted}\n{ast.unparse(function)}"
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def program(code: str) -> str | None:
    """The program the sandbox runs for one case of `code` under LiveCodeBench's rules:
    the runner, which reads the case's input and runs `module_of(code)` with it; None
    when there is no module to run."""
    module = module_of(code)
    if module is None:
        return None
    return f"{_runner()}\nrun({module!r})\n"
