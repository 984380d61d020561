"""pass@k with the unbiased estimator, bootstrap intervals over tasks and the exact McNemar
test, defined in `codetrial.metrics.estimates`."""

from codetrial.metrics.estimates import (
    Estimate,
    bootstrap,
    ks_for,
    mcnemar_exact,
    pass_at_k,
    pass_at_k_table,
)

__all__ = [
    "Estimate",
    "bootstrap",
    "ks_for",
    "mcnemar_exact",
    "pass_at_k",
    "pass_at_k_table",
]
