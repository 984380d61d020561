"""Prompt templates live in files beside this module; their hashes go in the manifest."""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import resources
from string import Template

from codetrial.records import Message
from codetrial.tasks import Task

TEMPLATES = ("system.md", "task.md", "repair.md")
SELECTION_TEMPLATES = ("tests.md", "judge_system.md", "judge.md", "judge_shots.json")


@functools.cache
def read_template(name: str) -> str:
    """A template file's text, by its path below the prompts folder."""
    return (resources.files("codetrial.prompts") / name).read_text(encoding="utf-8")


def template_hashes(names: tuple[str, ...] = TEMPLATES) -> dict[str, str]:
    return {name: hashlib.sha256(read_template(name).encode()).hexdigest() for name in names}


def system_message(allowed: str, forbidden: str) -> Message:
    text = Template(read_template("system.md")).substitute(allowed=allowed, forbidden=forbidden)
    return Message("system", text)


def first_messages(task: Task, system: Message) -> list[Message]:
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


def judge_messages(task: Task, code: str, shots: int = 0) -> list[Message]:
    """Ask whether `code` solves the task; `shots` worked examples first, as earlier
    turns of the conversation."""
    template = Template(read_template("judge.md"))
    messages = [Message("system", read_template("judge_system.md").strip())]
    for shot in json.loads(read_template("judge_shots.json"))[:shots]:
        question = template.substitute(spec=shot["spec"], code=shot["code"].rstrip())
        messages += [Message("user", question), Message("assistant", shot["answer"])]
    return [*messages, Message("user", template.substitute(spec=task.spec, code=code.rstrip()))]
