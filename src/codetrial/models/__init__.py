"""Model backends behind one protocol and one registry."""

from codetrial.models import embedded, ollama, openai, scripted
from codetrial.models.base import KINDS, Backend, Readiness, create_backend
from codetrial.models.scripted import ScriptedBackend

__all__ = [
    "KINDS",
    "Backend",
    "Readiness",
    "ScriptedBackend",
    "create_backend",
    "embedded",
    "ollama",
    "openai",
    "scripted",
]
