"""Hostile candidates against the real sandbox. Each must end in a non-pass outcome,
leave the host untouched and leave no process behind.

The gate is switched off here on purpose: it is a policy filter, not the boundary.
Workspace attacks, at the end, go after the workspace test runners instead: the tests
beside the candidate's files, and apart from them.
Canaries: a world-writable victim file outside the scratch folder, a secret in this
process's environment, a loopback listener this test opened, and the host's process
list.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import codetrial
from codetrial.config import Limits
from codetrial.gate import get_profile
from codetrial.records import Candidate, Outcome, Verdict
from codetrial.sandbox import Sandbox, SandboxPolicy, open_sandbox
from codetrial.sandbox.cgroup import Cgroup
from codetrial.tasks import Task, load_folder
from codetrial.tasks.workspace import load_exercise
from codetrial.verdict import judge
from codetrial.verdict.workspace import judge_workspace
from tests.conftest import FIXTURES, POLYGLOT, write_task

HOSTILE = FIXTURES / "hostile"
LIMITS = Limits(timeout_s=8, cpu_s=2, memory_mb=512, file_size_mb=4, scratch_mb=16)
WORKSPACE_LIMITS = Limits(timeout_s=30, cpu_s=10, memory_mb=512, file_size_mb=4, scratch_mb=16)
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
    box = open_sandbox(SandboxPolicy(LIMITS))
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


@dataclass(frozen=True)
class Stopped:
    """What a hostile sample must end in, and the evidence of what stopped it: a
    pattern found in the verdict's detail and test output."""

    outcome: Outcome
    evidence: str


NO_ANSWER = rf"AssertionError: assert (?!{ANSWER}\b)\S+ == {ANSWER}"
EXPECTED = {
    "always_equal": Stopped(Outcome.FAILED, "returned a Anything, which is not plain data"),
    "always_equal_merge": Stopped(Outcome.FAILED, "returned a Anything, which is not plain data"),
    "connect_loopback": Stopped(Outcome.FAILED, r"\[Errno 1\] Operation not permitted"),
    "ctypes_segfault": Stopped(Outcome.ERROR, r"process ended \(signal 11\)"),
    "disk_fill": Stopped(Outcome.FAILED, r"'big:EFBIG', '/tmp/big:EFBIG', '/dev/shm/big:ENOSPC'"),
    "drop_conftest": Stopped(Outcome.FAILED, NO_ANSWER),
    "fake_result_files": Stopped(Outcome.FAILED, NO_ANSWER),
    "fake_summary": Stopped(Outcome.ERROR, r"process ended \(code 0\)"),
    "fork_bomb": Stopped(Outcome.FAILED, r"\['EPERM'\], 'forked 0'"),
    "frame_peek": Stopped(Outcome.FAILED, NO_ANSWER),
    "huge_result": Stopped(Outcome.OUTPUT_LIMIT, "over the size cap"),
    "huge_stdout": Stopped(Outcome.ERROR, r"\[Errno 27\] File too large"),
    "infinite_loop": Stopped(Outcome.TIMEOUT, "over 2 s of CPU"),
    "kill_parent": Stopped(Outcome.FAILED, NO_ANSWER),
    "memory_bomb": Stopped(Outcome.MEMORY, "MemoryError"),
    "monkeypatch_runner": Stopped(Outcome.FAILED, NO_ANSWER),
    "os_exit_in_call": Stopped(Outcome.ERROR, r"process ended \(code 0\)"),
    "read_answer_key": Stopped(Outcome.FAILED, NO_ANSWER),
    "read_installed_packages": Stopped(Outcome.FAILED, NO_ANSWER),
    "read_secrets": Stopped(
        Outcome.FAILED,
        "canary:absent env:HOME,LANG,MKL_NUM_THREADS,MPLBACKEND,OMP_NUM_THREADS,"
        "OPENBLAS_NUM_THREADS,PATH,PWD,PYTHONDONTWRITEBYTECODE,PYTHONHASHSEED "
        "/etc/shadow:ENOENT /etc/passwd:ENOENT",
    ),
    "read_stdin": Stopped(Outcome.FAILED, NO_ANSWER),
    "recursion_bomb": Stopped(Outcome.TIMEOUT, "over 2 s of CPU"),
    "remount_usr": Stopped(Outcome.ERROR, r"\[Errno 30\] Read-only file system"),
    "setuid_escalate": Stopped(Outcome.FAILED, r"assert 65534 == 918273645"),
    "signal_handlers": Stopped(Outcome.TIMEOUT, "over 2 s of CPU"),
    "sleep_forever": Stopped(Outcome.TIMEOUT, "no answer within 8 s wall"),
    "sys_exit_at_import": Stopped(Outcome.ERROR, "failed to load: SystemExit"),
    "thread_bomb": Stopped(Outcome.ERROR, r"can't start new thread after \d+ threads"),
    "write_outside": Stopped(Outcome.FAILED, NO_ANSWER),
}


