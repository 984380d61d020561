"""One registry shape for every kind of component: backends, task sources, harnesses,
gate rules and profiles, selection strategies, edit formats.

A registry maps a name to an item. Built-ins register the way a plugin would: by
calling `register` when their module is imported. A name can be declared with the
module that registers it, so that the module is imported only when the name is
first asked for. A name registered twice is refused, and an unknown name gets the
known ones and the closest match.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator
from typing import Generic, TypeVar

from codetrial.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, what: str) -> None:
        """`what` names the kind of component in messages, e.g. "gate profile"."""
        self.what = what
        self._items: dict[str, T] = {}
        self._modules: dict[str, str] = {}
        self._order: list[str] = []

    def register(self, name: str, item: T) -> None:
        if name in self._items:
            raise ValueError(f"{self.what} {name!r} registered twice")
        self._items[name] = item
        if name not in self._order:
            self._order.append(name)

    def declare(self, name: str, module: str) -> None:
        """`name` is registered by importing `module`, the first time it is needed."""
        if name in self:
            raise ValueError(f"{self.what} {name!r} registered twice")
        self._modules[name] = module
        self._order.append(name)

    def names(self) -> list[str]:
        """Every name, in the order it was registered or declared."""
        return list(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._items or name in self._modules

    def get(self, name: str) -> T:
        """The item; a ConfigError lists the known names when there is none."""
        if name not in self._items and name in self._modules:
            # Threads that ask at once wait on the import system's lock for the module.
            importlib.import_module(self._modules[name])
        try:
            return self._items[name]
        except KeyError:
            raise ConfigError(self.unknown(name)) from None

    def unknown(self, name: str, known: list[str] | None = None) -> str:
        """The message for a name that is not registered."""
        known = known or self.names()
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"unknown {self.what} {name!r}{hint} (known: {', '.join(known)})"

    def items(self) -> Iterator[tuple[str, T]]:
        """Every (name, item), importing what was only declared."""
        for name in self.names():
            yield name, self.get(name)
