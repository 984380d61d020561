"""codetrial: put LLM-written code on trial before anyone relies on it."""

__version__ = "0.1.0"
