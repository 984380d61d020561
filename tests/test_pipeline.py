"""The real trial loop, end to end, on the scripted backend and the real sandbox."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from codetrial.config import Limits, RunConfig
from codetrial.gate import get_profile
from codetrial.models.scripted import ScriptedBackend
from codetrial.pipeline import Trial, run_trial
from codetrial.prompts import system_message, template_hashes
from codetrial.records import Generation, GenerationOptions, Message, Outcome, Visibility
from codetrial.report import summarize, write_reports
from codetrial.report.summary import pass_at_k_rows
from codetrial.sandbox import SandboxPolicy
from codetrial.store import RunStore, new_manifest
from codetrial.tasks import Task
from codetrial.verdict.pool import JudgePool
from tests.conftest import FIXTURES, fenced


def _script(tasks: dict[str, Task]) -> dict[str, list[str]]:
    def ref(task_id: str) -> str:
        reference = tasks[task_id].reference
        assert reference is not None
        return fenced(reference)

    mutating = (FIXTURES / "wrong" / "merge_intervals" / "mutates_input.py").read_text()
    wrong_two_sum = (FIXTURES / "wrong" / "two_sum" / "same_element_twice.py").read_text()
    counter = "from collections import Counter\n\ndef top_k_frequent(nums, k):\n    return []\n"
    loop = "def run_length_encode(text):\n    while True:\n        pass\n"
    script = {
        "palindrome": [ref("palindrome")],
        "merge_intervals": [fenced(mutating), ref("merge_intervals")],
        "two_sum": [fenced(wrong_two_sum), ref("two_sum")],
        "top_k_frequent": [fenced(counter), ref("top_k_frequent")],
        "balanced_brackets": ["I am not able to write that.", ref("balanced_brackets")],
        "rotate_matrix": [""],
        "moving_average": [ref("moving_average") + "\n" + "blah " * 200_000],
        "longest_common_prefix": [
            "```python\ndef longest_common_prefix(words)\n    return ''\n```"
        ],
        "run_length_encoding": [fenced(loop), ref("run_length_encoding")],
        "shortest_path_grid": [ref("shortest_path_grid")],
    }
    return {f"def {tasks[t].entry_point}(": responses for t, responses in script.items()}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory, contracts10: dict[str, Task]):  # type: ignore[no-untyped-def]
    config = RunConfig(models=["scripted"], limits=Limits(timeout_s=10, cpu_s=2))
    backend = ScriptedBackend(_script(contracts10))
    profile = get_profile(config.gate_profile)
    pool = JudgePool(2, SandboxPolicy.of(config))
    tasks = list(contracts10.values())
    system = system_message(profile.allowed, profile.forbidden)
    manifest = new_manifest(
        "r1",
        config,
        tasks,
        backends={"scripted": backend.conditions()},
        prompts=template_hashes(),
        system_prompt=system.content,
        isolation=pool.isolation,
    )
    store = RunStore.create(tmp_path_factory.mktemp("runs") / "r1", manifest)
    results = run_trial(Trial(config, profile, pool, store), tasks, [backend], lambda r: None)
    write_reports(store)
    yield store, results, backend
    store.close()
    pool.close()


def test_seed_table(finished_run) -> None:  # type: ignore[no-untyped-def]
    _, results, _ = finished_run
    (row,) = summarize(results, ["scripted"])
    assert (row.tasks, row.first_pass, row.after_repair) == (10, 3, 7)
    assert (row.repair_successes, row.repair_tries, row.gate_rejects) == (4, 6, 1)
    first = {r.task_id: r.first.outcome for r in results}
    assert first == {
        "palindrome": Outcome.PASSED,
        "merge_intervals": Outcome.FAILED,
        "two_sum": Outcome.FAILED,
        "top_k_frequent": Outcome.REJECTED,
        "balanced_brackets": Outcome.NO_CODE,
        "rotate_matrix": Outcome.NO_CODE,
        "moving_average": Outcome.PASSED,
        "longest_common_prefix": Outcome.SYNTAX_ERROR,
        "run_length_encoding": Outcome.TIMEOUT,
        "shortest_path_grid": Outcome.PASSED,
    }


def test_hidden_only_failure_is_not_repaired(finished_run) -> None:  # type: ignore[no-untyped-def]
    _, results, _ = finished_run
    merge = next(r for r in results if r.task_id == "merge_intervals")
    assert merge.repairs == ()
    assert [t.name for t in merge.first.tests if t.outcome == "failed"] == [
        "test_does_not_mutate_input",
        "test_returns_new_inner_lists",
    ]


def test_no_prompt_ever_shows_hidden_tests(finished_run, contracts10) -> None:  # type: ignore[no-untyped-def]
    _, _, backend = finished_run
    prompts = "\n".join(m.content for request in backend.requests for m in request)
    assert "Validation feedback" in prompts
    for task in contracts10.values():
        for test in task.tests_of(Visibility.HIDDEN):
            for name in re.findall(r"def (test_\w+)", test.source):
                assert name not in prompts, (task.id, name)


def test_repair_prompt_carries_spec_code_and_visible_feedback(finished_run) -> None:  # type: ignore[no-untyped-def]
    _, results, _ = finished_run
    two_sum = next(r for r in results if r.task_id == "two_sum")
    prompt = two_sum.repairs[0].messages[-1]["content"]
    assert "def two_sum(nums: list[int], target: int)" in prompt
    assert "previous implementation failed validation" in prompt.lower()
    assert two_sum.first.code is not None and two_sum.first.code.strip() in prompt
    assert "test_visible.py" in prompt


def test_store_and_artifacts(finished_run) -> None:  # type: ignore[no-untyped-def]
    store, _, _ = finished_run
    run_dir: Path = store.run_dir
    db = sqlite3.connect(run_dir / "trial.sqlite")
    assert db.execute("SELECT count(*) FROM attempts").fetchone() == (16,)
    folder = run_dir / "generated_code" / "scripted" / "two_sum"
    for name in (
        "candidate_first.py",
        "candidate_repaired.py",
        "test_candidate.py",
        "test_hidden.py",
        "response_first.txt",
        "test_output_first.txt",
    ):
        assert (folder / name).is_file(), name
    assert not (
        run_dir / "generated_code" / "scripted" / "rotate_matrix" / "candidate_first.py"
    ).exists()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["temperature"] == 0.0 and manifest["config"]["seed"] == 42
    assert set(manifest["prompt_sha256"]) == {"system.md", "task.md", "repair.md"}
    assert manifest["isolation"].startswith("bwrap+")
    assert len(manifest["task_sha256"]) == 10
    results = json.loads((run_dir / "results.json").read_text())
    assert results["summary"][0]["after_repair"] == 7


def test_backend_failure_is_infra_not_model(tmp_path: Path, contracts10) -> None:  # type: ignore[no-untyped-def]
    config = RunConfig(models=["scripted"])
    backend = ScriptedBackend({"nothing matches this": ["x"]})
    profile = get_profile("builtins-only")
    task = contracts10["palindrome"]
    manifest = new_manifest(
        "r2", config, [task], backends={}, prompts={}, system_prompt="", isolation="bwrap"
    )
    store = RunStore.create(tmp_path / "r2", manifest)
    pool = JudgePool(1, SandboxPolicy.of(config))
    (result,) = run_trial(Trial(config, profile, pool, store), [task], [backend], lambda r: None)
    pool.close()
    assert result.first.outcome is Outcome.INFRA_ERROR
    assert result.repairs == ()
    (row,) = summarize([result], ["scripted"])
    assert (row.first_pass, row.infra_errors) == (0, 1)


def test_report_is_self_contained_and_linked(finished_run) -> None:  # type: ignore[no-untyped-def]
    store, _, _ = finished_run
    html = (store.run_dir / "report.html").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<svg" in html
    links = set(re.findall(r'href="#(c-[^"]+)"', html))
    ids = set(re.findall(r'id="([^"]+)"', html))
    assert len(links) == 10 and links <= ids
    assert "diff: first → repaired" in html
    assert "Blocked AST node: ImportFrom (collections)" in html


def test_samples_give_pass_at_k_with_intervals(tmp_path: Path, contracts10) -> None:  # type: ignore[no-untyped-def]
    tasks = [contracts10["palindrome"], contracts10["two_sum"]]
    right = {t.entry_point: fenced(t.reference or "") for t in tasks}
    script = {
        "def is_palindrome(": [right["is_palindrome"], "no code", right["is_palindrome"]],
        "def two_sum(": ["```python\ndef two_sum(nums, target)\n```"] * 3,
    }
    config = RunConfig(models=["scripted"], samples=3, repair_attempts=0, workers=2)
    backend = ScriptedBackend(script)
    manifest = new_manifest(
        "r3", config, tasks, backends={}, prompts={}, system_prompt="", isolation="bwrap"
    )
    store = RunStore.create(tmp_path / "r3", manifest)
    pool = JudgePool(config.workers, SandboxPolicy.of(config))
    results = run_trial(
        Trial(config, get_profile("builtins-only"), pool, store), tasks, [backend], lambda r: None
    )
    pool.close()
    assert len(results) == 6
    assert [o.seed for o in (config.options(i) for i in range(3))] == [42, 43, 44]
    (row,) = pass_at_k_rows(results, ["scripted"], [t.id for t in tasks])
    assert row.samples == 3 and sorted(row.first) == [1, 2, 3]
    assert row.first[1] is not None and row.first[1].value == pytest.approx((2 / 3) / 2)
    assert row.first[3] is not None and row.first[3].value == pytest.approx(0.5)


def test_an_interrupt_during_a_generation_stores_what_was_judged(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    """The model writes the next candidate while the last is judged: an interrupt then
    still stores the verdicts that came in, so a resumed run need not draw them again."""
    tasks = [contracts10["palindrome"], contracts10["two_sum"]]
    pool = JudgePool(1, SandboxPolicy(Limits()))

    class Interrupted(ScriptedBackend):
        def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
            if "two_sum" in messages[-1].content:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not all(
                    f.done() for f in pool._verdicts.values()
                ):
                    time.sleep(0.01)
                time.sleep(0.2)
                raise KeyboardInterrupt
            return super().generate(messages, options)

    backend = Interrupted({"def is_palindrome(": [fenced(tasks[0].reference or "")]})
    config = RunConfig(models=["scripted"])
    profile = get_profile(config.gate_profile)
    manifest = new_manifest(
        "r3", config, tasks, backends={}, prompts={}, system_prompt="", isolation=pool.isolation
    )
    store = RunStore.create(tmp_path / "r3", manifest)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_trial(Trial(config, profile, pool, store), tasks, [backend], lambda r: None)
        (stored,) = store.attempts("scripted")
    finally:
        store.close()
        pool.close()
    assert (stored.task_id, stored.outcome) == ("palindrome", Outcome.PASSED)


def test_execution_time_ends_when_the_verdict_comes_not_when_the_loop_looks(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    """The model writes the next candidate while the last is judged: a slow generation
    after a verdict came must not count as that candidate's execution time."""
    tasks = [contracts10["palindrome"], contracts10["two_sum"]]
    pool = JudgePool(1, SandboxPolicy(Limits()))
    slow_s = 2.0

    class Slow(ScriptedBackend):
        def generate(self, messages: Sequence[Message], options: GenerationOptions) -> Generation:
            if "two_sum" in messages[-1].content:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not all(
                    f.done() for f in pool._verdicts.values()
                ):
                    time.sleep(0.01)
                time.sleep(slow_s)
            return super().generate(messages, options)

    references = {f"def {t.entry_point}(": [fenced(t.reference or "")] for t in tasks}
    backend = Slow(references)
    config = RunConfig(models=["scripted"])
    profile = get_profile(config.gate_profile)
    manifest = new_manifest(
        "r4", config, tasks, backends={}, prompts={}, system_prompt="", isolation=pool.isolation
    )
    store = RunStore.create(tmp_path / "r4", manifest)
    try:
        run_trial(Trial(config, profile, pool, store), tasks, [backend], lambda r: None)
        stored = {r.task_id: r for r in store.attempts("scripted")}
    finally:
        store.close()
        pool.close()
    judged = stored["palindrome"]
    assert judged.outcome is Outcome.PASSED
    assert 0 < judged.execution_s < slow_s / 2
