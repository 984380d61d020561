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
)

__all__ = [
    "CallTimeout",
    "CandidateError",
    "ChildExit",
    "LimitHit",
    "Sandbox",
    "Session",
    "Stop",
    "codec",
    "open_sandbox",
]
