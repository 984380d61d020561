"""The run manifest: every condition a result depends on, written before any work."""

from __future__ import annotations

import hashlib
import platform
import sys
from datetime import UTC, datetime

from pydantic import BaseModel

from codetrial import __version__
from codetrial.config import RunConfig
from codetrial.tasks import Task


class Manifest(BaseModel):
    run_id: str
    created_at: str
    codetrial_version: str
    python: str
    host: str
    config: RunConfig
    backends: dict[str, dict[str, str]]
    prompt_sha256: dict[str, str]
    system_prompt: str
    gate_profile: str
    isolation: str
    suite: str
    task_sha256: dict[str, str]
    resumed_at: list[str] = []


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def task_digest(task: Task) -> str:
    """Changes whenever the spec, the signature or any test of the task changes."""
    digest = hashlib.sha256(task.spec.encode())
    for test in task.tests:
        digest.update(f"\0{test.visibility}:{test.name}\0{test.source}".encode())
    return digest.hexdigest()


def host_conditions() -> tuple[str, str]:
    python = f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})"
    host = f"{platform.node()} {platform.system()} {platform.release()} {platform.machine()}"
    return python, host


def new_manifest(
    run_id: str,
    config: RunConfig,
    tasks: list[Task],
    backends: dict[str, dict[str, str]],
    prompts: dict[str, str],
    system_prompt: str,
    isolation: str,
) -> Manifest:
    python, host = host_conditions()
    return Manifest(
        run_id=run_id,
        created_at=now(),
        codetrial_version=__version__,
        python=python,
        host=host,
        config=config,
        backends=backends,
        prompt_sha256=prompts,
        system_prompt=system_prompt,
        gate_profile=config.gate_profile,
        isolation=isolation,
        suite=tasks[0].suite if tasks else config.suite,
        task_sha256={t.id: task_digest(t) for t in tasks},
    )
