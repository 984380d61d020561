"""What a run lets its candidates have: the limits, whether they run under bubblewrap or
(unsafe) on the host, and what they see besides the machine's Python.

A policy is built once from a run's configuration (or a command's options) and passed
down; a component that adds mounts derives a policy of its own with `with_mounts`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from codetrial.config import Limits, RunConfig


@dataclass(frozen=True)
class Mounts:
    """What a sandbox sees besides the machine's Python. `folders`: bound read-only
    at their own paths (a repository's package environment, which its test runner
    puts on the path); `packages`: package environments, bound the same way and on
    every child's import path, with their `preload` modules imported once by the
    worker; `inputs`: files bound read-only, by name, in the sandbox's input folder."""

    folders: tuple[Path, ...] = ()
    packages: tuple[Path, ...] = ()
    preload: tuple[str, ...] = ()
    inputs: tuple[Path, ...] = ()

    def plus(self, other: Mounts) -> Mounts:
        """These mounts and `other`'s, each once, these first."""
        merged = {
            f.name: tuple(dict.fromkeys((*getattr(self, f.name), *getattr(other, f.name))))
            for f in dataclasses.fields(self)
        }
        return Mounts(**merged)


NO_MOUNTS = Mounts()


@dataclass(frozen=True)
class SandboxPolicy:
    """The limits every candidate runs under, `unsafe_host_exec` (run candidates as
    plain processes with rlimits only, never without the user asking by name), and
    the `mounts` every sandbox opened under this policy sees."""

    limits: Limits
    unsafe_host_exec: bool = False
    mounts: Mounts = NO_MOUNTS

    @classmethod
    def of(cls, config: RunConfig) -> SandboxPolicy:
        """The policy of a run of `config`."""
        return cls(config.limits, config.unsafe_host_exec)

    def with_mounts(self, mounts: Mounts) -> SandboxPolicy:
        """This policy, its sandboxes seeing `mounts` too."""
        return dataclasses.replace(self, mounts=self.mounts.plus(mounts))
