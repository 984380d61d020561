"""Judge a patch to a repository the way SWE-bench's harness does.

On the trusted side: the repository at the task's `base_commit` (from the local clone
`owner__name` under the repositories folder) is written into a fresh folder; the
candidate's patch is applied strictly (`git apply`), else tolerantly (`patch --fuzz=5`),
and one that applies nowhere is `malformed_edit`; the files the test patch touches and
those holding a listed test are restored from `base_commit` (so a patch cannot edit the
tests that judge it), as are any conftest.py files it changed or added; the test patch
is applied; sentinel tests are planted in one of its test files (see
`codetrial.verdict.sentinels`). In the sandbox, with the task's package environment
bound read-only, pytest runs the files of the listed tests (see
`codetrial.sandbox.pytestrun`). The instance is
resolved iff every FAIL_TO_PASS and every PASS_TO_PASS test holds, as SWE-bench grades
it (see `codetrial.records.holds`): an expected failure counts as passing, a skipped
PASS_TO_PASS test as kept, and a test with no result as failing.

Trust level "in-sandbox": pytest shares a process with the patched code, which could in
principle rewrite results before they are sent. The run must come with this run's
nonce on every record and an end record; a listed test that never reports fails; a
run whose sentinels did not report as planted is `tampered`.
"""

from __future__ import annotations

import functools
import io
import os
import secrets
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codetrial.config import Limits
from codetrial.errors import RepositoryError
from codetrial.records import (
    FAIL_TO_PASS,
    PASS_TO_PASS,
    Outcome,
    TestOutcome,
    TestResult,
    Verdict,
    Visibility,
    group_counts,
    holds,
)
from codetrial.sandbox import Sandbox, TestRun
from codetrial.tasks import RepositoryTask
from codetrial.verdict.decide import stopped_or_tampered, usage_of
from codetrial.verdict.sentinels import Sentinel, betrayed, plant
from codetrial.verdict.workspace import signed, trimmed

_GIT_TIMEOUT_S = 120
SHOWN_FAILURES = 50  # failures whose text is kept; every test's result is kept
_APPLY = (
    ("git apply", ["git", "apply", "--verbose"]),
    (
        "patch --fuzz=5",
        ["patch", "--batch", "--fuzz=5", "-p1", "--forward", "--no-backup-if-mismatch", "-i"],
    ),
)


def _git(clone: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(clone), *args], capture_output=True, timeout=_GIT_TIMEOUT_S
    )


@dataclass(frozen=True)
class Repositories:
    """Where a run's repository tasks come from: the folder of clones, and each task's
    package environment (task id -> its folder, bound read-only into the sandbox)."""

    repos: Path
    environments: Mapping[str, Path]

    @property
    def mounts(self) -> tuple[Path, ...]:
        return tuple(sorted(set(self.environments.values())))


def check_repositories(repos: Path, tasks: Sequence[RepositoryTask]) -> None:
    """Every task's clone and commit are there; a RepositoryError names what is not."""
    for task in tasks:
        clone = repos / task.clone_name
        if not clone.is_dir():
            raise RepositoryError(
                f"task {task.id}: no clone of {task.repo} at {clone}; --repos must hold one "
                f"git clone per repository, named owner__name ({task.clone_name})"
            )
        if _git(clone, "cat-file", "-e", f"{task.base_commit}^{{commit}}").returncode != 0:
            raise RepositoryError(
                f"task {task.id}: commit {task.base_commit} is not in {clone}; fetch it "
                "into that clone (codetrial never fetches)"
            )


@functools.lru_cache(maxsize=64)
def _archive(clone: Path, commit: str) -> bytes:
    done = _git(clone, "archive", "--format=tar", commit)
    if done.returncode != 0:
        raise RepositoryError(f"git archive {commit} in {clone}: {done.stderr.decode()[-500:]}")
    return done.stdout


