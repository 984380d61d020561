"""A judge trained on execution labels: the judge model reads the task and the
candidate's code in the zero-shot judge prompt, and a classifier reads the model's
hidden states over that prompt (see `codetrial.models.hidden`). Nothing runs at
selection time.

Two heads are trained on the same states: a binary one (did the tests pass?) and
RankEF's three kinds of execution feedback (correct, execution error, wrong output),
whose probability of "correct" is read the same way. Each is a standardised
logistic regression whose regularisation is chosen by cross-validation inside its
training tasks; it is measured out-of-fold, split by task, and saved as JSON.

A judge can be trained centred on each task: every candidate's states less the mean
of its task's candidates (no labels needed: at selection time a task's candidates
are all at hand). Trained on raw states, a judge can learn which tasks are easy,
which orders candidates across tasks but not among one task's, where selection
chooses; centred, it sees only what sets a task's candidates apart.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from codetrial.errors import ConfigError
from codetrial.extras import require
from codetrial.models.base import Backend, ReadsStates
from codetrial.prompts import judge_messages, template_hashes
from codetrial.records import GenerationOptions, Outcome
from codetrial.selection.evidence import Entry, Keeper, cache_key

CORRECT = "correct"
KINDS = (CORRECT, "execution error", "wrong output")
HEADS = {"binary": ("incorrect", CORRECT), "three-class": KINDS}
REGULARISATION = (0.003, 0.03, 0.3)
FOLDS = 5
_UNLABELLED = (
    Outcome.NO_CODE,
    Outcome.INFRA_ERROR,
    Outcome.OVERFLOW,
    Outcome.MALFORMED_EDIT,
    Outcome.ANSWERED,
)
FORMAT = "codetrial trained judge, version 1"
# A centred judge's own format: a version that knows only FORMAT refuses it rather
# than apply it to states as read.
CENTRED_FORMAT = "codetrial trained judge, version 2: centred on each task"
CENTRED = ", centred on each task"
PROMPT_TEMPLATES = ("judge_system.md", "judge.md")


def prompt_hashes() -> dict[str, str]:
    """The templates of the zero-shot judge prompt whose states a judge reads."""
    return template_hashes(PROMPT_TEMPLATES)


def kind(outcome: Outcome) -> str | None:
    """RankEF's label of an outcome: what the execution said, or None where no code of
    the model's ran to say it (no code, an infrastructure failure, an overflow)."""
    if outcome in _UNLABELLED:
        return None
    if outcome is Outcome.PASSED:
        return CORRECT
    wrong = outcome in (Outcome.FAILED, Outcome.TAMPERED)  # a forged run hides a wrong one
    return "wrong output" if wrong else "execution error"


def labelled(entries: Sequence[Entry]) -> list[Entry]:
    return [e for e in entries if e.record.code is not None and kind(e.record.outcome)]


def reads_states(backend: Backend, name: str) -> ReadsStates:
    if not isinstance(backend, ReadsStates):
        raise ConfigError(
            f"the judge {name} shows no hidden states, which a trained judge reads; "
            "use an embedded model, e.g. --judge embedded"
        )
    return backend


def read_states(
    backend: ReadsStates,
    entries: Sequence[Entry],
    options: GenerationOptions,
    *,
    cache: Path,
    progress: Callable[[int], None] = lambda done: None,
    computed: Callable[[int], None] = lambda items: None,
) -> dict[tuple[str, str], tuple[np.ndarray, float]]:
    """(task id, code) -> the judge model's hidden states over the zero-shot judge
    prompt and its P(yes) there; identical code is read once. Kept in `cache` (.npz)
    and reused; `computed` is told how many were read as they are kept."""
    known = _load_states(cache)
    keeper = Keeper(lambda: _save_states(cache, known), computed)
    for done, entry in enumerate(entries, 1):
        code = entry.record.code or ""
        key = cache_key((entry.task.id, code))
        if key not in known:
            messages = judge_messages(entry.task, code, 0, parts=True)
            known[key] = backend.hidden_state(messages, options)
            keeper.one()
        progress(done)
    keeper.close()
    return {
        (e.task.id, e.record.code or ""): known[cache_key((e.task.id, e.record.code or ""))]
        for e in entries
    }


