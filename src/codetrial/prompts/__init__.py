"""Prompt templates live in files beside this module; their hashes go in the manifest."""

from __future__ import annotations

import hashlib
from importlib import resources
from string import Template

from codetrial.records import Message
from codetrial.tasks import Task

TEMPLATES = ("system.md", "task.md", "repair.md")


def _template(name: str) -> str:
    return (resources.files("codetrial.prompts") / name).read_text(encoding="utf-8")


def template_hashes() -> dict[str, str]:
    return {name: hashlib.sha256(_template(name).encode()).hexdigest() for name in TEMPLATES}


def system_message(allowed: str, forbidden: str) -> Message:
    text = Template(_template("system.md")).substitute(allowed=allowed, forbidden=forbidden)
    return Message("system", text)


def first_messages(task: Task, system: Message) -> list[Message]:
    return [system, Message("user", Template(_template("task.md")).substitute(spec=task.spec))]


def repair_messages(task: Task, system: Message, code: str, feedback: str) -> list[Message]:
    """The original spec, the failed code and visible-test feedback only; no history."""
    text = Template(_template("repair.md")).substitute(
        spec=task.spec, code=code.rstrip(), feedback=feedback.rstrip()
    )
    return [system, Message("user", text)]
