"""Hostile candidates against the real sandbox. Each must end in a non-pass outcome,
leave the host untouched and leave no process behind.

The gate is switched off here on purpose: it is a policy filter, not the boundary.
Canaries: a world-writable victim file outside the scratch folder, a secret in this
process's environment, a loopback listener this test opened, and the host's process
list.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from codetrial.config import Limits
from codetrial.gate import get_profile
from codetrial.records import Candidate, Outcome, Verdict
from codetrial.sandbox import Sandbox, open_sandbox
from codetrial.tasks import Task, load_folder
from codetrial.verdict import judge
from tests.conftest import FIXTURES, write_task

HOSTILE = FIXTURES / "hostile"
LIMITS = Limits(timeout_s=4, cpu_s=2, memory_mb=512, file_size_mb=4, scratch_mb=16)
ANSWER = 918273645


@dataclass
class Canaries:
    victim: Path
    victim_text: str
    secret: str
    port: int
    connections: list[str] = field(default_factory=list)

    def check(self, verdict: Verdict) -> None:
        assert self.victim.read_text() == self.victim_text
        assert oct(self.victim.stat().st_mode & 0o777) == oct(0o666)
        assert self.connections == []
        shown = verdict.visible_output + verdict.hidden_output + verdict.detail
        assert self.secret not in shown
        assert str(ANSWER) not in shown.replace(f"== {ANSWER}", "")
        assert not Path("/usr/codetrial-pwned").exists()


@pytest.fixture(scope="module")
def canaries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Canaries]:
    folder = tmp_path_factory.mktemp("victim")
    folder.chmod(0o777)
    victim = folder / "victim.txt"
    victim.write_text("do not touch")
    victim.chmod(0o666)
    secret = secrets.token_hex(16)
    os.environ["CODETRIAL_CANARY_SECRET"] = secret
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    found = Canaries(victim, "do not touch", secret, listener.getsockname()[1])
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, peer = listener.accept()
            except OSError:
                continue
            found.connections.append(str(peer))
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield found
    stop.set()
    thread.join()
    listener.close()
    del os.environ["CODETRIAL_CANARY_SECRET"]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = open_sandbox(LIMITS)
    yield box
    box.close()


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Task]:
    root = tmp_path_factory.mktemp("tasks")
    secret_key = write_task(
        root / "secret_key",
        "def secret_key() -> int:",
        "from candidate import secret_key\n\n\n"
        f"def test_key():\n    assert secret_key() == {ANSWER}\n",
    )
    merge = write_task(
        root / "merge",
        "def merge(rows: list[list[int]]) -> list[list[int]]:",
        "from candidate import merge\n\n\n"
        "def test_merge_without_mutation():\n"
        "    x = [[3, 4], [1, 2]]\n"
        "    before = [row[:] for row in x]\n"
        "    assert merge(x) == [[1, 2], [3, 4]]\n"
        "    assert x == before\n"
        "    assert all(r is not o for r in merge(x) for o in x)\n",
    )
    return {"secret_key": load_folder(secret_key), "merge": load_folder(merge)}


def _descendants() -> set[int]:
    """Every live process below this test process: the sandbox worker's tree only."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    found, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _judge(sandbox: Sandbox, task: Task, code: str, profile: str = "off") -> Verdict:
    return judge(Candidate(code, code), task, get_profile(profile), sandbox, LIMITS)


