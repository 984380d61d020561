"""Choosing one candidate out of many, and measuring how good each way of choosing is;
the strategies are in `codetrial.selection.strategies`."""

from codetrial.selection.strategies import (
    REFERENCES,
    STRATEGIES,
    Need,
    PoolCandidate,
    StrategyResult,
    TaskPool,
    codet,
    compare_strategies,
    compared,
    consensus,
    named,
    needs,
    paired_p,
    ranking,
    select_pass_at_1,
)

__all__ = [
    "REFERENCES",
    "STRATEGIES",
    "Need",
    "PoolCandidate",
    "StrategyResult",
    "TaskPool",
    "codet",
    "compare_strategies",
    "compared",
    "consensus",
    "named",
    "needs",
    "paired_p",
    "ranking",
    "select_pass_at_1",
]
