"""Package environments for candidates, built on the trusted side.

An environment is a folder that pip fills (`pip install --target`, wheels only, so
nothing is compiled) with the packages a task declares: what a repository's tests
need besides the repository (pytest, the repository's own dependencies), or the
libraries a function task or a question may import (numpy, pandas, matplotlib...).
It is built once per package list and interpreter, cached under the codetrial cache
by a hash of both, and bound read-only into the sandbox, which has no network.
`--wheels DIR` builds from a folder of wheels with no index at all. Without it,
repository environments are built only by `codetrial envs`, from the package index,
so a run or an evaluation of a repository never downloads; the libraries a function
task, a question or `--packages` names are what the user asked for by name, and are
built from the package index when missing.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codetrial.config import cache_dir
from codetrial.errors import ConfigError, RepositoryError
from codetrial.tasks.repository import EnvironmentSpec

_RECORD = "codetrial-environment.json"
PIP_TIMEOUT_S = 900


@dataclass(frozen=True)
class Environment:
    """A built environment: where it is and what pip installed into it."""

    key: str
    path: Path
    requested: tuple[str, ...]
    installed: dict[str, str]
    modules: tuple[str, ...] = ()

    @property
    def preload(self) -> tuple[str, ...]:
        """The modules a sandbox imports once for its candidates (pyplot, whose first
        import reads every font, among them)."""
        charts = ("matplotlib.pyplot",) if "matplotlib" in self.modules else ()
        return (*self.modules, *charts)

    def as_dict(self) -> dict[str, object]:
        """The environment as a manifest records it."""
        return {
            "requested": list(self.requested),
            "installed": self.installed,
            "modules": list(self.modules),
            "path": str(self.path),
        }


def environment_key(packages: Sequence[str]) -> str:
    """The cache key: the package list and the interpreter that will import them."""
    python = f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"
    text = json.dumps([python, sorted(packages)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def environments_dir() -> Path:
    return cache_dir() / "environments"


def _installed(path: Path) -> dict[str, str]:
    found = importlib.metadata.distributions(path=[str(path)])
    return dict(sorted((d.metadata["Name"], d.version) for d in found))


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalized as the package index does."""
    name = re.split(r"[\s\[<>=!~;@]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _modules(path: Path, requested: Sequence[str]) -> tuple[str, ...]:
    """The top-level modules the requested distributions (not their dependencies)
    install into `path`: what a candidate may import from the environment."""
    wanted = {_name(r) for r in requested}
    found: set[str] = set()
    for distribution in importlib.metadata.distributions(path=[str(path)]):
        if _name(distribution.metadata["Name"]) not in wanted:
            continue
        for file in distribution.files or ():
            top = file.parts[0].removesuffix(".py") if len(file.parts) == 1 else file.parts[0]
            if top.isidentifier() and top != "__pycache__":
                found.add(top)
    return tuple(sorted(found))


def cached(packages: Sequence[str]) -> Environment | None:
    """The environment of `packages`, when it is built."""
    key = environment_key(packages)
    path = environments_dir() / key
    record = path / _RECORD
    if not record.is_file():
        return None
    data = json.loads(record.read_text(encoding="utf-8"))
    return Environment(
        key, path, tuple(sorted(packages)), data["installed"], _modules(path, packages)
    )


def build(packages: Sequence[str], wheels: Path | None) -> Environment:
    """Build the environment of `packages` (from `wheels` with no index, else from
    the package index), or return the cached one. A RepositoryError carries pip's
    words."""
    if (found := cached(packages)) is not None:
        return found
    target = environments_dir() / environment_key(packages)
    target.parent.mkdir(parents=True, exist_ok=True)
    source = ["--no-index", "--find-links", str(wheels)] if wheels is not None else []
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".building-") as scratch:
        folder = Path(scratch) / "environment"
        command = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-warn-script-location",
            "--only-binary",
            ":all:",
            "--target",
            str(folder),
            *source,
            *packages,
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise RepositoryError(f"pip did not finish in {PIP_TIMEOUT_S} s: {command}") from exc
        if done.returncode != 0:
            where = f"the wheels in {wheels}" if wheels else "the package index"
            raise RepositoryError(
                f"cannot build the environment {' '.join(packages)} from {where}: "
                f"{done.stderr.strip()[-1500:]}\nOnly packages with wheels can be used "
                "(no compiler runs); fix the package list"
            )
        for path in folder.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        record = {"requested": list(packages), "installed": _installed(folder)}
        (folder / _RECORD).write_text(json.dumps(record, indent=1), encoding="utf-8")
        try:
            os.rename(folder, target)
        except OSError:  # built meanwhile by another process: keep that one
            if cached(packages) is None:
                raise
    found = cached(packages)
    assert found is not None
    return found


def ensure(
    specs: Iterable[EnvironmentSpec], wheels: Path | None, command: str
) -> dict[EnvironmentSpec, Environment]:
    """Every spec's environment; missing ones are built from `wheels` when given, and
    otherwise a RepositoryError says how to build them."""
    found = {}
    for spec in dict.fromkeys(specs):
        environment = cached(spec.packages)
        if environment is None:
            if wheels is None:
                raise RepositoryError(
                    f"the package environment {' '.join(spec.packages)} is not built: build "
                    "it from the package index with `codetrial envs` (same --suite and "
                    f"--data), or pass {command} --wheels DIR with a folder of its wheels"
                )
            environment = build(spec.packages, wheels)
        found[spec] = environment
    return found


def for_libraries(
    needs: Mapping[str, tuple[str, ...]], wheels: Path | None
) -> dict[str, Environment]:
    """The environment of each task that declares packages (`needs`: task id -> its
    requirements, empty for none), by task id; a missing one is built, from `wheels`
    when given, else from the package index."""
    built: dict[tuple[str, ...], Environment] = {}
    for packages in needs.values():
        if packages and packages not in built:
            built[packages] = build(packages, wheels)
    one_version_each(list(built.values()))
    return {task_id: built[packages] for task_id, packages in needs.items() if packages}


def one_version_each(environments: Sequence[Environment]) -> None:
    """A run's environments share one import path, so no two may hold a package at
    different versions; a ConfigError names the first that does."""
    seen: dict[str, tuple[str, Environment]] = {}
    for environment in environments:
        for name, version in environment.installed.items():
            other = seen.setdefault(name, (version, environment))
            if other[0] != version:
                raise ConfigError(
                    f"the tasks' package environments hold {name} {other[0]} "
                    f"({' '.join(other[1].requested)}) and {name} {version} "
                    f"({' '.join(environment.requested)}), and a run imports from all of them: "
                    "pin the same versions, or run those tasks apart"
                )
