"""Sandboxes run untrusted code; callers see only Sandbox and Session."""

from codetrial.sandbox import codec
from codetrial.sandbox.base import Sandbox, open_sandbox
from codetrial.sandbox.server import CandidateError, ChildExit, LimitHit, Session, Stop

__all__ = [
    "CandidateError",
    "ChildExit",
    "LimitHit",
    "Sandbox",
    "Session",
    "Stop",
    "codec",
    "open_sandbox",
]
