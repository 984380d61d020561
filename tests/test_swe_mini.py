"""The offline instance set (tests/fixtures/swe-mini) through the whole product: the
repositories rebuilt from the downloaded sdists match the instances' commits, every gold
patch resolves its instance and no base commit does, SWE-bench's counts come out of a
predictions file, and `codetrial run --suite swe` retrieves, edits, judges and repairs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codetrial.edits import EDIT_FORMATS
from codetrial.localize import localize
from codetrial.records import Outcome
from codetrial.tasks import RepositoryTask, load_suite
from codetrial.verdict.workspace import changes
from tests.conftest import CLI_ENV, CODETRIAL, FIXTURES, SWE_DOWNLOADS, SWE_WHEELS

SET = FIXTURES / "swe-mini"
INSTANCES = SET / "instances.jsonl"


@dataclass(frozen=True)
class Setup:
    repos: Path
    env: dict[str, str]
    instances: dict[str, dict[str, Any]]

    def cli(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CODETRIAL, *map(str, args)],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=900,
        )

    def swe(self, *args: str | Path) -> list[str | Path]:
        return [*args, "--suite", "swe", "--data", INSTANCES, "--repos", self.repos]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    root = tmp_path_factory.mktemp("swe-mini")
    sdists = SWE_DOWNLOADS / "sdists"
    assert sdists.is_dir(), f"{sdists} is missing: `make test` downloads it"
    build = [sys.executable, SET / "build.py", "--sdists", sdists, "--out", root / "repos"]
    subprocess.run([*map(str, build), "--repos-only"], check=True, capture_output=True)
    env = {**CLI_ENV, "CODETRIAL_CACHE": str(root / "cache")}
    built = subprocess.run(
        [CODETRIAL, "envs", "--suite", str(INSTANCES), "--wheels", str(SWE_WHEELS)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "pytest==8.3.4" in built.stdout
    instances = {}
    for line in INSTANCES.read_text().splitlines():
        record = json.loads(line)
        instances[record["instance_id"]] = record
    return Setup(root / "repos", env, instances)


def results(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "results.json").read_text())
    return data


def test_every_gold_patch_resolves_and_no_base_commit_does(setup: Setup) -> None:
    checked = setup.cli(*setup.swe("check", "--references", "--workers", "2"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rows = [line for line in checked.stdout.splitlines() if "__" in line]
    assert len(rows) == len(setup.instances) == 15
    assert all("passed" in row and "failed" in row for row in rows)


def _breaking(setup: Setup, instance: dict[str, Any], tmp_path: Path) -> str:
    """The gold fix, and a change that breaks toolz's `frequencies`, which a
    PASS_TO_PASS test checks: written in a checkout, as a model's patch would be."""
    work = tmp_path / "work"
    clone = setup.repos / "pytoolz__toolz"
    subprocess.run(
        ["git", "-C", str(clone), "worktree", "add", "-q", str(work), instance["base_commit"]],
        check=True,
    )
    subprocess.run(
        ["git", "-C", str(work), "apply"], input=instance["patch"], text=True, check=True
    )
    with (work / "toolz" / "itertoolz.py").open("a") as source:
        source.write("\n\ndef frequencies(seq):\n    return {}\n")
    diff = subprocess.run(["git", "-C", str(work), "diff"], capture_output=True, text=True)
    subprocess.run(
        ["git", "-C", str(clone), "worktree", "remove", "--force", str(work)], check=True
    )
    return diff.stdout