def base_archive(repos: Path, task: RepositoryTask) -> bytes:
    """The task's repository at its base commit, as a tar archive."""
    return _archive(repos / task.clone_name, task.base_commit)


def _write_base(repos: Path, task: RepositoryTask, folder: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(base_archive(repos, task))) as tar:
        tar.extractall(folder, filter="data")


def _apply(folder: Path, patch: str) -> tuple[str | None, str]:
    """How `patch` applied in `folder` (None: it did not), and what the tools said."""
    patch_file = folder.parent / "candidate.patch"
    patch_file.write_text(patch if patch.endswith("\n") else patch + "\n", encoding="utf-8")
    said = []
    for name, command in _APPLY:
        done = subprocess.run(
            [*command, str(patch_file)],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
        )
        if done.returncode == 0:
            return name, ""
        said.append(f"{name}: {(done.stderr or done.stdout).strip()[-600:]}")
    return None, "\n".join(said)


def _restore(folder: Path, base: Path, paths: list[str]) -> None:
    for path in paths:
        target, original = folder / path, base / path
        if target.is_file() or target.is_symlink():
            target.unlink()
        if original.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(original.read_bytes())


def _files(folder: Path) -> tuple[dict[str, str], dict[str, bytes]]:
    """The folder's regular files as text and as bytes (those that are not UTF-8);
    symbolic links are left out: a patch could point one anywhere on this machine."""
    texts: dict[str, str] = {}
    blobs: dict[str, bytes] = {}
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
        for name in names:
            path = Path(root, name)
            if path.is_symlink() or not path.is_file():
                continue
            relative = path.relative_to(folder).as_posix()
            data = path.read_bytes()
            try:
                texts[relative] = data.decode("utf-8")
            except UnicodeDecodeError:
                blobs[relative] = data
    return texts, blobs


def _changed_conftests(folder: Path, base: Path) -> list[str]:
    found = {p.relative_to(folder).as_posix() for p in folder.rglob("conftest.py")}
    found |= {p.relative_to(base).as_posix() for p in base.rglob("conftest.py")}
    return sorted(
        p
        for p in found
        if not (folder / p).is_file()
        or not (base / p).is_file()
        or (folder / p).read_bytes() != (base / p).read_bytes()
    )


def prepare(
    patch: str, task: RepositoryTask, repos: Path, folder: Path, baseline: bool
) -> str | Verdict:
    """Write the repository into `folder` as the tests will see it (base, patch,
    pristine tests, test patch) and say how the patch applied; or the verdict when
    there is nothing to test (an empty patch, unless `baseline` asks for the tests at
    the base commit; a patch that applies nowhere). A RepositoryError when the task's
    own test patch does not apply."""
    base = folder.parent / "base"
    _write_base(repos, task, base)
    _write_base(repos, task, folder)
    if not patch.strip():
        if not baseline:
            return Verdict(Outcome.NO_CODE, gate=None, detail="empty patch")
        patch = ""
    applied, said = _apply(folder, patch) if patch else ("nothing (the base commit)", "")
    if applied is None:
        message = f"The patch could not be applied:\n{said}"
        return Verdict(Outcome.MALFORMED_EDIT, gate=None, detail=message, feedback=message)
    _restore(folder, base, [*task.protected_files, *_changed_conftests(folder, base)])
    if _apply(folder, task.test_patch)[0] is None:
        raise RepositoryError(
            f"task {task.id}: its test_patch does not apply after the candidate's patch "
            f"and the restored test files; check the instance with `codetrial check --references`"
        )
    return applied


_OUTCOMES = frozenset(TestOutcome)


