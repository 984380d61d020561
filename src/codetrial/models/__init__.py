"""Model backends behind one protocol and one registry; a backend's module is imported
only when a model of its kind is asked for."""

from codetrial.models.base import KINDS, Backend, Readiness, create_backend

KINDS.declare("embedded", "codetrial.models.embedded")
KINDS.declare("ollama", "codetrial.models.ollama")
KINDS.declare("openai", "codetrial.models.openai")
KINDS.declare("scripted", "codetrial.models.scripted")

__all__ = ["KINDS", "Backend", "Readiness", "create_backend"]
