"""Repository tasks: an issue against a repository at a commit. The model is shown a
workspace of the files retrieval picked (see `codetrial.localize`) and edits them in
an edit format; the candidate is the patch those edits make to the whole files,
judged by the repository's own tests as SWE-bench judges a patch (trust level
"in-sandbox"). A prediction another tool wrote is judged as the patch it is."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from codetrial.config import REPOSITORY_DEFAULTS, Limits, RunConfig
from codetrial.environments import ensure
from codetrial.errors import ConfigError
from codetrial.gate import scan_patch
from codetrial.kinds.base import KINDS, Asked, output_of
from codetrial.kinds.workspace import Edited, repaired
from codetrial.localize import Localized
from codetrial.localize import views as localized_views
from codetrial.prompts import workspace_messages
from codetrial.records import AttemptRecord, Candidate, Message, Verdict
from codetrial.sandbox import Sandbox
from codetrial.tasks.repository import RepositoryTask
from codetrial.verdict.pool import JudgePool, Prepared, settled
from codetrial.verdict.repository import Repositories, check_repositories, judge_repository


class RepositoryKind(Edited[RepositoryTask]):
    name = "repository"
    described = "repository tasks (SWE-bench instances: --suite swe --data INSTANCES.jsonl)"
    commands = "`codetrial run` or `codetrial evaluate PREDICTIONS`"
    defaults = REPOSITORY_DEFAULTS

    def templates(self, config: RunConfig) -> tuple[str, ...]:
        """The workspace's, and the issue's when the run is shown views of its repositories."""
        shown = ("repository_issue.md",) if config.repos is not None else ()
        return (*super().templates(config), *shown)

    def prepare(
        self,
        tasks: Sequence[RepositoryTask],
        repos: Path | None,
        wheels: Path | None,
        command: str,
    ) -> Prepared:
        """Every clone and commit found under `repos` and every environment built; a
        ConfigError or RepositoryError says what is missing and how to provide it."""
        if repos is None:
            raise ConfigError(
                f"repository tasks need {command} --repos DIR: a folder with one git clone "
                "per repository, named owner__name as SWE-bench names them"
            )
        check_repositories(repos, tasks)
        built = ensure([t.environment for t in tasks], wheels, command)
        by_task = {t.id: built[t.environment] for t in tasks}
        folders = {task_id: e.path for task_id, e in by_task.items()}
        return Prepared(Repositories(repos, folders), by_task, {})

    def views(self, tasks: Sequence[RepositoryTask], config: RunConfig) -> dict[str, Localized]:
        return localized_views(tasks, config)

    def environment(self, task: RepositoryTask) -> tuple[tuple[str, ...], str] | None:
        return task.environment.packages, f"{task.repo} {task.version}"

    def row(self, task: RepositoryTask) -> tuple[str, str, str]:
        tests = f"{len(task.fail_to_pass)} FAIL_TO_PASS, {len(task.pass_to_pass)} PASS_TO_PASS"
        return f"a patch to {task.repo} at {task.base_commit[:12]}", tests, "gold patch"

    def asked_text(self, task: RepositoryTask) -> str:
        return task.problem_statement

    def artifacts(self, task: RepositoryTask, record: AttemptRecord, label: str) -> dict[str, str]:
        """The patch, and the task's test patch (never shown to the model) once."""
        kept = output_of(record, label) | {f"patch_{label}.diff": record.patch or ""}
        if record.attempt == 0 and record.sample == 0:
            kept["test_patch.diff"] = task.test_patch
        return kept

    def recorded(self, task: RepositoryTask) -> dict[str, dict[str, object]]:
        entry = {"repo": task.repo, "base_commit": task.base_commit, "version": task.version}
        return {"repositories": {task.id: entry}}

    def opening(
        self, task: RepositoryTask, asked: Asked, system: Message, continues: bool
    ) -> list[Message]:
        return workspace_messages(self._view(asked).view, system)

    def respond(
        self,
        pool: JudgePool,
        task: RepositoryTask,
        text: str,
        asked: Asked,
        workspace: dict[str, str] | None = None,
    ) -> tuple[Candidate, Future[Verdict]]:
        """The response's edit applied to the view's excerpts, judged as the patch it
        makes to the whole files."""
        candidate, malformed = self._view(asked).candidate(text, asked.edit_format, workspace)
        candidate = scanned(candidate)
        if malformed is not None:
            return candidate, settled(malformed)
        return candidate, judged(pool, candidate.patch or "", task)

    def repair(
        self, task: RepositoryTask, asked: Asked, system: Message, previous: AttemptRecord
    ) -> list[Message]:
        return repaired(self._view(asked).view, previous)

    def check(
        self, pool: JudgePool, task: RepositoryTask, text: str, asked: Asked
    ) -> Future[Verdict]:
        """`text` is a patch."""
        return judged(pool, text, task)

    def rejudge(
        self,
        pool: JudgePool,
        task: RepositoryTask,
        record: AttemptRecord,
        asked: Asked,
        workspace: dict[str, str] | None,
    ) -> Future[Verdict]:
        """A model's response again through the view; a prediction, which has no
        messages, as the patch it is."""
        if record.messages:
            return self.respond(pool, task, record.raw_response, asked, workspace)[1]
        return self.check(pool, task, record.raw_response, asked)

    def references(
        self, pool: JudgePool, task: RepositoryTask, asked: Asked
    ) -> tuple[Future[Verdict] | None, Future[Verdict] | None]:
        """The gold patch, and the tests at the base commit."""
        start = judged(pool, "", task, baseline=True)
        return judged(pool, task.gold_patch, task), start

    def _view(self, asked: Asked) -> Localized:
        if asked.view is None:
            raise ConfigError(
                "a repository task is shown through a view of its repository: pass --repos DIR"
            )
        return asked.view


REPOSITORY = RepositoryKind()
KINDS.register(REPOSITORY.name, REPOSITORY)


def scanned(candidate: Candidate) -> Candidate:
    """`candidate` with what the static scan finds in the lines its patch adds."""
    return dataclasses.replace(candidate, suspects=tuple(scan_patch(candidate.patch or "")))


def judged(
    pool: JudgePool, patch: str, task: RepositoryTask, baseline: bool = False
) -> Future[Verdict]:
    """The verdict on a patch to a repository task, to come (with `baseline`, an
    empty patch's tests run at the base commit): judged once per task and patch."""
    repositories = pool.repositories

    def work(sandbox: Sandbox, limits: Limits) -> Verdict:
        return judge_repository(patch, task, repositories, sandbox, limits, baseline)

    return pool.judge_with((task.digest, f"repository:{baseline}", patch), work)
