"""Repository tasks: an issue, a repository at a commit, and the tests that judge a fix.

Read as SWE-bench ships them, one JSON object a line: `instance_id`, `repo`
("owner/name"), `base_commit`, `problem_statement`, `patch` (the gold fix, never shown
to a model), `test_patch`, `FAIL_TO_PASS` and `PASS_TO_PASS` (pytest node ids, as JSON
lists or, as SWE-bench's dataset stores them, JSON-encoded strings of lists), and
optionally `hints_text`, `version`, `environment_setup_commit`.

The repository itself comes from a local clone named `owner__name` in the folder the
user points at (`--repos DIR`), never from the network. What its tests need besides
the repository is declared per (repo, version) in `environments.toml` beside the
instances file:

    ["pytoolz/toolz"."1.0.0"]
    packages = ["pytest==8.3.4"]   # installed once, from wheels, into an environment
    python_path = ["."]            # folders of the repository put on sys.path
    test_args = []                 # extra pytest arguments
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from codetrial.errors import TaskFormatError
from codetrial.tasks.jsonl import read_jsonl

ENVIRONMENTS_FILE = "environments.toml"
_REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch")
_DIFF_PATHS = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


@dataclass(frozen=True)
class EnvironmentSpec:
    """What a repository's tests need besides the repository, and how pytest runs them."""

    packages: tuple[str, ...]
    python_path: tuple[str, ...] = (".",)
    test_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class RepositoryTask:
    """One instance. `gold_patch` is the reference fix; `fail_to_pass` and
    `pass_to_pass` are the pytest node ids that must pass after a fix."""

    id: str
    suite: str
    repo: str
    base_commit: str
    problem_statement: str
    gold_patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    environment: EnvironmentSpec
    version: str = ""
    hints: str = ""
    environment_setup_commit: str = ""
    policy: str = "off"
    trust: ClassVar[str] = "in-sandbox"
    kind: ClassVar[str] = "repository"

    @property
    def digest(self) -> str:
        """Changes whenever the issue, the commit, the tests or their environment do."""
        fields = [
            self.repo,
            self.base_commit,
            self.problem_statement,
            self.hints,
            self.test_patch,
            self.fail_to_pass,
            self.pass_to_pass,
            self.environment,
        ]
        return hashlib.sha256(repr(fields).encode()).hexdigest()

    @property
    def clone_name(self) -> str:
        """The folder of the repository's clone under --repos: SWE-bench's owner__name."""
        return self.repo.replace("/", "__")

    @property
    def listed_tests(self) -> tuple[str, ...]:
        return self.fail_to_pass + self.pass_to_pass

    @property
    def test_files(self) -> tuple[str, ...]:
        """The files that hold the listed tests: what pytest is asked to run."""
        return tuple(sorted({test.split("::", 1)[0] for test in self.listed_tests}))

    @property
    def protected_files(self) -> tuple[str, ...]:
        """Files a candidate's patch may not change: those the test patch touches and
        those holding a listed test. They are restored before the test patch applies."""
        return tuple(sorted({*patched_files(self.test_patch), *self.test_files}))


def patched_files(patch: str) -> list[str]:
    """The paths a git-style patch touches, old and new names both."""
    return sorted({path for pair in _DIFF_PATHS.findall(patch) for path in pair})


def _tests(record: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = record.get(key, "[]")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise TaskFormatError(f"{where}: field {key!r} is not a JSON list ({exc})") from exc
    if not isinstance(value, list) or not all(isinstance(t, str) and t for t in value):
        raise TaskFormatError(f"{where}: field {key!r} must list pytest node ids")
    return tuple(value)


def _strings(
    table: dict[str, Any], key: str, default: tuple[str, ...], where: str
) -> tuple[str, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskFormatError(f"{where}: {key!r} must be a list of strings")
    return tuple(value)


def read_environments(path: Path) -> dict[tuple[str, str], EnvironmentSpec]:
    """(repo, version) -> its environment, from an environments.toml."""
    try:
        tables = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TaskFormatError(f"{path}: cannot be read as TOML ({exc})") from exc
    specs = {}
    for repo, versions in tables.items():
        for version, table in versions.items() if isinstance(versions, dict) else ():
            where = f"{path}: [{repo!r}.{version!r}]"
            if not isinstance(table, dict):
                raise TaskFormatError(f"{where} must be a table")
            specs[repo, version] = EnvironmentSpec(
                packages=_strings(table, "packages", (), where),
                python_path=_strings(table, "python_path", (".",), where),
                test_args=_strings(table, "test_args", (), where),
            )
    return specs


def _task(
    record: dict[str, Any], where: str, suite: str, specs: dict[tuple[str, str], EnvironmentSpec]
) -> RepositoryTask:
    for key in _REQUIRED:
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise TaskFormatError(f"{where}: field {key!r} must be a non-empty string")
    repo, version = record["repo"], str(record.get("version") or "")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise TaskFormatError(f"{where}: field 'repo' must be owner/name, not {repo!r}")
    spec = specs.get((repo, version))
    if spec is None:
        raise TaskFormatError(
            f"{where}: no environment for {repo} {version or '(no version)'}: add a table "
            f'["{repo}"."{version}"] with packages = [...] to {ENVIRONMENTS_FILE} beside '
            "the instances file"
        )
    task = RepositoryTask(
        id=record["instance_id"],
        suite=suite,
        repo=repo,
        base_commit=record["base_commit"],
        problem_statement=record["problem_statement"],
        gold_patch=record["patch"],
        test_patch=record["test_patch"],
        fail_to_pass=_tests(record, "FAIL_TO_PASS", where),
        pass_to_pass=_tests(record, "PASS_TO_PASS", where),
        environment=spec,
        version=version,
        hints=str(record.get("hints_text") or ""),
        environment_setup_commit=str(record.get("environment_setup_commit") or ""),
    )
    if not task.fail_to_pass:
        raise TaskFormatError(f"{where}: FAIL_TO_PASS is empty: no test shows the issue")
    return task


def is_swe_record(record: dict[str, Any]) -> bool:
    """Whether a JSONL file's first object reads as a SWE-bench instance."""
    return "instance_id" in record and "base_commit" in record


def load_swe(path: Path, suite: str = "swe") -> list[RepositoryTask]:
    """The instances in a SWE-bench JSONL file, with their environments."""
    environments = path.parent / ENVIRONMENTS_FILE
    if not environments.is_file():
        raise TaskFormatError(
            f"{path}: no {ENVIRONMENTS_FILE} beside it, saying what each repository's tests "
            'need; write one with a table per repo and version: ["owner/name"."1.0"] '
            'packages = ["pytest==8.3.4"]'
        )
    specs = read_environments(environments)
    tasks = [_task(record, where, suite, specs) for where, record in read_jsonl(path)]
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise TaskFormatError(f"{path}: an instance_id appears twice")
    if not tasks:
        raise TaskFormatError(f"{path}: no instances in this file")
    return tasks
