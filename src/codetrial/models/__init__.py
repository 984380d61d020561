"""Model backends behind one protocol and one registry; a backend's module is imported
only when a model of its kind is asked for."""

from codetrial.models.base import KINDS, Backend, Readiness, create_backend
from codetrial.models.scripted import ScriptedBackend

__all__ = ["KINDS", "Backend", "Readiness", "ScriptedBackend", "create_backend"]
