"""`codetrial envs`: build and list the package environments of repository tasks."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.table import Table

from codetrial import environments
from codetrial.cli.options import DataFile, Wheels
from codetrial.cli.views import console
from codetrial.tasks import load_suite, repository_tasks


def envs(
    suite: Annotated[str, typer.Option(help="swe, or the path of an instances JSONL")] = "swe",
    data: DataFile = None,
    wheels: Wheels = None,
) -> None:
    """Build every missing package environment of a suite of repository tasks (from
    the package index, or with --wheels from a folder of wheels alone) and list them."""
    tasks = repository_tasks(load_suite(suite, None, data), "codetrial envs")
    table = Table(title=f"package environments in {environments.environments_dir()}")
    for header in ("repositories", "packages", "installed", "built"):
        table.add_column(header)
    for spec in dict.fromkeys(t.environment for t in tasks):
        repos = sorted({f"{t.repo} {t.version}" for t in tasks if t.environment == spec})
        started = time.perf_counter()
        found = environments.cached(spec)
        status = "cached"
        if found is None:
            console.print(f"building {' '.join(spec.packages)} ...", highlight=False)
            found = environments.build(spec, wheels)
            status = f"now, in {time.perf_counter() - started:.1f} s"
        installed = ", ".join(f"{name}=={version}" for name, version in found.installed.items())
        table.add_row("\n".join(repos), " ".join(spec.packages), installed, status)
    console.print(table)