def test_a_predictions_file_gets_swe_bench_s_counts(setup: Setup, tmp_path: Path) -> None:
    toolz, boltons = setup.instances["pytoolz__toolz-1"], setup.instances["mahmoud__boltons-1"]
    lines = [
        {"instance_id": i, "model_name_or_path": "gold", "model_patch": r["patch"]}
        for i, r in setup.instances.items()
    ]
    lines += [
        {"instance_id": i, "model_name_or_path": "empty", "model_patch": None}
        for i in setup.instances
    ]
    lines += [
        {
            "instance_id": toolz["instance_id"],
            "model_name_or_path": "wrong",
            "model_patch": _breaking(setup, toolz, tmp_path),
        },
        {
            "instance_id": boltons["instance_id"],
            "model_name_or_path": "wrong",
            "model_patch": toolz["patch"].replace("toolz/itertoolz.py", "boltons/mathutils.py"),
        },
        {
            "instance_id": toolz["instance_id"],
            "model_name_or_path": "sneaky",
            "model_patch": toolz["patch"] + SNEAKY_CONFTEST,
        },
    ]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    runs = tmp_path / "runs"
    judged = setup.cli(*setup.swe("evaluate", predictions, "--runs-dir", runs, "--workers", "2"))
    assert judged.returncode == 0, judged.stdout + judged.stderr
    (run_dir,) = runs.iterdir()
    data = results(run_dir)
    counts = {r["model"]: r for r in data["repositories"]}
    keys = ("total", "submitted", "completed", "resolved", "unresolved", "empty_patch", "error")
    assert [counts["gold"][k] for k in keys] == [15, 15, 15, 15, 0, 0, 0]
    assert counts["gold"]["resolved_rate"]["value"] == 1.0
    assert data["edits"] == []
    assert [counts["empty"][k] for k in keys] == [15, 15, 0, 0, 0, 15, 0]
    assert [counts["wrong"][k] for k in keys] == [15, 2, 1, 0, 1, 0, 1]
    # the conftest.py a patch adds is taken away before its tests run, and is a suspect
    assert [counts["sneaky"][k] for k in keys] == [15, 1, 1, 1, 0, 0, 0]
    summary = {row["model"]: row for row in data["summary"]}
    assert [summary[m]["suspect"] for m in ("gold", "empty", "wrong", "sneaky")] == [0, 0, 0, 1]
    assert [(s["model"], s["path"], s["line"], s["rule"]) for s in data["suspects"]] == [
        ("sneaky", "conftest.py", 1, "S001")
    ]
    (broken,) = [i for i in counts["wrong"]["instances"] if i["task_id"] == "pytoolz__toolz-1"]
    p2p = len(json.loads(toolz["PASS_TO_PASS"]))
    assert broken["fail_to_pass"] == [1, 1] and broken["pass_to_pass"] == [p2p - 1, p2p]
    manifest = data["manifest"]
    (environment,) = manifest["environments"].values()
    assert environment["installed"]["pytest"] == "8.3.4"
    assert manifest["repositories"]["pytoolz__toolz-1"]["base_commit"] == toolz["base_commit"]
    stored = run_dir / "generated_code" / "wrong" / "pytoolz__toolz-1"
    assert "def frequencies(seq):" in (stored / "patch_first.diff").read_text()
    assert (stored / "test_patch.diff").read_text() == toolz["test_patch"]
    assert "Repository tasks, as SWE-bench" in judged.stdout
    again = setup.cli("rerun", run_dir)
    assert again.returncode == 0, again.stdout + again.stderr


SNEAKY_CONFTEST = """diff --git a/conftest.py b/conftest.py
new file mode 100644
--- /dev/null
+++ b/conftest.py
@@ -0,0 +1,2 @@
+def pytest_runtest_makereport(item, call):
+    pass
"""


def _hunk(patch: str) -> tuple[str, str, str]:
    """The file, the lines before and after of a one-hunk gold patch."""
    path = re.search(r"^\+\+\+ b/(\S+)", patch, re.MULTILINE)
    assert path is not None
    body = patch.split("\n@@", 1)[1].split("\n", 1)[1].splitlines()
    before = [line[1:] for line in body if line[:1] in (" ", "-")]
    after = [line[1:] for line in body if line[:1] in (" ", "+")]
    return path.group(1), "\n".join(before) + "\n", "\n".join(after) + "\n"


def _search_replace(path: str, search: str, replace: str) -> str:
    return f"{path}\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


