"""Parallel verdicts: one warm sandbox per worker, candidates judged in threads.

The threads mostly wait on the sandboxed children, so `--workers N` uses N cores
for candidate code while the caller keeps generating. A function's program is judged
once per task and gate profile, and what a kind judges with `judge_with` once per
key (see `codetrial.kinds`): samples drawn at a temperature repeat each other, and
the same code gets the same verdict (when the sandbox fails to judge it, the next
copy tries again).
"""

from __future__ import annotations

import contextlib
import copy
import json
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from codetrial.config import Limits
from codetrial.environments import Environment
from codetrial.errors import BackendError, ConfigError, PromptTooLong, RepositoryError, SandboxError
from codetrial.gate import Profile
from codetrial.records import Candidate, Outcome, Verdict
from codetrial.sandbox import (
    CallTimeout,
    CandidateError,
    ChildExit,
    LimitHit,
    Mounts,
    Sandbox,
    SandboxPolicy,
    Session,
    Stop,
    codec,
    open_sandbox,
)
from codetrial.tasks import AnyTask, Task
from codetrial.verdict.decide import judge
from codetrial.verdict.repository import Repositories
from codetrial.verdict.toolchains import Toolchain, building

TESTS_SLACK_S = 0.1
NO_ANSWER = ("raised", "returned", "timeout", "stopped")  # outputs that are not a value
_Key = tuple[str, str, str | None]  # task digest, gate profile or kind, what is judged
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Prepared:
    """What a run's tasks need before they are judged: where its repository tasks
    come from (None when there are none), every task's environment (task id -> it,
    for the manifest), those of the function tasks and questions that import
    libraries, the files questions ask about, shown read-only to programs, the
    toolchains that build and test workspaces in other languages than Python, and the
    standard modules every candidate's process should start with, loaded once by each
    sandbox's server rather than by every process."""

    repositories: Repositories | None
    environments: dict[str, Environment]
    libraries: dict[str, Environment]
    inputs: tuple[Path, ...] = ()
    toolchains: tuple[Toolchain, ...] = ()
    preload: tuple[str, ...] = ()


def settled(value: R) -> Future[R]:
    """A verdict (or a measurement) reached without the sandbox, delivered as the
    pool's are."""
    future: Future[R] = Future()
    future.set_result(value)
    return future


def infrastructure_failure(detail: str) -> Verdict:
    """The verdict when the machinery failed: never the model's fault."""
    return Verdict(Outcome.INFRA_ERROR, gate=None, detail=detail)


def request_failure(exc: BackendError) -> Verdict:
    """The verdict of a try whose request to the model failed: `overflow` when the
    prompt cannot fit the model's context window (the task's and the run's doing,
    counted, never asked again), else an infra_error."""
    if isinstance(exc, PromptTooLong):
        return Verdict(Outcome.OVERFLOW, gate=None, detail=str(exc))
    return infrastructure_failure(str(exc))


def verdict_of(future: Future[Verdict]) -> Verdict:
    """The judged verdict; when the sandbox could not run the candidate, an infra_error
    verdict: a fault of the machinery, never of the model."""
    try:
        return future.result()
    except (SandboxError, RepositoryError) as exc:
        return infrastructure_failure(str(exc))


def _output(session: Session, function: str, args: list[Any], cpu_s: float) -> str:
    try:
        value = session.call(function, copy.deepcopy(args), {}, cpu_s)
    except CallTimeout:
        return "timeout"
    except CandidateError as exc:
        return f"raised {exc.type_name}"
    except Exception as exc:
        return f"raised {type(exc).__name__}"
    try:
        return json.dumps(codec.encode(value), sort_keys=True)
    except (codec.NotPlainData, RecursionError, TypeError, ValueError):
        return f"returned {type(value).__name__}"


