"""Tasks: what a model is asked to write and the contract tests that judge it."""

from codetrial.tasks.loader import known_suites, load_folder, load_suite
from codetrial.tasks.model import Signature, Task, TestFile

__all__ = ["Signature", "Task", "TestFile", "known_suites", "load_folder", "load_suite"]