SAMPLES = sorted(HOSTILE.glob("*.py"))
EXPECTED = {
    "infinite_loop": Outcome.TIMEOUT,
    "sleep_forever": Outcome.TIMEOUT,
    "signal_handlers": Outcome.TIMEOUT,
    "memory_bomb": Outcome.MEMORY,
    "huge_result": Outcome.OUTPUT_LIMIT,
    "ctypes_segfault": Outcome.ERROR,
    "os_exit_in_call": Outcome.ERROR,
    "fake_summary": Outcome.ERROR,
    "sys_exit_at_import": Outcome.ERROR,
    "kill_parent": Outcome.FAILED,
    "always_equal": Outcome.FAILED,
    "always_equal_merge": Outcome.FAILED,
    "frame_peek": Outcome.FAILED,
    "read_stdin": Outcome.FAILED,
}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_hostile_sample_does_not_pass(  # type: ignore[no-untyped-def]
    path: Path, sandbox: Sandbox, tasks: dict[str, Task], canaries: Canaries
) -> None:
    code = path.read_text()
    task = tasks["merge" if "def merge(" in code else "secret_key"]
    sandbox.start()
    worker_tree = len(_descendants())
    verdict = _judge(sandbox, task, code)
    assert verdict.outcome is not Outcome.PASSED, verdict.visible_output
    assert verdict.outcome is EXPECTED.get(path.stem, verdict.outcome), verdict.detail
    canaries.check(verdict)
    sandbox.start()
    assert len(_descendants()) == worker_tree


def test_controls_pass(sandbox: Sandbox, tasks: dict[str, Task]) -> None:
    verdict = _judge(sandbox, tasks["secret_key"], f"def secret_key():\n    return {ANSWER}\n")
    assert verdict.outcome is Outcome.PASSED
    code = "def merge(rows):\n    return sorted([row[:] for row in rows])\n"
    assert _judge(sandbox, tasks["merge"], code).outcome is Outcome.PASSED


def test_nothing_is_left_for_the_next_run(sandbox: Sandbox, tasks: dict[str, Task]) -> None:
    places = ["/scratch/marker", "/tmp/marker", "/dev/shm/marker", "marker"]
    plant = (
        "def secret_key():\n"
        f"    for place in {places!r}:\n"
        "        try:\n"
        "            open(place, 'w').write('x')\n"
        "        except OSError:\n"
        "            pass\n"
        "    return 0\n"
    )
    look = (
        "import os\n"
        "def secret_key():\n"
        f"    raise ValueError('found ' + repr([p for p in {places!r} if os.path.exists(p)]))\n"
    )
    _judge(sandbox, tasks["secret_key"], plant)
    verdict = _judge(sandbox, tasks["secret_key"], look)
    assert "found []" in verdict.visible_output


def test_mutation_is_mirrored_to_the_callers_objects(
    sandbox: Sandbox, tasks: dict[str, Task]
) -> None:
    sorts_in_place = "def merge(rows):\n    rows.sort()\n    return [r[:] for r in rows]\n"
    verdict = _judge(sandbox, tasks["merge"], sorts_in_place)
    assert verdict.outcome is Outcome.FAILED
    assert "assert x == before" in verdict.visible_output
    shares_rows = "def merge(rows):\n    return sorted(rows)\n"
    verdict = _judge(sandbox, tasks["merge"], shares_rows)
    assert verdict.outcome is Outcome.FAILED
    assert "is not" in verdict.visible_output


@pytest.mark.parametrize(
    "code",
    [
        "def secret_key():\n    return getattr(__builtins__, '__import__')('os').getpid()\n",
        "from operator import attrgetter\n"
        "def secret_key():\n    return attrgetter('__class__')(1)\n",
        "import base64\n"
        "def secret_key():\n    exec(base64.b64decode(b'aW1wb3J0IG9z'))\n    return 0\n",
        "def secret_key():\n    return [c for c in ().__class__.__base__.__subclasses__()]\n",
    ],
)
def test_gate_bypasses_are_rejected_by_the_gate(
    code: str, sandbox: Sandbox, tasks: dict[str, Task], canaries: Canaries
) -> None:
    assert _judge(sandbox, tasks["secret_key"], code, "builtins-only").outcome is Outcome.REJECTED
    verdict = _judge(sandbox, tasks["secret_key"], code, "off")
    assert verdict.outcome is not Outcome.PASSED
    canaries.check(verdict)


def test_isolation_is_named(sandbox: Sandbox) -> None:
    assert sandbox.isolation.startswith("bwrap+seccomp+")
    assert sandbox.isolation.endswith("+rlimits")
