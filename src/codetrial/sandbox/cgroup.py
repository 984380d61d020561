"""A memory and process-count limit for one sandbox worker, through a cgroup.

Detects cgroup v2 (a unified hierarchy with the memory and pids controllers
delegated) or v1 (separate memory and pids hierarchies). When neither can be used
here, `Cgroup.create` returns None and the run's isolation level says so.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path

_ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count()


def _own_paths() -> dict[str, str]:
    """controller (or "" for v2) -> this process's cgroup path."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _write(path: Path, value: str) -> None:
    path.write_text(value)


class Cgroup:
    """One cgroup per worker: its folders, and where to read OOM kills."""

    def __init__(self, folders: list[Path], events: Path, version: int) -> None:
        self.folders = folders
        self._events = events
        self.version = version

    @classmethod
    def create(cls, memory_bytes: int, max_pids: int) -> Cgroup | None:
        name = f"codetrial-{os.getpid()}-{next(_counter)}"
        try:
            own = _own_paths()
        except OSError:
            return None
        for attempt in (cls._v2, cls._v1):
            with contextlib.suppress(OSError, KeyError):
                return attempt(own, name, memory_bytes, max_pids)
        return None

    @classmethod
    def _v2(cls, own: dict[str, str], name: str, memory: int, pids: int) -> Cgroup:
        mount = _ROOT if (_ROOT / "cgroup.controllers").is_file() else _ROOT / "unified"
        parent = mount / own[""].lstrip("/")
        if not {"memory", "pids"} <= set((parent / "cgroup.subtree_control").read_text().split()):
            raise KeyError("memory and pids are not delegated here")
        folder = parent / name
        folder.mkdir()
        group = cls([folder], folder / "memory.events", 2)
        try:
            _write(folder / "memory.max", str(memory))
            _write(folder / "memory.swap.max", "0")
            _write(folder / "pids.max", str(pids))
        except OSError:
            group.remove()
            raise
        return group

    @classmethod
    def _v1(cls, own: dict[str, str], name: str, memory: int, pids: int) -> Cgroup:
        memory_dir = _ROOT / "memory" / own["memory"].lstrip("/") / name
        pids_dir = _ROOT / "pids" / own["pids"].lstrip("/") / name
        memory_dir.mkdir()
        group = cls([memory_dir], memory_dir / "memory.oom_control", 1)
        try:
            pids_dir.mkdir()
            group.folders.append(pids_dir)
            _write(memory_dir / "memory.limit_in_bytes", str(memory))
            with contextlib.suppress(OSError):
                _write(memory_dir / "memory.memsw.limit_in_bytes", str(memory))
            _write(pids_dir / "pids.max", str(pids))
        except OSError:
            group.remove()
            raise
        return group

    def add(self, pid: int) -> None:
        for folder in self.folders:
            _write(folder / "cgroup.procs", str(pid))

    def oom_kills(self) -> int:
        with contextlib.suppress(OSError):
            for line in self._events.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def remove(self) -> None:
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()