def _seconds(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


@dataclass(frozen=True)
class _Collected:
    """What a run reported: the listed tests' results (a missing one is an error), the
    problems that make the run untrustworthy, the failures' text, and what its
    sentinels reported that they were not planted to."""

    results: list[TestResult]
    problems: list[str]
    failures: list[str]
    betrayals: list[str]


def _collect(
    run: TestRun, nonce: str, task: RepositoryTask, planted: Sequence[Sentinel]
) -> _Collected:
    reported: dict[str, dict[str, Any]] = {}
    uncollected: set[str] = set()
    output: list[str] = []
    records, problems = signed(run, nonce)
    for record in records:
        if isinstance(record.get("test"), str) and record.get("outcome") in _OUTCOMES:
            reported[record["test"]] = record
        elif "collection_error" in record:
            uncollected.add(str(record["collection_error"]))
            output.append(
                f"ERROR collecting {record['collection_error']}\n{record.get('trace', '')}"
            )
    results = []
    groups = [(FAIL_TO_PASS, task.fail_to_pass), (PASS_TO_PASS, task.pass_to_pass)]
    for group, tests in groups:
        for test in tests:
            record = reported.get(test, {"outcome": "error", "exception": "not run"})
            outcome = TestOutcome.PASSED if record.get("xfail") else TestOutcome(record["outcome"])
            result = TestResult(
                name=test,
                visibility=Visibility.HIDDEN,
                outcome=outcome,
                group=group,
                exception_type=str(record.get("exception") or "") or None,
                duration_s=_seconds(record.get("seconds")),
            )
            results.append(result)
            if not holds(result):
                trace = str(record.get("trace", ""))
                output.append(f"{group} {test}: {outcome.value}\n{trace}".strip())
    if len(output) > SHOWN_FAILURES:
        output = [*output[:SHOWN_FAILURES], f"... and {len(output) - SHOWN_FAILURES} more"]
    betrayals = [] if problems else betrayed(planted, reported, uncollected)
    return _Collected(results, problems, output, betrayals)


def judge_repository(
    patch: str,
    task: RepositoryTask,
    repositories: Repositories,
    sandbox: Sandbox,
    limits: Limits,
    baseline: bool = False,
    *,
    guarded: bool = True,
) -> Verdict:
    """The verdict on `patch` (a unified diff against `base_commit`); with `baseline`,
    an empty patch is judged too: the tests run at the base commit. `guarded=False`
    runs as a naive runner would, without sentinels and with a channel repository
    code can rebind: only for the tests that show what the defences stop."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="codetrial-repository-") as scratch:
        folder = Path(scratch, "repository")
        applied = prepare(patch, task, repositories.repos, folder, baseline)
        if isinstance(applied, Verdict):
            return applied
        planted = plant(folder, task.test_files) if guarded else ()
        texts, blobs = _files(folder)
    prepared = time.perf_counter()
    nonce = secrets.token_hex(16)
    pytest = {
        "environment": str(repositories.environments[task.id]),
        "python_path": list(task.environment.python_path),
        "args": list(task.environment.test_args),
        "files": list(task.test_files),
        "guarded": guarded,
    }
    with sandbox.test_run(texts, {}, nonce, limits, blobs=blobs, pytest=pytest) as run:
        collected = _collect(run, nonce, task, planted)
    results, problems, failures = collected.results, collected.problems, collected.failures
    phases = (("patch", prepared - started), ("tests", time.perf_counter() - prepared))
    resolved = not problems and all(holds(r) for r in results)
    counts = group_counts(results)
    tail = "\n".join(
        [
            *problems,
            f"applied with {applied}; "
            + ", ".join(f"{group} {passed}/{total}" for group, (passed, total) in counts.items()),
        ]
    )
    outcome, detail = stopped_or_tampered(run, collected.betrayals, tail) or (
        Outcome.PASSED if resolved else Outcome.FAILED,
        tail,
    )
    # A forged run gets no feedback: what it could say would teach how it was caught.
    shown = outcome not in (Outcome.PASSED, Outcome.TAMPERED)
    feedback = trimmed("\n".join(failures), tail) if shown else None
    return Verdict(
        outcome,
        gate=None,
        tests=tuple(results),
        hidden_output="\n".join([*failures, tail]),
        detail=detail,
        feedback=feedback,
        phases=phases,
        usage=usage_of([run.exit]),
    )