class JudgePool:
    """Warm sandboxes judging in threads: use it as a context manager, or call `close()`."""

    def __init__(
        self,
        workers: int,
        policy: SandboxPolicy,
        repositories: Repositories | None = None,
        libraries: Mapping[str, Environment] = {},
        inputs: tuple[Path, ...] = (),
        toolchains: tuple[Toolchain, ...] = (),
        preload: tuple[str, ...] = (),
    ) -> None:
        """Sandboxes under `policy`. `repositories`: where a run's repository tasks
        come from; `libraries`: the environment of each task that imports libraries
        (task id -> it); `inputs`: the files questions ask about; `toolchains`: the
        compilers and test runners of the run's workspaces. Their package
        environments, the inputs and the toolchains' folders are bound read-only
        into every sandbox. `preload`: standard modules each sandbox's server imports
        once, beside its environments' own."""
        policy = building(policy, toolchains)
        self.limits = policy.limits
        self._repositories = repositories
        self._libraries = libraries
        self.toolchains = {t.language: t.as_dict() for t in toolchains}
        preload = (*preload, *(m for e in libraries.values() for m in e.preload))
        mounts = Mounts(
            folders=repositories.mounts if repositories else (),
            packages=tuple(sorted({e.path for e in libraries.values()})),
            preload=tuple(sorted(set(preload))),
            inputs=inputs,
        )
        mounted = policy.with_mounts(mounts)
        self._free: queue.Queue[Sandbox] = queue.Queue()
        self._sandboxes = []
        try:
            # One after another in this thread: bubblewrap's --die-with-parent ends a
            # sandbox when the thread that started it ends, so no short-lived threads.
            for _ in range(max(1, workers)):
                sandbox = open_sandbox(mounted)
                self._sandboxes.append(sandbox)
                self._free.put(sandbox)
            # Read now, while no candidate runs: reading it starts a sandbox's worker
            # if it is down, which must not race the thread judging in it.
            self.isolation = self._sandboxes[0].isolation
            self.inputs = self._sandboxes[0].inputs()  # name -> where programs see it
        except BaseException:
            self.close()
            raise
        self._executor = ThreadPoolExecutor(max_workers=len(self._sandboxes))
        self._verdicts: dict[_Key, Future[Verdict]] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_tasks(cls, workers: int, policy: SandboxPolicy, prepared: Prepared) -> JudgePool:
        """A pool that judges tasks with what their kind `prepared` for them."""
        return cls(
            workers,
            policy,
            prepared.repositories,
            prepared.libraries,
            prepared.inputs,
            prepared.toolchains,
            prepared.preload,
        )

    @property
    def workers(self) -> int:
        return len(self._sandboxes)

    @property
    def bwrap(self) -> dict[str, str]:
        """The bubblewrap binary the sandboxes run under (empty on the host)."""
        binary = self._sandboxes[0].bwrap
        return binary.as_dict() if binary else {}

    @contextlib.contextmanager
    def _borrowed(self) -> Iterator[Sandbox]:
        sandbox = self._free.get()
        try:
            yield sandbox
        finally:
            self._free.put(sandbox)

    def profile_for(self, task: AnyTask, profile: Profile) -> Profile:
        """The gate profile `task` is judged with: `profile`, with imports of its
        libraries allowed when it has some."""
        return profile.allowing(self.libraries_of(task))

    def libraries_of(self, task: AnyTask) -> tuple[str, ...]:
        """The top-level modules of `task`'s package environment (none without one)."""
        environment = self._libraries.get(task.id)
        return environment.modules if environment else ()

    def _judge(self, candidate: Candidate, task: Task, profile: Profile) -> Verdict:
        with self._borrowed() as sandbox:
            return judge(candidate, task, self.profile_for(task, profile), sandbox, self.limits)

    def submit(self, candidate: Candidate, task: Task, profile: Profile) -> Future[Verdict]:
        """The candidate's verdict, to come; each call gets a future of its own."""
        key = (task.digest, profile.name, candidate.code)
        return self._shared(key, lambda: self._judge(candidate, task, profile))

    @property
    def repositories(self) -> Repositories:
        """Where the run's repository tasks come from; a ConfigError when the pool was
        opened without them."""
        if self._repositories is None:
            raise ConfigError("this judge pool was opened without the run's repositories")
        return self._repositories

    def judge_with(self, key: _Key, work: Callable[[Sandbox, Limits], Verdict]) -> Future[Verdict]:
        """The verdict `work` reaches in one of the pool's sandboxes under its limits, to
        come. `key` (the task's digest, how it is judged, what is judged) says which
        calls are one judging: the same key is judged once."""
        return self._shared(key, lambda: self._in_sandbox(work))

    def run_with(self, work: Callable[[Sandbox, Limits], R]) -> Future[R]:
        """What `work` returns, run in one of the pool's sandboxes under its limits, to
        come: every call runs (a measurement, not a verdict)."""
        return self._executor.submit(self._in_sandbox, work)

    def _in_sandbox(self, work: Callable[[Sandbox, Limits], R]) -> R:
        with self._borrowed() as sandbox:
            return work(sandbox, self.limits)

    def _shared(self, key: _Key, work: Callable[[], Verdict]) -> Future[Verdict]:
        """A future of the caller's own for the verdict under `key`, judged once."""
        with self._lock:
            shared = self._verdicts.get(key)
            if shared is None:
                shared = self._executor.submit(work)
                self._verdicts[key] = shared
        mine: Future[Verdict] = Future()
        shared.add_done_callback(lambda done: self._settle(key, done, mine))
        return mine

    def _settle(self, key: _Key, shared: Future[Verdict], mine: Future[Verdict]) -> None:
        if shared.cancelled():
            mine.cancel()
        elif (error := shared.exception()) is not None:
            self._forget(key, shared)
            mine.set_exception(error)
        else:
            mine.set_result(shared.result())

    def _forget(self, key: _Key, shared: Future[Verdict]) -> None:
        with self._lock:
            if self._verdicts.get(key) is shared:
                del self._verdicts[key]

    def _each(
        self, code: str, task: Task, items: Sequence[T], one: Callable[[Session, T], R], stopped: R
    ) -> list[R]:
        """`one(session, item)` for each item, in the candidate's process; after a
        LimitHit the item gets `stopped` and a fresh process takes the rest. A program
        that cannot load, or is stopped while loading, gets `stopped` for every item."""
        results: list[R] = []
        with self._borrowed() as sandbox:
            while len(results) < len(items):
                with sandbox.session(task.program(code), self.limits) as session:
                    if session.load_error is not None or session.stop is not None:
                        return results + [stopped] * (len(items) - len(results))
                    for item in items[len(results) :]:
                        try:
                            results.append(one(session, item))
                        except LimitHit:
                            results.append(stopped)
                            break
        return results

    def _run_tests(self, code: str, task: Task, tests: list[str], cpu_s: float) -> list[bool]:
        if not tests:
            return []
        passed: list[bool] = []
        with self._borrowed() as sandbox, sandbox.session(task.program(code), self.limits) as run:
            if run.load_error is None:
                with contextlib.suppress(LimitHit):
                    passed = run.run(tests, cpu_s)
        if len(passed) < len(tests) or run.child_cpu_s > cpu_s * len(tests) + TESTS_SLACK_S:
            return [False] * len(tests)
        return passed

    def submit_tests(
        self, code: str, task: Task, tests: list[str], cpu_s: float = 1.0
    ) -> Future[list[bool]]:
        """Which of `tests` (untrusted code, say tests a model wrote) the candidate
        passes. They run in the candidate's own sandboxed process, one after another,
        each within `cpu_s` CPU seconds. As in CodeT, the whole run has a budget of
        `cpu_s` per test plus TESTS_SLACK_S: a candidate that spends more, or that a
        test stops (a limit, an exit), passes none."""
        return self._executor.submit(self._run_tests, code, task, tests, cpu_s)

    def submit_outputs(
        self, code: str, task: Task, inputs: list[list[Any]], cpu_s: float = 1.0
    ) -> Future[list[str]]:
        """The candidate's entry point on each argument list, each call within `cpu_s`
        CPU seconds, as comparable text: the returned plain data as canonical JSON,
        "raised <type>" (the candidate's own class name), "timeout" (the call ran past
        `cpu_s`), or "stopped" (a limit ended the process)."""

        def one(session: Session, args: list[Any]) -> str:
            return _output(session, task.entry_point, args, cpu_s)

        return self._executor.submit(self._each, code, task, inputs, one, "stopped")

    def submit_call(
        self, code: str, task: Task, args: list[Any], cpu_s: float
    ) -> Future[tuple[str, ChildExit | None]]:
        """The entry point on `args` alone in a fresh process, as `submit_outputs`
        writes its output ("timeout" also when the process's own time limit ended
        it), and how that process ended, with its CPU time and peak memory (None
        when the host had to stop it: a wall limit, a fault, a broken protocol)."""
        return self._executor.submit(self._call_alone, code, task, args, cpu_s)

    def _call_alone(
        self, code: str, task: Task, args: list[Any], cpu_s: float
    ) -> tuple[str, ChildExit | None]:
        output = "stopped"
        with self._borrowed() as sandbox, sandbox.session(task.program(code), self.limits) as one:
            if one.load_error is None and one.stop is None:
                with contextlib.suppress(LimitHit):
                    output = _output(one, task.entry_point, args, cpu_s)
        if one.stop is Stop.TIMEOUT:
            output = "timeout"
        return output, one.exit

    def submit_fresh(self, candidate: Candidate, task: Task, profile: Profile) -> Future[Verdict]:
        """A verdict judged anew, neither shared nor kept: for measuring its test runs."""
        return self._executor.submit(self._judge, candidate, task, profile)

    def __enter__(self) -> JudgePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if hasattr(self, "_executor"):
            self._executor.shutdown(wait=True, cancel_futures=True)
        for sandbox in self._sandboxes:
            sandbox.close()
