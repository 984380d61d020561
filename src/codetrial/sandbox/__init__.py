"""Sandboxes run untrusted code; callers see only Sandbox and Session."""

from codetrial.sandbox import codec
from codetrial.sandbox.base import Sandbox, open_sandbox
from codetrial.sandbox.server import (
    CallTimeout,
    CandidateError,
    ChildExit,
    LimitHit,
    Session,
    Stop,
    TestRun,
)

__all__ = [
    "CallTimeout",
    "CandidateError",
    "ChildExit",
    "LimitHit",
    "Sandbox",
    "Session",
    "Stop",
    "TestRun",
    "codec",
    "open_sandbox",
]
