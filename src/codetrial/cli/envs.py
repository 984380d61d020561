"""`codetrial envs`: build and list package environments: a suite's (repository
tasks', function tasks' libraries, a question suite's), or named ones."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from codetrial import environments
from codetrial.cli.commands import COMMANDS
from codetrial.cli.options import DataFile, Packages, Requirements, Wheels, packages_of
from codetrial.cli.views import console
from codetrial.errors import ConfigError
from codetrial.kinds import kind_of, load_suite


def _wanted(suite: str, data: Path | None) -> dict[tuple[str, ...], list[str]]:
    """Each package list a suite's tasks need -> what needs it."""
    wanted: dict[tuple[str, ...], list[str]] = {}
    for task in load_suite(suite, None, data):
        needed = kind_of(task).environment(task)
        if needed is None:
            continue
        needs, who = needed
        if who not in wanted.setdefault(needs, []):
            wanted[needs].append(who)
    if not wanted:
        raise ConfigError(
            f"suite {suite!r} declares no packages: pass --suite swe --data INSTANCES for "
            "repository tasks, a suite of library tasks or questions, or --packages a,b"
        )
    return wanted


def envs(
    suite: Annotated[
        str, typer.Option(help="a suite whose environments to build: swe (with --data), a path...")
    ] = "swe",
    data: DataFile = None,
    packages: Packages = None,
    requirements: Requirements = None,
    wheels: Wheels = None,
) -> None:
    """Build every missing package environment (from the package index, or with
    --wheels from a folder of wheels alone) of a suite's tasks, or the one of
    --packages or --requirements, and list them."""
    named = packages_of(packages, requirements)
    wanted = {named: ["--packages"]} if named else _wanted(suite, data)
    table = Table(title=f"package environments in {environments.environments_dir()}")
    for header in ("for", "packages", "installed", "built"):
        table.add_column(header, overflow="fold")
    for needs, users in wanted.items():
        started = time.perf_counter()
        found = environments.cached(needs)
        status = "cached"
        if found is None:
            console.print(f"building {' '.join(needs)} ...", highlight=False)
            found = environments.build(needs, wheels)
            status = f"now, in {time.perf_counter() - started:.1f} s"
        installed = ", ".join(f"{name}=={version}" for name, version in found.installed.items())
        table.add_row("\n".join(sorted(users)), " ".join(needs), installed, status)
    console.print(table)


COMMANDS.register("envs", envs)
