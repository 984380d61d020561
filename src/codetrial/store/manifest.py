"""The run manifest: every condition a result depends on, written before any work.

It carries the store schema: the layout of the manifest, the database and the records
in it. This codetrial reads runs of SCHEMA_VERSION and of the schemas in READABLE
(see `codetrial.store` for what changed); a run written before stores carried a
number counts as schema 1, the layout codetrial wrote then, and an older layout than
that is found out by the database's columns or its records' validation.
"""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from codetrial.config import RunConfig, problem
from codetrial.environments import Environment
from codetrial.errors import StoreError
from codetrial.kinds import kind_of
from codetrial.tasks import AnyTask
from codetrial.version import __version__

SCHEMA_VERSION = 3
READABLE = (1, 2, SCHEMA_VERSION)
_NOT_A_MANIFEST = (
    "it was not written by codetrial or has been damaged; pass the folder that "
    "`codetrial run` printed, or re-run the trial"
)


class Manifest(BaseModel):
    schema_version: int = 1  # absent from runs written before stores carried a number
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
    bwrap: dict[str, str] = {}  # path, source, version, sha256 of the sandbox's binary
    toolchains: dict[str, dict[str, Any]] = {}  # language -> version, sha256 of its binaries
    suite: str
    task_sha256: dict[str, str]
    trust: dict[str, str] = {}  # task id -> where its verdict is decided
    released: dict[str, str] = {}  # task id -> its release date, for problems that carry one
    time_limits: dict[str, dict[str, Any]] = {}  # program task id -> its cases' CPU limits
    workspaces: dict[str, dict[str, str]] = {}  # workspace task id -> its files at the start
    repositories: dict[str, dict[str, str]] = {}  # repository task id -> repo, commit, environment
    environments: dict[str, dict[str, Any]] = {}  # environment key -> packages asked, installed
    resumed_at: list[str] = []


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def host_conditions() -> tuple[str, str]:
    python = f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})"
    host = f"{platform.node()} {platform.system()} {platform.release()} {platform.machine()}"
    return python, host


def new_manifest(
    run_id: str,
    config: RunConfig,
    tasks: Sequence[AnyTask],
    *,
    backends: dict[str, dict[str, str]],
    prompts: dict[str, str],
    system_prompt: str,
    isolation: str,
    bwrap: dict[str, str] | None = None,
    toolchains: dict[str, dict[str, Any]] | None = None,
) -> Manifest:
    python, host = host_conditions()
    return Manifest(
        schema_version=SCHEMA_VERSION,
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
        bwrap=bwrap or {},
        toolchains=toolchains or {},
        suite=tasks[0].suite if tasks else config.suite,
        task_sha256={t.id: t.digest for t in tasks},
        trust={t.id: t.trust for t in tasks},
        **_recorded(tasks),
    )


def _recorded(tasks: Sequence[AnyTask]) -> dict[str, dict[str, Any]]:
    """What the tasks' kinds keep of them in the manifest, by manifest field."""
    fields: dict[str, dict[str, Any]] = {
        "workspaces": {},
        "repositories": {},
        "released": {},
        "time_limits": {},
    }
    for task in tasks:
        for field, entries in kind_of(task).recorded(task).items():
            fields[field] |= entries
    return fields


def with_environments(
    manifest: Manifest, environments: Mapping[str, Environment], notes: Mapping[str, str] = {}
) -> Manifest:
    """`manifest` with the environments and what they hold (for a repository task,
    which one is its), and `notes` (task id -> what the model was shown of the
    repository)."""
    repositories = {
        task_id: {**fields, "environment": environments[task_id].key}
        | ({"shown": notes[task_id]} if task_id in notes else {})
        for task_id, fields in manifest.repositories.items()
    }
    held = {e.key: e.as_dict() for e in environments.values()}
    return manifest.model_copy(update={"repositories": repositories, "environments": held})


def unreadable_run(path: Path, what: str, written_by: str) -> StoreError:
    """The error for a run this codetrial cannot read: `what` says what was found in
    `path`, `written_by` is the codetrial version recorded in the run's manifest."""
    return StoreError(
        f"{path} {what}; this codetrial ({__version__}) reads store schemas "
        f"{', '.join(map(str, READABLE))}: "
        "re-run the trial with this version, or use the codetrial version that wrote it "
        f"({written_by}, recorded in its manifest)"
    )


def read_manifest(path: Path) -> Manifest:
    """The manifest in `path`; a StoreError names the file and what to do when it cannot
    be read, is not a run manifest or was written by another store schema."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StoreError(
            f"{path} cannot be read ({exc.strerror or exc}): it must be a file this user may "
            "read (and write, to resume); fix its permissions or run as the user who wrote it"
        ) from exc
    except ValueError as exc:  # not UTF-8, or not JSON
        raise StoreError(f"{path} is not JSON ({exc}): {_NOT_A_MANIFEST}") from exc
    if isinstance(raw, dict) and (found := raw.get("schema_version", 1)) not in READABLE:
        written_by = str(raw.get("codetrial_version", "unknown"))
        raise unreadable_run(path, f"was written by codetrial store schema {found}", written_by)
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise StoreError(
            f"{path} is not a run manifest ({problem(exc)}): {_NOT_A_MANIFEST}"
        ) from exc