def test_run_retrieves_edits_judges_and_repairs(setup: Setup, tmp_path: Path) -> None:
    chosen = ["pytoolz__toolz-2", "more-itertools__more-itertools-5", "mahmoud__boltons-3"]
    script: dict[str, list[str]] = {}
    for instance_id in chosen:  # the repairs, keyed on a failing test, which try 1 shows
        record = setup.instances[instance_id]
        path, before, after = _hunk(record["patch"])
        looks_busy = before.replace("\n", "  # checked\n", 1)
        script[json.loads(record["FAIL_TO_PASS"])[0]] = [_search_replace(path, looks_busy, after)]
    for instance_id in chosen:  # the first tries, keyed on the issue: a change that fixes nothing
        record = setup.instances[instance_id]
        path, before, _ = _hunk(record["patch"])
        looks_busy = before.replace("\n", "  # checked\n", 1)
        script[record["problem_statement"].strip()[:60]] = [
            _search_replace(path, before, looks_busy)
        ]
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script))
    runs = tmp_path / "runs"
    tasks = [arg for instance_id in chosen for arg in ("--task", instance_id)]
    ran = setup.cli(
        *setup.swe(
            "run",
            "--model",
            f"scripted/{script_file}",
            "--edit-format",
            "diff",
            "--runs-dir",
            runs,
            *tasks,
        )
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (run_dir,) = runs.iterdir()
    data = results(run_dir)
    outcomes = {t["task_id"]: [a["outcome"] for a in t["attempts"]] for t in data["tasks"]}
    assert outcomes == {instance_id: ["failed", "passed"] for instance_id in chosen}
    (summary,) = data["repositories"]
    assert summary["resolved"] == 3 and summary["total"] == 3
    (edits,) = data["edits"]
    assert edits["edit_format"] == "diff" and edits["well_formed_cases"] == 3
    manifest = data["manifest"]
    assert manifest["config"]["edit_format"] == "diff"
    assert "repository_issue.md" in manifest["prompt_sha256"]
    for instance_id in chosen:
        record = setup.instances[instance_id]
        gold_path = _hunk(record["patch"])[0]
        assert gold_path in manifest["repositories"][instance_id]["shown"]
        attempts = next(t for t in data["tasks"] if t["task_id"] == instance_id)["attempts"]
        prompt = "\n".join(m["content"] for m in attempts[1]["messages"])
        assert record["problem_statement"].strip() in prompt
        assert "not shown: keep this line as it is" in prompt
        assert record["test_patch"] not in prompt and record["patch"] not in prompt
        assert json.loads(record["FAIL_TO_PASS"])[0] in attempts[1]["messages"][-1]["content"]
        assert attempts[1]["patch"].startswith(f"--- a/{gold_path}\n+++ b/{gold_path}\n")
    again = setup.cli("rerun", run_dir)
    assert again.returncode == 0, again.stdout + again.stderr


def test_repository_suites_say_what_they_need(setup: Setup, tmp_path: Path) -> None:
    no_repos = setup.cli("run", "--model", "scripted", "--suite", "swe", "--data", INSTANCES)
    assert no_repos.returncode == 2 and "--repos DIR" in no_repos.stderr
    no_data = setup.cli("run", "--model", "scripted", "--suite", "swe")
    assert no_data.returncode == 3 and "needs --data PATH" in no_data.stderr
    fresh = {**setup.env, "CODETRIAL_CACHE": str(tmp_path / "empty-cache")}
    unbuilt = subprocess.run(
        [CODETRIAL, *map(str, setup.swe("run", "--model", "scripted"))],
        capture_output=True,
        text=True,
        env=fresh,
    )
    assert unbuilt.returncode == 9 and "codetrial envs" in unbuilt.stderr
    gate = setup.cli(*setup.swe("run", "--model", "scripted", "--gate", "stdlib"))
    assert gate.returncode == 2 and "--gate off" in gate.stderr
    listed = setup.cli("tasks", "--suite", "swe", "--data", INSTANCES)
    assert listed.returncode == 0 and "pytoolz__toolz-1" in listed.stdout
    stray = tmp_path / "predictions.jsonl"
    stray.write_text('{"instance_id": "nope", "model_name_or_path": "m", "model_patch": ""}\n')
    unknown = setup.cli(*setup.swe("evaluate", stray, "--runs-dir", tmp_path / "runs"))
    assert unknown.returncode == 3 and "names no instance" in unknown.stderr
    wrong_suite = setup.cli("evaluate", stray, "--suite", "contracts10", "--runs-dir", tmp_path)
    assert wrong_suite.returncode == 2 and "takes repository tasks" in wrong_suite.stderr
    functions = setup.cli("envs", "--suite", "contracts10")
    assert functions.returncode == 2 and "--suite swe" in functions.stderr
    assert "Traceback" not in no_repos.stderr + unbuilt.stderr + unknown.stderr


def test_an_edit_to_an_excerpt_becomes_a_patch_of_the_whole_file(setup: Setup) -> None:
    """The model sees excerpts with marker lines for what is cut; its edit is put back
    together with the lines behind them, and one that touches a marker is malformed."""
    (task,) = load_suite("swe", ["more-itertools__more-itertools-5"], INSTANCES)
    assert isinstance(task, RepositoryTask)
    view = localize(task, setup.repos, num_ctx=8192, max_tokens=2048)
    path, before, after = _hunk(task.gold_patch)
    shown = dict(view.view.files)[path]
    assert before in shown and "not shown: keep this line as it is" in shown
    assert len(shown) < len(view.originals[path])
    diff = EDIT_FORMATS.get("diff")
    candidate, malformed = view.candidate(_search_replace(path, before, after), diff, None)
    assert malformed is None and candidate.patch is not None and candidate.code is None
    fixed = view.originals[path].replace(before, after)
    assert candidate.patch == changes({path: view.originals[path]}, {path: fixed})
    marker = next(line for line in shown.splitlines() if "not shown" in line)
    dropped = _search_replace(path, marker + "\n", "")
    candidate, malformed = view.candidate(dropped, diff, None)
    assert malformed is not None and malformed.outcome is Outcome.MALFORMED_EDIT
    assert "stands for lines not shown" in malformed.detail and candidate.patch == ""


def test_the_context_must_hold_every_try_of_a_repository_task(setup: Setup) -> None:
    """A later try's prompt holds the files again, the earlier answer and its test
    output: the excerpts are cut so that it fits, and a context too small is refused."""
    (task,) = load_suite("swe", ["pytoolz__toolz-1"], INSTANCES)
    assert isinstance(task, RepositoryTask)
    one = localize(task, setup.repos, num_ctx=8192, max_tokens=2048, tries=1)
    two = localize(task, setup.repos, num_ctx=8192, max_tokens=2048, tries=2)
    shown = [sum(len(text) for _, text in view.view.files) for view in (one, two)]
    assert 0 < shown[1] < shown[0] <= (8192 - 2048 - 1024) * 3
    assert shown[1] <= (8192 - 2 * 2048 - 1024) * 3 - 4000
    small = setup.cli(
        *setup.swe(
            "run",
            "--model",
            "scripted",
            "--num-ctx",
            "4096",
            "--max-tokens",
            "1536",
            "--task",
            task.id,
        )
    )
    assert small.returncode == 2 and "raise --num-ctx" in small.stderr