def test_every_hostile_sample_has_an_expectation() -> None:
    assert sorted(EXPECTED) == [path.stem for path in SAMPLES]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_hostile_sample_is_stopped(  # type: ignore[no-untyped-def]
    path: Path, sandbox: Sandbox, tasks: dict[str, Task], canaries: Canaries
) -> None:
    code = path.read_text()
    task = tasks["merge" if "def merge(" in code else "secret_key"]
    sandbox.start()
    worker_tree = len(_descendants())
    verdict = _judge(sandbox, task, code)
    expected = EXPECTED[path.stem]
    shown = f"{verdict.detail}\n{verdict.visible_output}"
    assert verdict.outcome is expected.outcome, shown
    assert re.search(expected.evidence, shown), shown
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


def _base_site_packages() -> Path:
    base = {"base": sys.base_prefix, "platbase": sys.base_prefix}
    return Path(sysconfig.get_path("purelib", vars=base))


SEARCH = (HOSTILE / "read_installed_packages.py").read_text()
PROBE = """
import errno, importlib
def probe(paths, modules):
    seen = {}
    for path in paths:
        try:
            with open(path, "rb"):
                seen[path] = "read"
        except OSError as exc:
            seen[path] = errno.errorcode[exc.errno]
    for name in modules:
        seen[name] = importlib.import_module(name).__file__
    return seen
"""


@pytest.fixture
def planted() -> Iterator[Path]:
    """codetrial's own package files (suites with hidden tests and references) in the
    base interpreter's site-packages, where an install outside a venv puts them."""
    site = _base_site_packages()
    if not os.access(site, os.W_OK):
        pytest.skip(f"{site} is not writable here, so nothing can be installed into it")
    folder = site / f"codetrial-planted-{secrets.token_hex(4)}"
    shutil.copytree(Path(codetrial.__file__).parent, folder / "codetrial")
    yield folder
    shutil.rmtree(folder)


def test_installed_packages_are_invisible_and_the_stdlib_still_imports(
    sandbox: Sandbox, planted: Path
) -> None:
    site = _base_site_packages()
    assert (site / "pip").is_dir()
    files = [
        *sorted(str(p) for p in planted.rglob("test_hidden.py")),
        *sorted(str(p) for p in planted.rglob("reference.py")),
        *sorted(str(p) for p in site.glob("pip/*.py")),
    ]
    assert len(files) > 20
    modules = ["json", "decimal", "_decimal", "hashlib", "_sqlite3"]
    with sandbox.session(PROBE) as session:
        seen = session.call("probe", [files, modules], {})
    assert {seen[path] for path in files} == {"ENOENT"}
    assert "/lib-dynload/" in seen["_decimal"] and "/lib-dynload/" in seen["_sqlite3"]
    with sandbox.session(SEARCH) as session:
        assert session.call("secret_key", [], {}) == []


