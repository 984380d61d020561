"""The trained judge: the embedded model's hidden states, classifiers trained on
execution labels, `codetrial train-judge` and its settings in `judge-eval`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import codetrial
from codetrial.config import Endpoints
from codetrial.models import create_backend
from codetrial.models.batched import prompt_parts, prompt_tokens
from codetrial.models.embedded import EmbeddedBackend
from codetrial.models.hidden import StateReader
from codetrial.models.weights import QWEN_CODER_05B
from codetrial.prompts import judge_messages
from codetrial.records import AttemptRecord, GenerationOptions, Outcome
from codetrial.selection.evidence import Entry
from codetrial.selection.judging import task_auc
from codetrial.selection.trained import (
    HEADS,
    Head,
    TrainedJudge,
    centred,
    kind,
    out_of_fold,
    pools,
)
from codetrial.tasks import Task
from tests.conftest import cli, fenced

# The four shortest HumanEval tasks: every candidate costs a judge-prompt evaluation.
TASKS = [f"HumanEval/{i}" for i in (23, 34, 45, 53)]
OPTIONS = GenerationOptions(temperature=0.0, seed=1, max_tokens=16, num_ctx=2048, think=False)


def test_hidden_states_are_llama_cpp_s_own_embeddings() -> None:
    """The reader's summary is the mean and the last of the per-token vectors that
    llama-cpp's own embedding path returns for the same tokens; read in parts, a
    prompt reads the same whatever was read before it, and close to read whole (the
    batches' shapes differ, so their float sums do: 2.4 % of the norm here)."""
    from llama_cpp import LLAMA_POOLING_TYPE_NONE, Llama

    text = "def is_even(n):\n    return n % 2 == 0\n"
    reference = Llama(
        model_path=str(QWEN_CODER_05B.prepare()),
        n_ctx=512,
        embedding=True,
        pooling_type=LLAMA_POOLING_TYPE_NONE,
        verbose=False,
    )
    expected = np.asarray(reference.embed(text))
    tokens = reference.tokenize(text.encode())
    cut = len(tokens) // 2
    backend = create_backend("embedded", Endpoints())
    assert isinstance(backend, EmbeddedBackend)
    try:
        llama = backend._load(OPTIONS)
        reader = StateReader(llama, 512)
        state, following = reader.read([tokens])
        halves = reader.read([tokens[:cut], tokens[cut:]])
        reader.read([tokens[:cut], reference.tokenize(b"def is_odd(n):")])
        again = reader.read([tokens[:cut], tokens[cut:]])
        reader.close()
        fresh = StateReader(llama, 512)
        alone = fresh.read([tokens[:cut], tokens[cut:]])
        fresh.close()
    finally:
        backend.close()
    width = reference.n_embd()
    assert state.shape == (2 * width,) and expected.shape[1] == width
    np.testing.assert_allclose(state[:width], expected.mean(axis=0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(state[width:], expected[-1], rtol=1e-4, atol=1e-4)
    assert following.shape == (reference.n_vocab(),)
    for read in (again, alone):
        assert np.array_equal(read[0], halves[0]) and np.array_equal(read[1], halves[1])
    assert np.linalg.norm(halves[0] - state) < 0.05 * np.linalg.norm(state)


def test_the_pass_that_reads_states_gives_the_zero_shot_judge_s_p_yes() -> None:
    """P(yes) read beside the states, in three parts (what every judge prompt shares,
    the task, and the code with the question), is the one the judge's prompt gives
    read in one piece, up to the float rounding of differently shaped batches."""
    task = codetrial.load_tasks("humaneval", task_ids=["HumanEval/23"])[0]
    assert isinstance(task, Task) and task.reference
    backend = create_backend("embedded", Endpoints())
    assert isinstance(backend, EmbeddedBackend)
    try:
        code = task.prompt + task.reference
        llama = backend._load(OPTIONS)
        parts, _ = prompt_parts(llama, judge_messages(task, code, 0, parts=True))
        assert [t for part in parts for t in part] == prompt_tokens(
            llama, judge_messages(task, code, 0)
        )[0]
        assert len(parts) == 3 and "Task:" in llama.detokenize(parts[1]).decode()
        assert llama.detokenize(parts[2]).decode().startswith(code.splitlines()[0])
        _, beside = backend.hidden_state(judge_messages(task, code, 0, parts=True), OPTIONS)
        alone = backend.yes_probability(judge_messages(task, code, 0), OPTIONS)
        assert 0.0 < beside < 1.0
        assert beside == pytest.approx(alone, abs=0.05)
    finally:
        backend.close()


def test_outcomes_fall_into_rankef_s_three_kinds() -> None:
    assert kind(Outcome.PASSED) == "correct" and kind(Outcome.FAILED) == "wrong output"
    for outcome in (Outcome.ERROR, Outcome.TIMEOUT, Outcome.MEMORY, Outcome.SYNTAX_ERROR):
        assert kind(outcome) == "execution error"
    assert kind(Outcome.NO_CODE) is None and kind(Outcome.INFRA_ERROR) is None


def test_a_head_reads_p_correct_from_either_class_order() -> None:
    rows = np.asarray([[2.0], [-2.0]])
    binary = Head(["incorrect", "correct"], 1.0, [0.0], [1.0], [[1.0]], [0.0])
    assert binary.p_correct(rows)[0] > 0.8 and binary.p_correct(rows)[1] < 0.2
    flipped = Head(["correct", "wrong output"], 1.0, [0.0], [1.0], [[1.0]], [0.0])
    assert flipped.p_correct(rows)[0] < 0.2
    three = Head(
        list(HEADS["three-class"]), 1.0, [0.0], [1.0], [[1.0], [0.0], [-1.0]], [0.0, 0.0, 0.0]
    )
    shares = three.p_correct(rows)
    assert shares[0] > 0.8 and shares[1] < 0.05
    only = Head(["wrong output"], 1.0, [0.0], [1.0], [[0.0]], [0.0])
    assert only.p_correct(rows).tolist() == [0.0, 0.0]


def test_centring_takes_each_task_s_mean_out_of_its_candidates() -> None:
    rows = np.asarray([[1.0, 2.0], [3.0, 6.0], [10.0, 10.0]])
    groups = np.asarray([0, 0, 1])
    assert centred(rows, groups).tolist() == [[-1.0, -2.0], [1.0, 2.0], [0.0, 0.0]]
    head = Head(["incorrect", "correct"], 1.0, [0.0, 0.0], [1.0, 1.0], [[1.0, 0.0]], [0.0])
    judge = TrainedJudge("embedded", "", "", {}, {"binary": head}, {}, centred=True)
    assert judge.p_correct("binary", rows, groups)[2] == pytest.approx(0.5)


def test_a_judge_centres_on_one_model_s_candidates_of_a_task_in_one_run(add_task: Task) -> None:
    """As selection does: a pool is a model's candidates of a task, never those of
    another model or run beside them."""
    entries = [
        Entry(
            add_task,
            AttemptRecord(
                model=model,
                task_id=add_task.id,
                attempt=0,
                raw_response="",
                code="",
                outcome=Outcome.FAILED,
            ),
        )
        for model in ("a", "b", "a", "a")
    ]
    assert pools(entries).tolist() == [0, 1, 0, 0]
    assert pools(entries, [0, 0, 0, 1]).tolist() == [0, 1, 0, 2]


def test_centred_a_judge_orders_a_task_s_candidates_where_on_raw_states_it_cannot() -> None:
    """The states carry how easy a task is, in a direction whose within-task wobble is
    noise, and, weaker, what sets a task's right candidates apart. Trained on raw
    states the judge leans on the first; centred, on the second."""
    rng = np.random.default_rng(0)
    tasks, per_task = 60, 8
    groups = np.repeat(np.arange(tasks), per_task)
    easy = np.repeat(rng.normal(size=tasks), per_task)
    apart = rng.normal(size=tasks * per_task)
    correct = (2.0 * easy + apart + 0.5 * rng.normal(size=tasks * per_task)) > 0
    rows = np.column_stack(
        [
            easy + 0.6 * rng.normal(size=tasks * per_task),
            0.3 * apart + 0.3 * rng.normal(size=tasks * per_task),
        ]
    )
    y = correct.astype(int)

    def within(p: np.ndarray) -> float | None:
        by_task = [
            list(zip(p[groups == t], correct[groups == t], strict=True)) for t in range(tasks)
        ]
        return task_auc([pairs for pairs in by_task if len({c for _, c in pairs}) == 2])

    raw = within(out_of_fold(rows, y, groups, "binary"))
    centre = within(out_of_fold(centred(rows, groups), y, groups, "binary"))
    assert raw is not None and centre is not None
    assert centre > 0.75 and centre - raw > 0.08


@pytest.fixture(scope="module")
def labelled_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """HumanEval tasks with three candidates each, one of every kind: the reference
    solution, one that returns nothing (wrong output) and one that raises."""
    folder = tmp_path_factory.mktemp("trained")
    tasks = codetrial.load_tasks("humaneval", task_ids=TASKS)
    script = {}
    for task in tasks:
        assert isinstance(task, Task) and task.reference
        head = task.prompt.rstrip()
        script[task.entry_point] = [
            fenced(task.prompt + task.reference),
            fenced(f"{head}\n    return None\n"),
            fenced(f"{head}\n    raise RuntimeError('not done')\n"),
        ]
    (folder / "script.json").write_text(json.dumps(script))
    run = codetrial.run(
        "humaneval",
        [f"scripted/{folder / 'script.json'}"],
        task_ids=TASKS,
        samples=3,
        tries=1,
        runs_dir=folder / "runs",
        efficiency=False,
    )
    kinds = {kind(r.outcome) for r in run.attempts()}
    assert kinds == {"correct", "wrong output", "execution error"}
    return run.path


def _selected(run: Path, judge_file: Path, strategies: str) -> dict[str, Any]:
    """What `select --json` says of the run's one model, choosing with a saved judge."""
    chose = cli("select", run, "--strategies", strategies, "--trained-judge", judge_file, "--json")
    assert chose.returncode == 0, chose.stderr
    (selection,) = json.loads(chose.stdout)
    assert isinstance(selection, dict)
    return selection


def test_train_judge_learns_execution_labels_and_judge_eval_compares_it(
    labelled_run: Path, tmp_path: Path
) -> None:
    """train-judge measures both heads on tasks they never saw and saves them as JSON;
    judge-eval puts the zero-shot judge, both heads out-of-fold and the saved judge on
    the same candidates. The saved judge, scored on the candidates it was fitted on,
    separates them: its weights are read the way they were trained."""
    judge_file = tmp_path / "judge.json"
    trained = cli("train-judge", labelled_run, "--out", judge_file)
    assert trained.returncode == 0, trained.stderr
    assert "trained three-class, out-of-fold by task" in trained.stdout
    saved = json.loads(judge_file.read_text())
    assert saved["format"] == "codetrial trained judge, version 1"
    assert saved["model_sha256"] == QWEN_CODER_05B.sha256
    assert saved["trained_on"]["candidates"] == 3 * len(TASKS)
    kinds = saved["trained_on"]["kinds"]
    assert set(kinds) == set(HEADS["three-class"]) and kinds["correct"] == len(TASKS)
    assert saved["heads"]["three-class"]["classes"] == list(HEADS["three-class"])
    assert len(saved["heads"]["binary"]["coef"][0]) == 2 * 896
    states = list((labelled_run / "selection").glob("states-embedded-*.npz"))
    assert len(states) == 1
    read_at = states[0].stat().st_mtime_ns

    result = cli("judge-eval", labelled_run, "--shots", "0", "--trained-judge", judge_file)
    assert result.returncode == 0, result.stderr
    settings = {s["setting"]: s for s in json.loads((labelled_run / "judge_eval.json").read_text())}
    assert list(settings) == [
        "0-shot",
        "trained binary, out-of-fold by task",
        "trained three-class, out-of-fold by task",
        "trained binary, judge.json",
        "trained three-class, judge.json",
    ]
    assert {s["candidates"] for s in settings.values()} == {3 * len(TASKS)}
    assert states[0].stat().st_mtime_ns == read_at
    for head in HEADS:
        fitted = settings[f"trained {head}, judge.json"]["thresholds"][0]
        assert fitted["kappa"] > 0.8, head
    html = (labelled_run / "report.html").read_text()
    assert "trained three-class, out-of-fold by task" in html

    selection = _selected(labelled_run, judge_file, "random,trained-judge,trained-judge-0.9")
    assert selection["trained_judge"] == f"{judge_file}, binary head"
    picked = {s["name"]: s["estimate"]["value"] for s in selection["strategies"]}
    assert picked["random"] == pytest.approx(1 / 3)
    assert picked["trained-judge"] > 0.8

    arms = cli(
        "select",
        labelled_run,
        "--strategies",
        "random,trained-judge",
        "--subsets",
        "1,3",
        "--repeats",
        "4",
        "--against",
        labelled_run,
        "--trained-judge",
        judge_file,
    )
    assert arms.returncode == 0, arms.stderr
    (selection,) = json.loads((labelled_run / "selection.json").read_text())
    one, three = selection["subsets"]
    assert selection["baseline"]["estimate"]["value"] == pytest.approx(1 / 3)
    by_name = {s["name"]: s for s in three["strategies"]}
    assert by_name["trained-judge"]["gain_over_baseline"] > 0.4
    states_s = by_name["trained-judge"]["selection_cost"]["seconds"]
    assert states_s > 0
    assert 3 * one["strategies"][1]["selection_cost"]["seconds"] == pytest.approx(states_s)
    assert by_name["random"]["selection_cost"] == {"tokens": 0, "seconds": 0}
    assert {s["estimate"]["value"] for s in one["strategies"]} == {
        one["strategies"][0]["estimate"]["value"]
    }
    assert 'class="subsets"' in (labelled_run / "report.html").read_text()


def test_a_judge_centred_on_each_task_is_trained_on_some_tasks_and_measured_on_another(
    labelled_run: Path, tmp_path: Path
) -> None:
    judge_file = tmp_path / "centred.json"
    some = [option for task in TASKS[:3] for option in ("--task", task)]
    trained = cli("train-judge", labelled_run, "--centre", *some, "--out", judge_file)
    assert trained.returncode == 0, trained.stderr
    saved = json.loads(judge_file.read_text())
    assert saved["format"] == "codetrial trained judge, version 2: centred on each task"
    assert saved["centred"] is True and saved["trained_on"]["tasks"] == 3
    assert saved["trained_on"]["out_of_fold"][0]["setting"] == (
        "trained binary, centred on each task, out-of-fold by task"
    )
    result = cli(
        "judge-eval",
        labelled_run,
        "--shots",
        "0",
        "--no-train",
        "--task",
        TASKS[3],
        "--trained-judge",
        judge_file,
    )
    assert result.returncode == 0, result.stderr
    settings = {s["setting"]: s for s in json.loads((labelled_run / "judge_eval.json").read_text())}
    assert list(settings) == [
        "0-shot",
        "trained binary, centred on each task, centred.json",
        "trained three-class, centred on each task, centred.json",
    ]
    assert {s["candidates"] for s in settings.values()} == {3}
    assert settings["trained binary, centred on each task, centred.json"]["tasks_with_both"] == 1
    one = cli("judge-eval", labelled_run, "--shots", "0", "--centre", "--task", TASKS[3])
    assert one.returncode == 2 and "needs at least two tasks" in " ".join(one.stderr.split())
    both = cli("judge-eval", labelled_run, "--shots", "0", "--centre")
    assert both.returncode == 0, both.stderr
    settings = {s["setting"]: s for s in json.loads((labelled_run / "judge_eval.json").read_text())}
    assert "trained three-class, centred on each task, out-of-fold by task" in settings
    assert "trained three-class, out-of-fold by task" in settings
    selection = _selected(labelled_run, judge_file, "random,trained-judge")
    assert selection["trained_judge"] == f"{judge_file}, binary head, centred on each task"
    unknown = cli("train-judge", labelled_run, "--task", "HumanEval/999", "--out", judge_file)
    assert unknown.returncode == 2 and "has no task HumanEval/999" in unknown.stderr


def test_a_judge_trained_on_another_model_is_refused(labelled_run: Path, tmp_path: Path) -> None:
    judge_file = tmp_path / "judge.json"
    assert cli("train-judge", labelled_run, "--out", judge_file).returncode == 0
    saved = json.loads(judge_file.read_text())
    judge_file.write_text(json.dumps({**saved, "model_sha256": "0" * 64}))
    result = cli(
        "judge-eval", labelled_run, "--shots", "0", "--no-train", "--trained-judge", judge_file
    )
    assert result.returncode == 2 and "train it again" in result.stderr
    judge_file.write_text("{}")
    result = cli("judge-eval", labelled_run, "--shots", "0", "--trained-judge", judge_file)
    assert result.returncode == 2 and "not a trained judge" in result.stderr
    scripted = cli(
        "train-judge",
        labelled_run,
        "--judge",
        f"scripted/{labelled_run.parent.parent / 'script.json'}",
        "--out",
        judge_file,
    )
    assert scripted.returncode == 2 and "shows no hidden states" in scripted.stderr
    for failed in (result, scripted):
        assert "Traceback" not in failed.stderr
