"""The commands by name. Each command's module registers it; `codetrial.cli` declares
the modules, so that a command's module is imported only when it runs or when the
whole app is built (for `codetrial --help` and the commands' page)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from codetrial.registry import Registry

COMMANDS: Registry[Callable[..., Any]] = Registry("command")