def test_cgroup_memory_and_pids_limits_are_in_force(sandbox: Sandbox) -> None:
    """Only where this machine gives the sandbox a cgroup; the hostile samples above
    show that the rlimits and seccomp hold without one."""
    sandbox.start()
    group = sandbox.cgroup
    if group is None:
        pytest.skip("no cgroup with memory and pids controllers here")
    memory_file = "memory.max" if group.version == 2 else "memory.limit_in_bytes"
    memory = next(f / memory_file for f in group.folders if (f / memory_file).is_file())
    pids = next(f / "pids.max" for f in group.folders if (f / "pids.max").is_file())
    expected = (LIMITS.memory_mb + 2 * LIMITS.scratch_mb + 64) * 1024 * 1024
    assert int(memory.read_text()) == expected
    assert int(pids.read_text()) == LIMITS.max_processes
    members = {int(pid) for f in group.folders for pid in (f / "cgroup.procs").read_text().split()}
    assert members and members <= _descendants()

    bomb = (HOSTILE / "thread_bomb.py").read_text()
    with sandbox.session(bomb) as session, pytest.raises(RuntimeError) as raised:
        session.call("secret_key", [], {})
    started = int(re.search(r"after (\d+) threads", str(raised.value)).group(1))
    assert started < LIMITS.max_processes


def test_a_cgroup_kills_what_outgrows_its_memory_limit() -> None:
    """Only where this machine gives the sandbox a cgroup: the limit a worker gets
    holds for memory the address-space rlimit does not see (none is set here)."""
    group = Cgroup.create(96 * 1024 * 1024, 16)
    if group is None:
        pytest.skip("no cgroup with memory and pids controllers here")
    try:
        hog = subprocess.run(
            [sys.executable, "-c", "x = bytearray(b'x') * (400 * 1024 * 1024)"],
            preexec_fn=lambda: group.add(os.getpid()),
            capture_output=True,
        )
        assert hog.returncode == -signal.SIGKILL
        assert group.oom_kills() >= 1
    finally:
        group.remove()


REAPER = """
import ctypes, os, signal, sys
from codetrial.config import Limits
from codetrial.sandbox import SandboxPolicy, open_sandbox
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans come to us
box = open_sandbox(SandboxPolicy(Limits(timeout_s=2, cpu_s=1)))
with box.session("def f():\\n    return 1\\n") as session:
    assert session.call("f", [], {}) == 1
box.close()
signal.alarm(10)
try:
    os.waitpid(-1, 0)
except ChildProcessError:
    sys.exit(0)
sys.exit("an orphan of the sandbox was left to init")
"""