def _load_states(cache: Path) -> dict[str, tuple[np.ndarray, float]]:
    """The cached readings; none from a cache without P(yes), which is read again."""
    if not cache.is_file():
        return {}
    with np.load(cache, allow_pickle=False) as stored:
        if "yes" not in stored:
            return {}
        keys = json.loads(str(stored["keys"]))
        readings = zip(stored["states"], stored["yes"].tolist(), strict=True)
        return dict(zip(keys, readings, strict=True))


def _save_states(cache: Path, known: dict[str, tuple[np.ndarray, float]]) -> None:
    buffer = io.BytesIO()
    keys = np.asarray(json.dumps(list(known)))
    states = np.stack([state for state, _ in known.values()])
    yes = np.asarray([p for _, p in known.values()], dtype=np.float64)
    np.savez(buffer, keys=keys, states=states, yes=yes)
    partial = cache.with_name(f".{cache.name}.partial")
    partial.write_bytes(buffer.getvalue())
    os.replace(partial, cache)


def _sklearn(module: str) -> ModuleType:
    return require(f"sklearn.{module}", "scikit-learn", "ranker", "the trained judge")


@dataclass(frozen=True)
class Head:
    """One classifier: standardisation, then per-class weights (a single row for a
    binary head, whose positive class is the last)."""

    classes: list[str]
    regularisation: float
    mean: list[float]
    scale: list[float]
    coef: list[list[float]]
    intercept: list[float]

    def p_correct(self, rows: np.ndarray) -> np.ndarray:
        z = (rows - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = z @ np.asarray(self.coef).T + np.asarray(self.intercept)
        if len(self.classes) == 2:
            positive: np.ndarray = 1 / (1 + np.exp(-logits[:, 0]))
            return positive if self.classes[1] == CORRECT else 1 - positive
        if CORRECT not in self.classes:
            return np.zeros(len(rows))
        logits -= logits.max(axis=1, keepdims=True)
        shares = np.exp(logits)
        correct: np.ndarray = shares[:, self.classes.index(CORRECT)] / shares.sum(axis=1)
        return correct


def targets(entries: Sequence[Entry], head: str) -> np.ndarray:
    """Class indices into HEADS[head]."""
    names = HEADS[head]
    found = [kind(e.record.outcome) for e in entries]
    if head == "binary":
        return np.asarray([int(k == CORRECT) for k in found])
    return np.asarray([names.index(k or "") for k in found])


def _fitted(rows: np.ndarray, y: np.ndarray, names: Sequence[str], c: float) -> Head:
    linear = _sklearn("linear_model")  # most of a second to import
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    present = sorted(set(y.tolist()))
    classes = [names[i] for i in present]
    if len(present) < 2:
        return Head(classes, c, mean.tolist(), scale.tolist(), [[0.0] * rows.shape[1]], [0.0])
    model = linear.LogisticRegression(C=c, max_iter=3000)
    model.fit((rows - mean) / scale, y)
    return Head(
        classes, c, mean.tolist(), scale.tolist(), model.coef_.tolist(), model.intercept_.tolist()
    )


def _log_loss(head: Head, rows: np.ndarray, y: np.ndarray, names: Sequence[str]) -> float:
    """The held-out log-loss of P(correct) against whether the tests passed."""
    p = np.clip(head.p_correct(rows), 1e-6, 1 - 1e-6)
    passed = np.asarray([names[i] == CORRECT for i in y])
    return float(-np.mean(np.where(passed, np.log(p), np.log(1 - p))))


def fit(rows: np.ndarray, y: np.ndarray, groups: np.ndarray, head: str) -> Head:
    """A head trained on `rows`, its regularisation chosen by grouped cross-validation
    within them (the strongest when there are too few groups to split)."""
    names = HEADS[head]
    splits = min(3, len(set(groups.tolist())))
    if splits < 2:
        return _fitted(rows, y, names, REGULARISATION[0])
    selection = _sklearn("model_selection")
    losses = []
    for c in REGULARISATION:
        folds = selection.GroupKFold(n_splits=splits).split(rows, y, groups)
        held_out = [
            _log_loss(_fitted(rows[a], y[a], names, c), rows[b], y[b], names) for a, b in folds
        ]
        losses.append(sum(held_out))
    return _fitted(rows, y, names, REGULARISATION[int(np.argmin(losses))])


def out_of_fold(rows: np.ndarray, y: np.ndarray, groups: np.ndarray, head: str) -> np.ndarray:
    """P(correct) for every row from a head that never saw its task."""
    tasks = len(set(groups.tolist()))
    if tasks < 2:
        raise ConfigError("measuring a trained judge out-of-fold needs at least two tasks")
    selection = _sklearn("model_selection")
    found = np.zeros(len(y))
    for train, test in selection.GroupKFold(n_splits=min(FOLDS, tasks)).split(rows, y, groups):
        found[test] = fit(rows[train], y[train], groups[train], head).p_correct(rows[test])
    return found


def task_groups(entries: Sequence[Entry]) -> np.ndarray:
    index: dict[str, int] = {}
    return np.asarray([index.setdefault(e.task.id, len(index)) for e in entries])


def setting(head: str, centred: bool) -> str:
    """A trained head's name among judge settings."""
    return f"trained {head}{CENTRED if centred else ''}"


def pools(entries: Sequence[Entry], runs: Sequence[int] = ()) -> np.ndarray:
    """Which pool each candidate is in, the candidates a judge centres on together:
    those of one task from one model in one run (`runs` numbers each entry's run;
    one run when empty). Selection centres a model's pool of a task the same way."""
    index: dict[tuple[int, str, str], int] = {}
    keys = zip(runs or [0] * len(entries), entries, strict=True)
    return np.asarray(
        [index.setdefault((run, e.record.model, e.task.id), len(index)) for run, e in keys]
    )


def centred(rows: np.ndarray, pools: np.ndarray) -> np.ndarray:
    """Each row less the mean of its pool's rows."""
    found = rows.astype(np.float64)
    for pool in set(pools.tolist()):
        members = pools == pool
        found[members] -= found[members].mean(axis=0)
    return found


@dataclass(frozen=True)
class TrainedJudge:
    """Both heads and what they read: the judge model (by file hash), the judge
    prompt (by template hash), how its hidden states were pooled, and whether they
    are centred on each task."""

    judge: str
    model_sha256: str
    pooling: str
    prompt_sha256: dict[str, str]
    heads: dict[str, Head]
    trained_on: dict[str, Any]
    centred: bool = False

    def p_correct(self, head: str, rows: np.ndarray, pools: np.ndarray) -> np.ndarray:
        """The head's P(correct) for states `rows` of candidates in `pools`."""
        return self.heads[head].p_correct(centred(rows, pools) if self.centred else rows)

    def save(self, path: Path) -> None:
        document = {"format": CENTRED_FORMAT if self.centred else FORMAT, **asdict(self)}
        path.write_text(json.dumps(document, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> TrainedJudge:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") not in (FORMAT, CENTRED_FORMAT):
                raise ValueError(f"its format is {data.get('format')!r}, not {FORMAT!r}")
            heads = {name: Head(**h) for name, h in data["heads"].items()}
            return cls(
                judge=data["judge"],
                model_sha256=data["model_sha256"],
                pooling=data["pooling"],
                prompt_sha256=data["prompt_sha256"],
                heads=heads,
                trained_on=data["trained_on"],
                centred=data["format"] == CENTRED_FORMAT,
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(
                f"{path}: not a trained judge this version reads ({exc}); "
                "train one with `codetrial train-judge RUN...`"
            ) from exc

    def check(self, judge: str, model_sha256: str, pooling: str) -> None:
        """Refuse states read by another model, pooling or judge prompt."""
        if (self.model_sha256, self.pooling, self.prompt_sha256) != (
            model_sha256,
            pooling,
            prompt_hashes(),
        ):
            raise ConfigError(
                f"this trained judge reads {self.judge}'s hidden states (model "
                f"{self.model_sha256[:12]}, its judge prompt as trained); {judge} here "
                f"has model {model_sha256[:12]}: train it again with --judge {judge}, "
                "or judge with the model it was trained on"
            )
