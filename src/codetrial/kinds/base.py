"""What a kind of task is: the one place that knows what is particular to it.

A kind of task (a function, a workspace of files, a repository patch, a question over
data) owns its default conditions and gate, the package environments and views its
tasks need before they are judged, its first and its repair prompt, how a response
becomes a candidate and how that candidate is judged, the artifacts kept for an
attempt, and its rows in `codetrial tasks` and `codetrial envs`. The pipeline, the
store, `rerun`, `check` and the commands ask a task's kind; none of them tests which
class a task is.

A task names its kind (`task.kind`, a class attribute); `KINDS` maps that name to the
`Kind`. A new kind is a module that defines its task class and its `Kind`, and one
`KINDS.declare` line in the package's `__init__` (or a `register` call).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast, overload

from codetrial.config import RunConfig, ShapeDefaults
from codetrial.edits import EDIT_FORMATS, EditFormat
from codetrial.environments import for_libraries
from codetrial.errors import ConfigError
from codetrial.gate import Profile
from codetrial.localize import Localized
from codetrial.prompts import judged_by_definitions
from codetrial.records import AttemptRecord, Candidate, Message, Verdict
from codetrial.registry import Registry
from codetrial.tasks import load_suite as load_tasks
from codetrial.verdict.pool import JudgePool, Prepared


class KindedTask(Protocol):
    """What every kind's task has."""

    @property
    def id(self) -> str: ...
    @property
    def suite(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def policy(self) -> str: ...

    @property
    def trust(self) -> str: ...

    kind: ClassVar[str]


T = TypeVar("T", bound=KindedTask)
U = TypeVar("U", bound=KindedTask)


@dataclass(frozen=True)
class Asked:
    """How a task is asked and judged: the run's gate `profile`, the `edit_format`, the
    prompt profile, the `view` of a task not shown whole, whether a function's
    candidate is its definitions alone, the `mode` a question is answered in, whether
    this try is the `last` (no repair follows it), where the sandbox shows the run's
    input files (`inputs`: name -> path), and the `rules` a kind that has several
    judges by (None: its default)."""

    profile: Profile
    edit_format: EditFormat
    prompt_profile: str | None = None
    view: Localized | None = None
    definitions_only: bool = False
    mode: str | None = None
    last: bool = False
    inputs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    rules: str | None = None

    @classmethod
    def of(
        cls,
        profile: Profile,
        edit_format: str,
        prompt_profile: str | None,
        view: Localized | None = None,
        *,
        rules: str | None = None,
    ) -> Asked:
        """Under the gate `profile`, the edit format, the prompt profile and the rules
        named."""
        return cls(
            profile=profile,
            edit_format=EDIT_FORMATS.get(edit_format),
            prompt_profile=prompt_profile,
            view=view,
            definitions_only=judged_by_definitions(prompt_profile),
            rules=rules,
        )

    @classmethod
    def under(cls, config: RunConfig, profile: Profile, view: Localized | None = None) -> Asked:
        """How a task is asked and judged under a run's `config` and gate `profile`."""
        return cls.of(
            profile, config.edit_format or "whole", config.prompt_profile, view, rules=config.rules
        )


class Kind(Generic[T]):
    """A kind of task. The class attributes describe it; the methods are what the
    stages ask of it. A method a kind cannot answer raises a ConfigError saying
    which command judges its tasks instead."""

    name: ClassVar[str]
    described: ClassVar[str]  # its tasks, in a message: "workspace tasks (files edited...)"
    commands: ClassVar[str]  # the commands that take its tasks, in a message
    defaults: ClassVar[ShapeDefaults]
    edits: ClassVar[bool] = False  # answered in an edit format
    modes: ClassVar[tuple[str, ...]] = ()  # the ways its tasks may be answered (--mode)
    rules: ClassVar[tuple[str, ...]] = ()  # what judges them (--rules), default first
    takes_packages: ClassVar[bool] = False  # --packages replaces its libraries
    measures_efficiency: ClassVar[bool] = False

    def elsewhere(self, command: str, suite: str, takes: str) -> ConfigError:
        """The error for `command`, which takes `takes`, given a suite of this kind."""
        return ConfigError(
            f"{command} takes {takes}; suite {suite!r} holds {self.described}: "
            f"try them with {self.commands}"
        )

    def templates(self, config: RunConfig) -> tuple[str, ...]:
        """The prompt templates a run's prompts are made from, under its `config`."""
        raise NotImplementedError

    def gate(self, suite: str, tasks: Sequence[T], gate: str | None) -> str:
        """The gate profile to judge `tasks` with: `gate`, else the tasks' own."""
        return gate or tasks[0].policy

    def judged_by(self, suite: str, rules: str | None) -> str | None:
        """The rules the tasks of `suite` are judged by: `rules`, else the kind's
        default; None for a kind that has no choice of them. A ConfigError when
        `rules` are not the kind's."""
        if not self.rules:
            if rules is not None:
                raise ConfigError(
                    f"--rules is for program tasks (contest problems); suite {suite!r} "
                    f"holds {self.described}"
                )
            return None
        if rules is not None and rules not in self.rules:
            raise ConfigError(f"unknown rules {rules!r}; known: {', '.join(self.rules)}")
        return rules or self.rules[0]

    def benchmark(self, tasks: Sequence[T]) -> bool:
        """Whether the tasks are a benchmark's, asked with a code prompt to complete."""
        return False

    def prepare(
        self, tasks: Sequence[T], repos: Path | None, wheels: Path | None, command: str
    ) -> Prepared:
        """What the tasks need before they are judged, built or found."""
        return Prepared(None, {}, {})

    def timed(self, tasks: Suite[T], pool: JudgePool, *, factor: float, floor: float) -> Suite[T]:
        """The tasks with the time limits a run judges them by, set on this machine
        from the reference's time (`factor` times it, at least `floor` seconds) where
        the kind calibrates them; unchanged by default."""
        return tasks

    def recalled(self, tasks: Suite[T], manifest: Mapping[str, Any]) -> Suite[T]:
        """The tasks as a stored run judged them, with what its `manifest` (its fields
        by name) `recorded` of them put back; unchanged by default."""
        return tasks

    def views(self, tasks: Sequence[T], config: RunConfig) -> dict[str, Localized]:
        """What the model is shown of each task that is not shown whole, by task id."""
        return {}

    def environment(self, task: T) -> tuple[tuple[str, ...], str] | None:
        """The packages `task` needs installed and who needs them, for `codetrial envs`."""
        return None

    def row(self, task: T) -> tuple[str, str, str]:
        """`codetrial tasks`' row: what is asked, its tests, whether it has a reference."""
        raise NotImplementedError

    def asked_text(self, task: T) -> str:
        """What `task` asks, as a person reads it: a function's spec, a workspace's
        instructions, a repository's problem statement, a question."""
        raise NotImplementedError

    def artifacts(self, task: T, record: AttemptRecord, label: str) -> dict[str, str]:
        """The files kept for an attempt besides its response (path -> text, below
        the task's folder), `label` naming the attempt."""
        raise NotImplementedError

    def recorded(self, task: T) -> Mapping[str, Any]:
        """What the manifest keeps of `task` besides its digest: manifest field -> entry."""
        return {}

    def repairs(self, config: RunConfig, mode: str | None) -> int:
        """How many repairs may follow a first try under `config`, in `mode`."""
        return config.repair_attempts

    def system(self, config: RunConfig, profile: Profile, libraries: Sequence[str]) -> Message:
        """The system message of a try, under the gate `profile` its task is judged by,
        its task importing `libraries` (top-level modules) besides the standard library."""
        raise self.elsewhere("a trial", config.suite, "tasks judged by tests")

    def opening(self, task: T, asked: Asked, system: Message, continues: bool) -> list[Message]:
        """The messages of a first try, for a backend that `continues` a reply or not."""
        raise self.elsewhere("a trial", task.suite, "tasks judged by tests")

    def respond(
        self,
        pool: JudgePool,
        task: T,
        text: str,
        asked: Asked,
        workspace: dict[str, str] | None = None,
    ) -> tuple[Candidate, Future[Verdict]]:
        """The candidate in a response and its verdict to come; `workspace` is the
        files as the try before left them. A verdict that `asks` the model something
        is final once `answered`."""
        raise self.elsewhere("a trial", task.suite, "tasks judged by tests")

    def answered(self, task: T, verdict: Verdict, reply: str) -> Verdict:
        """`verdict`, which asked the model what it `asks`, final with its `reply`."""
        raise NotImplementedError

    def repair(
        self, task: T, asked: Asked, system: Message, previous: AttemptRecord
    ) -> list[Message]:
        """The next try's messages after `previous`, which has feedback."""
        raise self.elsewhere("a trial", task.suite, "tasks judged by tests")

    def check(self, pool: JudgePool, task: T, text: str, asked: Asked) -> Future[Verdict]:
        """`text` (a file, not a model's response) judged as a run judges a response."""
        return self.respond(pool, task, text, asked)[1]

    def rejudge(
        self,
        pool: JudgePool,
        task: T,
        record: AttemptRecord,
        asked: Asked,
        workspace: dict[str, str] | None,
    ) -> Future[Verdict] | None:
        """A stored attempt judged again, or None when this kind's attempts are not."""
        return None

    def references(
        self, pool: JudgePool, task: T, asked: Asked
    ) -> tuple[Future[Verdict] | None, Future[Verdict] | None]:
        """The reference's verdict and the starting files' (None where there is none),
        judged as `asked`."""
        return None, None

    def probes(self, pool: JudgePool, task: T, profile: Profile) -> list[Probe]:
        """What says whether `task`'s tests can be trusted, judged: candidates they
        must fail, and the reference judged again under `profile` (none by default)."""
        return []


@dataclass(frozen=True)
class Probe:
    """A candidate judged to test a task's tests: `trivial` (a body that does nothing
    useful, which the tests must fail) or the reference judged again (which must come
    out as it did the first time), named by what it is."""

    name: str
    trivial: bool
    verdict: Future[Verdict]


def output_of(record: AttemptRecord, label: str) -> dict[str, str]:
    """An attempt's test output (its visible tests', then its hidden tests'), or what
    stopped it before they ran."""
    output = record.visible_output + (
        "\n\n# hidden tests\n" + record.hidden_output if record.hidden_output else ""
    )
    return {f"test_output_{label}.txt": output or record.detail}


KINDS: Registry[Kind[Any]] = Registry("kind of task")  # the built-in kinds: see __init__


def kind_of(task: KindedTask) -> Kind[Any]:
    return KINDS.get(task.kind)


def _one_kind(tasks: Sequence[KindedTask], default: str) -> Kind[Any]:
    """The one kind of `tasks` (`default`'s when there are none); a ConfigError when
    they mix kinds, which a run judges apart."""
    names = sorted({t.kind for t in tasks})
    if len(names) > 1:
        raise ConfigError(
            f"suite {tasks[0].suite!r} mixes kinds of task ({', '.join(names)}): "
            "run each kind as a suite of its own"
        )
    return KINDS.get(names[0] if names else default)


class Suite(Sequence[T]):
    """A suite's tasks, all of one `kind`, which it states: a sequence of its tasks,
    any slice of which is a suite of that kind too."""

    def __init__(self, name: str, kind: Kind[T], tasks: Iterable[T]) -> None:
        self.name = name
        self.kind = kind
        self._tasks = tuple(tasks)

    @classmethod
    def of(cls, name: str, tasks: Sequence[KindedTask], default: str = "function") -> Suite[Any]:
        """`tasks` as the suite `name`, of their one kind (`default`'s when there are
        none); a ConfigError when they mix kinds, which a run judges apart."""
        return Suite(name, _one_kind(tasks, default), tasks)

    def only(self, kind: Kind[U], command: str) -> Suite[U]:
        """This suite, for `command`, which takes tasks of `kind` only; a ConfigError
        says which commands take its tasks when they are of another kind."""
        if self.kind is not kind:
            raise self.kind.elsewhere(command, self.name, kind.described)
        return cast(Suite[U], self)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Suite[T]: ...
    def __getitem__(self, index: int | slice) -> T | Suite[T]:
        if isinstance(index, slice):
            return Suite(self.name, self.kind, self._tasks[index])
        return self._tasks[index]

    def __len__(self) -> int:
        return len(self._tasks)

    def __repr__(self) -> str:
        return f"Suite({self.name!r}, {self.kind.name}, {len(self)} tasks)"


class Libraries(Protocol):
    """A task that may import the libraries it declares."""

    @property
    def id(self) -> str: ...
    @property
    def packages(self) -> tuple[str, ...]: ...


def with_libraries(tasks: Sequence[Libraries], wheels: Path | None) -> Prepared:
    """What tasks that import libraries need: the environments of those that declare
    packages, built from `wheels` when given."""
    libraries = for_libraries({t.id: t.packages for t in tasks}, wheels)
    return Prepared(None, libraries, libraries)


def load_suite(
    name: str,
    task_ids: list[str] | None = None,
    data: Path | None = None,
    packages: Sequence[str] = (),
) -> Suite[Any]:
    """A suite (see `codetrial.tasks.load_suite`); with `packages`, tasks of a kind
    that imports libraries import those instead of their own."""
    suite = Suite.of(name, load_tasks(name, task_ids, data))
    if not packages:
        return suite
    kind = suite.kind
    if not kind.takes_packages:
        raise ConfigError(
            f"--packages is for function tasks and questions; suite {name!r} holds "
            f"{kind.described}, whose environments their files declare"
        )
    chosen = tuple(sorted(packages))
    return Suite(name, kind, [dataclasses.replace(t, packages=chosen) for t in suite])


def released_within(suite: Suite[T], since: date | None, until: date | None) -> Suite[T]:
    """The problems of `suite` released from `since` to `until` (both inclusive, either
    open); a ConfigError when any problem has no release date, which no window can
    place, or when none is in the window."""
    found: dict[str, str | None] = {t.id: getattr(t, "released", None) for t in suite}
    dated = {task_id: released for task_id, released in found.items() if released is not None}
    undated = [task_id for task_id in found if task_id not in dated]
    if undated:
        raise ConfigError(
            f"--since and --until select problems by their release date, and suite "
            f"{suite.name!r} has {len(undated)} without one ({', '.join(undated[:3])}"
            f"{', ...' if len(undated) > 3 else ''}): run it without a window"
        )
    low, high = (since or date.min).isoformat(), (until or date.max).isoformat()
    kept = [t for t in suite if low <= dated[t.id] <= high]
    if not kept:
        first, last = min(dated.values()), max(dated.values())
        raise ConfigError(
            f"no problem of suite {suite.name!r} was released from {since or 'the start'} "
            f"to {until or 'now'}; its problems were released from {first} to {last}"
        )
    return Suite(suite.name, suite.kind, kept)


def stored_tasks(config: RunConfig, digests: Mapping[str, str], run_dir: Path) -> Suite[Any]:
    """The tasks of the run stored in `run_dir` under `config`, loaded again; a
    ConfigError when the spec or the tests of any changed since the run (`digests`:
    task id -> its digest then), whose results hold only for what it was judged by."""
    tasks = load_suite(config.suite, list(digests), config.data, config.packages)
    changed = [t.id for t in tasks if t.digest != digests.get(t.id)]
    if changed:
        raise ConfigError(
            f"tasks changed since {run_dir} ran: {', '.join(changed)}; its results "
            "hold only for the tests it was judged by: start a new run"
        )
    return tasks