def test_a_closed_sandbox_leaves_no_zombie() -> None:
    """This process adopts every orphan of the sandbox it starts, as init would."""
    result = subprocess.run([sys.executable, "-c", REAPER], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@dataclass(frozen=True)
class StubAttack:
    """Code put in front of react's stub, and what stops it when the tests run beside
    the candidate's files and when they run apart from them."""

    code: str
    beside: Stopped
    apart: Stopped


# What react's stub fails with, whatever the candidate's process does to itself.
STUB_FAILS = Stopped(Outcome.FAILED, r"AssertionError: None != 10[\s\S]*2 passed, 12 failed")
CANDIDATE_EXITED = Stopped(Outcome.ERROR, r"crash: the candidate's process ended \(code 0\)")
NOT_A_MESSAGE = Stopped(
    Outcome.TAMPERED,
    "the candidate's process broke the protocol: a message that is neither a request nor a reply",
)
STUB_ATTACKS = {
    "exits_0_at_import": StubAttack(
        "import os\nos._exit(0)\n",
        beside=Stopped(Outcome.ERROR, "did not finish"),
        apart=CANDIDATE_EXITED,
    ),
    "sys_exit_at_import": StubAttack(
        "import sys\nsys.exit(0)\n",
        beside=Stopped(Outcome.ERROR, "failed to import"),
        apart=Stopped(Outcome.ERROR, r"candidate\.SystemExit: 0[\s\S]*failed to import"),
    ),
    "atexit_exits_0": StubAttack(
        "import atexit, os\natexit.register(lambda: os._exit(0))\n",
        beside=Stopped(Outcome.FAILED, "failed"),
        apart=STUB_FAILS,
    ),
    "patches_unittest": StubAttack(
        "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "unittest.TestCase.assertIs = lambda *a, **k: None\n",
        beside=Stopped(Outcome.TAMPERED, "planted to fail reported passed"),
        apart=STUB_FAILS,
    ),
    "patches_builtins": StubAttack(
        "import builtins\nbuiltins.AssertionError = type('Never', (Exception,), {})\n",
        beside=Stopped(Outcome.TAMPERED, "changed the test machinery"),
        apart=STUB_FAILS,
    ),
    "writes_conftest_and_pytest_ini": StubAttack(
        "open('conftest.py', 'w').write('import pytest\\n')\n"
        "open('pytest.ini', 'w').write('[pytest]\\naddopts = -p no:python\\n')\n",
        beside=Stopped(Outcome.FAILED, "failed"),
        apart=STUB_FAILS,
    ),
    "replaces_the_test_file": StubAttack(
        "open('react_test.py', 'w').write('def test_nothing():\\n    pass\\n')\n",
        beside=Stopped(Outcome.FAILED, "failed"),
        apart=STUB_FAILS,
    ),
    "prints_a_fake_summary": StubAttack(
        "print('=================== 14 passed in 0.01s ===================')\n",
        beside=Stopped(Outcome.FAILED, "failed"),
        apart=STUB_FAILS,
    ),
    "closes_the_reporter": StubAttack(
        "import os\nos.close(11)\n",
        beside=Stopped(Outcome.ERROR, "did not finish"),
        apart=CANDIDATE_EXITED,
    ),
    "kills_its_process": StubAttack(
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        beside=Stopped(Outcome.ERROR, "signal 9"),
        apart=Stopped(Outcome.ERROR, r"crash: the candidate's process ended \(signal 9\)"),
    ),
    "writes_unsigned_records": StubAttack(
        "import json, os\n"
        "for name in ('test_input_cells_have_a_value',):\n"
        "    os.write(11, (json.dumps({'test': 'react_test.py::ReactTest::' + name,\n"
        "                              'outcome': 'passed'}) + '\\n').encode())\n"
        "os.write(11, b'{\"end\": 14}\\n')\nos._exit(0)\n",
        beside=Stopped(Outcome.ERROR, "not this run's"),
        apart=NOT_A_MESSAGE,
    ),
    "floods_unsigned_records": StubAttack(
        'import os\nfor _ in range(3000):\n    os.write(11, b\'{"tampered": "x"}\\n\')\n'
        "os._exit(0)\n",
        beside=Stopped(Outcome.ERROR, r"3000 record\(s\) that are not this run's"),
        apart=NOT_A_MESSAGE,
    ),
}


@pytest.mark.parametrize("beside", [True, False], ids=["beside", "apart"])
@pytest.mark.parametrize("attack", sorted(STUB_ATTACKS))
def test_a_workspace_attack_does_not_pass(attack: str, beside: bool, sandbox: Sandbox) -> None:
    """Each attack goes in front of the react exercise's stub, which fails every test:
    had it worked, the stub would pass. Beside the candidate's files (as a task of
    trust level in-sandbox is judged), the tests run in its process. Apart (react's
    own trust level, trusted-side), they run in a sandbox of their own: the
    candidate's process has neither the test machinery nor the channel to the trusted
    side, and its descriptor 11 leads to the tests' process, to which a record is no
    message. The evidence says what stopped it; a run caught tampering gets no
    feedback."""
    expected = STUB_ATTACKS[attack].beside if beside else STUB_ATTACKS[attack].apart
    task = load_exercise(POLYGLOT / "exercises" / "react", "polyglot-python")
    files = {"react.py": STUB_ATTACKS[attack].code + dict(task.files)["react.py"]}
    verdict = judge_workspace(files, task, sandbox, WORKSPACE_LIMITS, beside=beside)
    shown = f"{verdict.detail}\n{verdict.visible_output}"
    assert verdict.outcome is expected.outcome, shown
    assert re.search(expected.evidence, shown), shown
    if expected.outcome is Outcome.TAMPERED:
        assert verdict.feedback is None
    else:
        assert verdict.feedback is not None and len(verdict.feedback) <= 4000
