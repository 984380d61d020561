"""Sandboxes run untrusted code; callers see only the Sandbox interface."""

from codetrial.sandbox.base import SANDBOXES, Sandbox, SandboxRequest, SandboxResult, get_sandbox
from codetrial.sandbox.process import ProcessSandbox

__all__ = [
    "SANDBOXES",
    "ProcessSandbox",
    "Sandbox",
    "SandboxRequest",
    "SandboxResult",
    "get_sandbox",
]
