"""Package environments for repository tests, built on the trusted side.

An environment is a folder that pip fills (`pip install --target`, wheels only, so
nothing is compiled) with what a repository's tests need besides the repository:
pytest, and the repository's own dependencies. It is built once per package list and
interpreter, cached under the codetrial cache, and bound read-only into the sandbox,
which has no network. `--wheels DIR` builds from a folder of wheels with no index at
all; without it only `codetrial envs` builds, from the package index, so a run or an
evaluation never downloads.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codetrial.config import cache_dir
from codetrial.errors import ConfigError, RepositoryError
from codetrial.store.manifest import Manifest
from codetrial.tasks import AnyTask
from codetrial.tasks.repository import EnvironmentSpec, RepositoryTask
from codetrial.verdict.repository import Repositories, check_repositories

_RECORD = "codetrial-environment.json"
PIP_TIMEOUT_S = 900


@dataclass(frozen=True)
class Environment:
    """A built environment: where it is and what pip installed into it."""

    key: str
    path: Path
    requested: tuple[str, ...]
    installed: dict[str, str]


def environment_key(spec: EnvironmentSpec) -> str:
    """The cache key: the package list and the interpreter that will import them."""
    python = f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"
    text = json.dumps([python, sorted(spec.packages)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def environments_dir() -> Path:
    return cache_dir() / "environments"


def _installed(path: Path) -> dict[str, str]:
    found = importlib.metadata.distributions(path=[str(path)])
    return dict(sorted((d.metadata["Name"], d.version) for d in found))


def cached(spec: EnvironmentSpec) -> Environment | None:
    """The environment for `spec`, when it is built."""
    path = environments_dir() / environment_key(spec)
    record = path / _RECORD
    if not record.is_file():
        return None
    data = json.loads(record.read_text(encoding="utf-8"))
    return Environment(environment_key(spec), path, spec.packages, data["installed"])


def build(spec: EnvironmentSpec, wheels: Path | None) -> Environment:
    """Build the environment for `spec` (from `wheels` with no index, else from the
    package index), or return the cached one. A RepositoryError carries pip's words."""
    if (found := cached(spec)) is not None:
        return found
    target = environments_dir() / environment_key(spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    source = ["--no-index", "--find-links", str(wheels)] if wheels is not None else []
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".building-") as scratch:
        folder = Path(scratch) / "environment"
        command = [
            sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--no-warn-script-location", "--only-binary", ":all:", "--target", str(folder),
            *source, *spec.packages,
        ]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise RepositoryError(f"pip did not finish in {PIP_TIMEOUT_S} s: {command}") from exc
        if done.returncode != 0:
            where = f"the wheels in {wheels}" if wheels else "the package index"
            raise RepositoryError(
                f"cannot build the environment {' '.join(spec.packages)} from {where}: "
                f"{done.stderr.strip()[-1500:]}\nOnly packages with wheels can be used "
                "(no compiler runs); fix the packages in environments.toml"
            )
        for path in folder.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        record = {"requested": list(spec.packages), "installed": _installed(folder)}
        (folder / _RECORD).write_text(json.dumps(record, indent=1), encoding="utf-8")
        try:
            os.rename(folder, target)
        except OSError:  # built meanwhile by another process: keep that one
            if cached(spec) is None:
                raise
    found = cached(spec)
    assert found is not None
    return found


def ensure(
    specs: Iterable[EnvironmentSpec], wheels: Path | None, command: str
) -> dict[EnvironmentSpec, Environment]:
    """Every spec's environment; missing ones are built from `wheels` when given, and
    otherwise a RepositoryError says how to build them."""
    found = {}
    for spec in dict.fromkeys(specs):
        environment = cached(spec)
        if environment is None:
            if wheels is None:
                raise RepositoryError(
                    f"the package environment {' '.join(spec.packages)} is not built: build "
                    "it from the package index with `codetrial envs` (same --suite and "
                    f"--data), or pass {command} --wheels DIR with a folder of its wheels"
                )
            environment = build(spec, wheels)
        found[spec] = environment
    return found


def for_tasks(
    tasks: Sequence[AnyTask], repos: Path | None, wheels: Path | None, command: str
) -> tuple[Repositories | None, dict[str, Environment]]:
    """Where the repository tasks among `tasks` come from, and each one's environment
    (task id -> it), once every clone and commit is found under `repos` and every
    environment is built; a ConfigError or RepositoryError says what is missing and
    how to provide it. (None, {}) when there are no repository tasks."""
    mine = [t for t in tasks if isinstance(t, RepositoryTask)]
    if not mine:
        return None, {}
    if repos is None:
        raise ConfigError(
            f"repository tasks need {command} --repos DIR: a folder with one git clone per "
            "repository, named owner__name as SWE-bench names them"
        )
    check_repositories(repos, mine)
    built = ensure([t.environment for t in mine], wheels, command)
    by_task = {t.id: built[t.environment] for t in mine}
    return Repositories(repos, {i: e.path for i, e in by_task.items()}), by_task


def recorded(
    manifest: Manifest, environments: Mapping[str, Environment], notes: Mapping[str, str] = {}
) -> Manifest:
    """`manifest` with each repository task's environment and what it holds, and
    `notes` (task id -> what the model was shown of the repository)."""
    repositories = {
        task_id: {**fields, "environment": environments[task_id].key}
        | ({"shown": notes[task_id]} if task_id in notes else {})
        for task_id, fields in manifest.repositories.items()
    }
    held = {
        e.key: {"requested": list(e.requested), "installed": e.installed, "path": str(e.path)}
        for e in environments.values()
    }
    return manifest.model_copy(update={"repositories": repositories, "environments": held})
