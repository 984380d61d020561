"""Sandboxes run untrusted code; callers see only Sandbox and Session."""

from codetrial.sandbox import codec
from codetrial.sandbox.base import Sandbox, open_sandbox
from codetrial.sandbox.launch import INPUTS
from codetrial.sandbox.policy import Mounts, SandboxPolicy
from codetrial.sandbox.server import (
    CallTimeout,
    CandidateError,
    ChildExit,
    Left,
    LimitHit,
    ProgramRun,
    Session,
    Stop,
    TestRun,
)

__all__ = [
    "INPUTS",
    "CallTimeout",
    "CandidateError",
    "ChildExit",
    "Left",
    "LimitHit",
    "Mounts",
    "ProgramRun",
    "Sandbox",
    "SandboxPolicy",
    "Session",
    "Stop",
    "TestRun",
    "codec",
    "open_sandbox",
]
