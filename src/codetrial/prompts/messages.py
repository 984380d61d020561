"""Prompt templates live in files beside this module; their hashes go in the manifest."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template

from codetrial.errors import ConfigError
from codetrial.records import Message
from codetrial.tasks import Task, WorkspaceTask

# Where a prompt may be cut into parts read one after another (see `judge_messages`).
PART = "\u0000a-part-ends-here\u0000"
TEMPLATES = ("system.md", "task.md", "repair.md")
WORKSPACE_TEMPLATES = (
    "workspace_system.md",
    "workspace_files.md",
    "workspace_files_reply.md",
    "workspace_task.md",
    "workspace_repair.md",
)
INTERPRET_TEMPLATES = (
    "interpret_system.md",
    "interpret_task.md",
    "interpret_fix.md",
    "interpret_answer.md",
    "interpret_direct.md",
)
PROGRAM_TEMPLATES = ("program_system.md", "program_task.md", "program_repair.md")
PREDICTION_TEMPLATES = (
    "prediction_system.md",
    "prediction_output.md",
    "prediction_execution.md",
    "prediction_call.md",
    "prediction_reply.md",
    "prediction_call_reply.md",
)
SELECTION_TEMPLATES = ("tests.md", "judge_system.md", "judge.md", "judge_shots.json")


@dataclass(frozen=True)
class PromptProfile:
    """How a benchmark task (one with a code prompt) is first asked, and what of the
    reply's code is judged: all of it, or with `definitions_only` what EvalPlus's
    sanitizer keeps (the imports and the definitions the entry point needs)."""

    templates: tuple[str, str]
    definitions_only: bool


PROMPT_PROFILES = {
    "codetrial": PromptProfile(("system.md", "task.md"), definitions_only=False),
    "evalplus-instruct": PromptProfile(
        ("evalplus_instruct.md", "evalplus_instruct_reply.md"), definitions_only=True
    ),
}
BENCHMARK_PROFILE = "evalplus-instruct"  # the default for benchmark suites


def prompt_profile_for(benchmark: bool, suite: str, name: str | None) -> str | None:
    """The prompt profile a suite's tasks are asked in and their candidates judged by:
    `name`, or BENCHMARK_PROFILE, when they are a `benchmark`'s (a code prompt to
    complete); None for a suite of other tasks, which takes none."""
    if name is not None and not benchmark:
        raise ConfigError(
            f"--prompt-profile is for benchmark tasks (a code prompt to complete); suite "
            f"{suite!r} has none"
        )
    if name is not None and name not in PROMPT_PROFILES:
        raise ConfigError(f"unknown prompt profile {name!r}; known: {', '.join(PROMPT_PROFILES)}")
    return (name or BENCHMARK_PROFILE) if benchmark else None


def judged_by_definitions(profile: str | None) -> bool:
    """Whether a candidate asked in `profile` is judged by its definitions alone."""
    return profile is not None and PROMPT_PROFILES[profile].definitions_only


@functools.cache
def read_template(name: str) -> str:
    """A template file's text, by its path below the prompts folder."""
    return (resources.files("codetrial.prompts") / name).read_text(encoding="utf-8")


def template_hashes(names: tuple[str, ...] = TEMPLATES) -> dict[str, str]:
    return {name: hashlib.sha256(read_template(name).encode()).hexdigest() for name in names}


def system_message(allowed: str, forbidden: str) -> Message:
    text = Template(read_template("system.md")).substitute(allowed=allowed, forbidden=forbidden)
    return Message("system", text)


def first_messages(
    task: Task, system: Message, profile: str = "codetrial", continues: bool = False
) -> list[Message]:
    """A first try's messages. Under `evalplus-instruct` a benchmark task is asked as
    EvalPlus asks a chat model: no system message, the code prompt in a fence, and the
    start of the reply (an opened `python` fence) for a backend that `continues` a
    reply; EvalPlus's API providers, which cannot, send the request alone."""
    if profile == "evalplus-instruct" and task.prompt:
        request = Template(read_template("evalplus_instruct.md")).substitute(
            prompt=task.prompt.strip()
        )
        reply = [Message("assistant", read_template("evalplus_instruct_reply.md"))]
        return [Message("user", request), *(reply if continues else [])]
    return [system, Message("user", Template(read_template("task.md")).substitute(spec=task.spec))]


