"""A ranker learned from execution-labelled candidates (RankEF-like, in spirit).

Features come from what selection may know: the visible tests' outcome and error
type, how many visible tests passed, the likelihood, the code's shape, and how the
candidate fared on the model's generated tests and inputs compared with its
siblings. The label is the hidden verdict. The model is a standardised logistic
regression, saved as JSON (no pickles); it is judged on tasks it never saw.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from codetrial.errors import ConfigError
from codetrial.extras import require
from codetrial.selection.strategies import TaskPool, codet, consensus
from codetrial.syntax import parse

OUTCOMES = (
    "passed",
    "failed",
    "error",
    "timeout",
    "memory",
    "output_limit",
    "syntax_error",
    "no_code",
    "rejected",
    "none",
)
ERRORS = (
    "AssertionError",
    "TypeError",
    "ValueError",
    "IndexError",
    "KeyError",
    "NameError",
    "AttributeError",
    "ZeroDivisionError",
    "RecursionError",
    "LimitHit",
)
CODE_NODES = (ast.For, ast.While, ast.If, ast.Return, ast.Try, ast.ListComp, ast.Import)


@dataclass(frozen=True)
class Signals:
    """What the ranker reads about one candidate, beyond PoolCandidate."""

    visible_outcome: str
    visible_error: str | None
    visible_total: int


def _code_shape(code: str | None) -> list[float]:
    if not code:
        return [0.0] * (3 + len(CODE_NODES))
    try:
        nodes = list(ast.walk(parse(code)))
    except SyntaxError:
        nodes = []
    counts = [float(sum(isinstance(n, kind) for n in nodes)) for kind in CODE_NODES]
    functions = float(sum(isinstance(n, ast.FunctionDef) for n in nodes))
    return [math.log1p(len(code)), float(code.count("\n") + 1), functions, *counts]


def feature_names() -> list[str]:
    return [
        *(f"visible_{o}" for o in OUTCOMES),
        *(f"error_{e}" for e in ERRORS),
        "error_other",
        "visible_passed_share",
        "visible_passed",
        "has_logprob",
        "mean_logprob",
        "log_chars",
        "lines",
        "functions",
        *(f"n_{k.__name__}" for k in CODE_NODES),
        "generated_passed_share",
        "codet_share",
        "cluster_share",
        "ran_inputs",
    ]


def features(pool: TaskPool, signals: Sequence[Signals]) -> np.ndarray:
    """One row per candidate of the task; sibling-relative columns compare each
    candidate with the best of its task."""
    tests = max(len(pool.test_weights), 1)
    codet_scores, cluster_scores = codet(pool), consensus(pool)
    top_codet = max(max(codet_scores, default=0.0), 1e-9)
    rows = []
    for candidate, signal, codet_score, cluster in zip(
        pool.candidates, signals, codet_scores, cluster_scores, strict=True
    ):
        outcome = [float(signal.visible_outcome == o) for o in OUTCOMES]
        error = [float(signal.visible_error == e) for e in ERRORS]
        other = float(signal.visible_error is not None and signal.visible_error not in ERRORS)
        share = candidate.visible_passed / signal.visible_total if signal.visible_total else 0.0
        logprob = candidate.mean_logprob
        rows.append(
            [
                *outcome,
                *error,
                other,
                share,
                float(candidate.visible_passed),
                float(logprob is not None),
                logprob or 0.0,
                *_code_shape(candidate.code),
                len(candidate.passed_tests) / tests,
                codet_score / top_codet,
                max(cluster, 0.0) / len(pool.candidates),
                float(bool(candidate.outputs)),
            ]
        )
    return np.asarray(rows, dtype=float).reshape(len(pool.candidates), len(feature_names()))


@dataclass(frozen=True)
class Ranker:
    """Standardisation and logistic-regression weights, in feature_names() order."""

    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float

    def score(self, rows: np.ndarray) -> list[float]:
        z = (rows - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = z @ np.asarray(self.coef) + self.intercept
        return [float(p) for p in 1 / (1 + np.exp(-logits))]

    def save(self, path: Path) -> None:
        path.write_text(
            json.dumps({"features": feature_names(), **vars(self)}, indent=1), encoding="utf-8"
        )

    @classmethod
    def load(cls, path: Path) -> Ranker:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("features") != feature_names():
                raise ValueError("it was trained on other features")
            return cls(data["mean"], data["scale"], data["coef"], float(data["intercept"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(
                f"{path}: not a ranker this version reads ({exc}); "
                "train one with `codetrial train-ranker RUN...`"
            ) from exc


def _sklearn(module: str) -> ModuleType:
    return require(f"sklearn.{module}", "scikit-learn", "ranker", "the learned ranker")


def fit(rows: np.ndarray, labels: np.ndarray) -> Ranker:
    """Train on labelled rows; every label must occur."""
    linear = _sklearn("linear_model")  # most of a second to import
    scaling = _sklearn("preprocessing")

    if len(set(labels.tolist())) < 2:
        raise ConfigError(
            "a ranker needs both correct and incorrect candidates to learn from; "
            "these runs have only one kind"
        )
    scaler = scaling.StandardScaler().fit(rows)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    model = linear.LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
    model.fit((rows - scaler.mean_) / scale, labels)
    return Ranker(
        scaler.mean_.tolist(), scale.tolist(), model.coef_[0].tolist(), float(model.intercept_[0])
    )


def table(pools: Sequence[TaskPool], signals: Sequence[Sequence[Signals]]) -> np.ndarray:
    return np.vstack([features(p, s) for p, s in zip(pools, signals, strict=True)])


def labels(pools: Sequence[TaskPool]) -> np.ndarray:
    return np.asarray([c.correct for p in pools for c in p.candidates], dtype=int)


def scored(pools: Sequence[TaskPool], scores: Sequence[float]) -> list[TaskPool]:
    """The pools with each candidate's ranker score filled in, in order."""
    it = iter(scores)
    return [
        TaskPool(
            p.task_id,
            [dataclasses.replace(c, ranker_score=next(it)) for c in p.candidates],
            p.test_weights,
        )
        for p in pools
    ]


def cross_validated(pools: Sequence[TaskPool], rows: np.ndarray, folds: int = 5) -> list[float]:
    """Out-of-fold scores: each task's candidates scored by a ranker trained on the
    other folds' tasks only (`rows`: the pools' feature table). A fold whose training
    part has a single label gives every candidate of its tasks the same score."""
    selection = _sklearn("model_selection")

    y = labels(pools)
    groups = np.repeat(np.arange(len(pools)), [len(p.candidates) for p in pools])
    out = np.zeros(len(y))
    splits = min(folds, len(pools))
    if splits < 2:
        raise ConfigError("cross-validating a ranker needs at least two tasks")
    for train, test in selection.GroupKFold(n_splits=splits).split(rows, y, groups):
        if len(set(y[train].tolist())) < 2:
            out[test] = 0.5
            continue
        out[test] = fit(rows[train], y[train]).score(rows[test])
    return [float(v) for v in out]
