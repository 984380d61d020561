"""The static gate: an AST policy filter applied before anything is executed.

The gate is a filter, not the security boundary. It keeps candidates inside the
policy the run declared (so policy violations are counted apart from test failures),
but a static check can never prove code harmless. The boundary is the sandbox.
"""

from __future__ import annotations

import ast

from codetrial.gate.profiles import PROFILES, Profile, get_profile
from codetrial.gate.rules import RULES, Context, Violation
from codetrial.gate.scan import scan_files, scan_patch
from codetrial.records import GateVerdict
from codetrial.tasks import Signature

__all__ = ["PROFILES", "RULES", "Profile", "check", "get_profile", "scan_files", "scan_patch"]


def check(tree: ast.Module, signature: Signature | None, profile: Profile) -> GateVerdict:
    """Apply the profile's rules to a parsed candidate (a program, with no requested
    function, when `signature` is None); report the earliest violation."""
    ctx = Context(signature, profile.allowed_modules, profile.allow_helpers, profile.allowed_calls)
    found: list[Violation] = []
    for rule_id in profile.rules:
        found.extend(RULES.get(rule_id).check(tree, ctx))
    if not found:
        return GateVerdict(allowed=True)
    first = min(found, key=lambda v: (v.line, v.rule_id))
    return GateVerdict(allowed=False, rule_id=first.rule_id, message=first.message, line=first.line)