def repair_messages(task: Task, system: Message, code: str, feedback: str) -> list[Message]:
    """The original spec, the failed code and visible-test feedback only; no history."""
    text = Template(read_template("repair.md")).substitute(
        spec=task.spec, code=code.rstrip(), feedback=feedback.rstrip()
    )
    return [system, Message("user", text)]


def test_messages(task: Task, count: int) -> list[Message]:
    """Ask for `count` assert statements on the task's entry point."""
    text = Template(read_template("tests.md")).substitute(
        spec=task.spec, count=count, entry_point=task.entry_point
    )
    return [Message("user", text)]


def judge_messages(task: Task, code: str, shots: int = 0, parts: bool = False) -> list[Message]:
    """Ask whether `code` solves the task; `shots` worked examples first, as earlier
    turns of the conversation. With `parts`, `PART` marks where the judge prompts of
    every task stop being alike (after the examples) and where those of one task do
    (before the code), for a reader that keeps what two prompts share."""
    mark = PART if parts else ""
    template = Template(read_template("judge.md"))
    messages = [Message("system", read_template("judge_system.md").strip())]
    for shot in json.loads(read_template("judge_shots.json"))[:shots]:
        question = template.substitute(spec=shot["spec"], code=shot["code"].rstrip())
        messages += [Message("user", question), Message("assistant", shot["answer"])]
    question = template.substitute(spec=task.spec, code=mark + code.rstrip())
    return [*messages, Message("user", mark + question)]


def workspace_system(edit_format: str) -> Message:
    """The system message of a workspace task: the role, then `edit_format`, the edit
    format's instructions for how to answer in it."""
    text = Template(read_template("workspace_system.md")).substitute(
        edit_format=edit_format.strip()
    )
    return Message("system", text)


def fence_for(text: str) -> str:
    """A Markdown fence that no run of backticks in `text` can close: three backticks,
    or one more than its longest run."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(text: str, language: str = "") -> str:
    """`text` in a fenced block (its info string `language`) that nothing in it can
    close."""
    fence = fence_for(text)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _fenced(path: str, text: str) -> str:
    """A file as the `whole` format writes one: its path, then a fence longer than any
    run of backticks inside it."""
    fence = fence_for(text)
    language = "python" if path.endswith(".py") else ""
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{path}\n{fence}{language}\n{body}{fence}"


def _files_messages(files: Mapping[str, str]) -> list[Message]:
    """The files as they are now, and the model's acknowledgement, as aider's chat
    holds them: a conversation whose turns alternate, as every chat template accepts."""
    shown = "\n\n".join(_fenced(path, text) for path, text in files.items())
    return [
        Message("user", Template(read_template("workspace_files.md")).substitute(files=shown)),
        Message("assistant", read_template("workspace_files_reply.md").strip()),
    ]


def workspace_messages(task: WorkspaceTask, system: Message) -> list[Message]:
    """The first try, as aider's benchmark asks it: the files as they are, then the
    instructions and the names of the files to modify."""
    text = Template(read_template("workspace_task.md")).substitute(
        instructions=task.instructions.rstrip(), file_list=" ".join(task.editable)
    )
    return [system, *_files_messages(dict(task.files)), Message("user", text)]


def workspace_repair_messages(
    task: WorkspaceTask,
    previous: Sequence[Message],
    response: str,
    files: Mapping[str, str],
    output: str,
) -> list[Message]:
    """The next try continues the conversation, as aider's benchmark does: the earlier
    requests and answers, the files as the last answer left them, then the test output
    and the request to fix the code. `previous` is the last try's messages, which end
    with that try's files, their acknowledgement and its request."""
    system, *history, _files, _reply, request = previous
    text = Template(read_template("workspace_repair.md")).substitute(
        output=output.rstrip(), file_list=" ".join(task.editable)
    )
    return [
        system,
        *history,
        request,
        Message("assistant", response),
        *_files_messages(files),
        Message("user", text),
    ]
