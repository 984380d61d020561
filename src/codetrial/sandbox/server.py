"""The host side of a sandbox worker: start it, talk to it, kill it.

A worker is a long-lived fork server (see worker.py) reached through a control
socket. Each candidate gets a Session: a fresh child forked from the warm server, on
a fresh pair of pipes that only it and the host hold, spoken to in plain data. Every
wait has a deadline; on a deadline, an oversized message or anything that breaks the
protocol, the host kills the whole worker (and with it every process in its
namespace) and starts a new one for the next candidate.
"""

from __future__ import annotations

import array
import base64
import builtins
import contextlib
import dataclasses
import json
import math
import os
import select
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import codetrial.sandbox.codec as codec
from codetrial.config import Limits
from codetrial.errors import SandboxError
from codetrial.sandbox.cgroup import Cgroup
from codetrial.sandbox.launch import Launch

START_TIMEOUT_S = 20.0
EXIT_TIMEOUT_S = 5.0
REAP_TIMEOUT_S = 1.0
RUN_WALL_MARGIN_S = 1.0
MESSAGE_CAP = 64 * 1024 * 1024
READ_SIZE = 65536


class Stop(StrEnum):
    """Why a candidate's process ended before its run was over."""

    TIMEOUT = "timeout"
    MEMORY = "memory"
    OUTPUT_LIMIT = "output_limit"
    CRASH = "crash"


class LimitHit(BaseException):
    """Raised into the trusted test code when the candidate's process was stopped.

    A BaseException, so a test's `except Exception` or `pytest.raises(Exception)`
    cannot swallow it.
    """

    def __init__(self, stop: Stop, detail: str) -> None:
        super().__init__(f"{stop.value}: {detail}")
        self.stop = stop


class CandidateError(Exception):
    """A candidate raised an exception that is not a built-in one; `type_name` is the
    name of its class."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name


class CallTimeout(Exception):
    """A call given `cpu_s` ran past it and was cut short; the candidate's process
    lives on."""


@dataclass(frozen=True)
class ChildExit:
    """How a child ended, as the server saw it: its exit, and its CPU seconds and
    peak resident memory (KiB) from the kernel's accounting, which the child
    cannot touch."""

    code: int | None
    signal: int | None
    cpu_s: float
    peak_kb: int

    @classmethod
    def of(cls, exited: dict[str, Any]) -> ChildExit:
        return cls(
            code=exited.get("code"),
            signal=exited.get("signal"),
            cpu_s=float(exited.get("cpu_s", 0.0)),
            peak_kb=int(exited.get("peak_kb", 0)),
        )


class _Expired(Exception):
    pass


class Break(StrEnum):
    """How a channel to a sandboxed process broke."""

    CLOSED = "the other side closed its end"
    OVERSIZE = "a message over the size cap"
    MALFORMED = "a malformed message"
    UNSENT = "a message could not be sent"
    UNEXPECTED = "an unexpected message"


class _Broken(Exception):
    def __init__(self, reason: Break, detail: str = "") -> None:
        super().__init__(f"{reason.value} ({detail})" if detail else reason.value)
        self.reason = reason


class _Lines:
    """Newline-framed JSON objects read from a descriptor, with deadline and cap."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def next(self, deadline: float) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Expired()
            if not self._poll.poll(remaining * 1000):
                continue
            chunk = os.read(self.fd, READ_SIZE)
            if not chunk:
                raise _Broken(Break.CLOSED)
            self._buffer += chunk
            if len(self._buffer) > MESSAGE_CAP:
                raise _Broken(Break.OVERSIZE)
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError as exc:
            raise _Broken(Break.MALFORMED) from exc
        if not isinstance(message, dict):
            raise _Broken(Break.MALFORMED)
        return message


class Worker:
    """One fork server process and the control socket to it."""

    def __init__(self, launch: Callable[[int], Launch], limits: Limits, use_cgroup: bool) -> None:
        self._launch = launch
        self._limits = limits
        self._use_cgroup = use_cgroup
        self._proc: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._lines: _Lines | None = None
        self._scratch: str | None = None
        self._monitor = False
        self.child_running = False
        self.cgroup: Cgroup | None = None
        self.seccomp = False

    def ensure(self) -> None:
        """Start the worker if it is not running, and collect the last child's exit."""
        if self._proc is not None and self._proc.poll() is None:
            if self.child_running:
                self.collect()
            if self._proc is not None:
                return
        self.kill()
        ours, theirs = socket.socketpair()
        launch = self._launch(theirs.fileno())
        self._scratch = str(launch.scratch) if launch.scratch else None
        self._monitor = launch.monitor
        if self._use_cgroup:
            memory = (self._limits.memory_mb + 2 * self._limits.scratch_mb + 64) * 1024 * 1024
            self.cgroup = Cgroup.create(memory, self._limits.max_processes)
        join = self.cgroup.add if self.cgroup else None
        try:
            self._proc = subprocess.Popen(
                launch.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=launch.env,
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
                preexec_fn=(lambda: join(os.getpid())) if join else None,
            )
        except OSError as exc:
            ours.close()
            raise SandboxError(f"could not start the sandbox ({launch.argv[0]}): {exc}") from exc
        finally:
            theirs.close()
        self._control = ours
        self._lines = _Lines(ours.fileno())
        try:
            ready = self._lines.next(time.monotonic() + START_TIMEOUT_S)["ready"]
        except (_Expired, _Broken, KeyError) as exc:
            detail = self._stderr()
            self.kill()
            raise SandboxError(f"the sandbox did not start: {detail or exc}") from exc
        self.seccomp = bool(ready.get("seccomp"))

    def _stderr(self) -> str:
        if self._proc is None or self._proc.stderr is None:
            return ""
        with contextlib.suppress(OSError):
            os.set_blocking(self._proc.stderr.fileno(), False)
            return (self._proc.stderr.read(4000) or b"").decode("utf-8", "replace").strip()
        return ""

    def spawn(self, message: dict[str, Any], *ends: int) -> None:
        """Ask the server to fork a child on these pipe ends (two, or four: see
        worker.py)."""
        assert self._control is not None
        fds = array.array("i", ends)
        data = json.dumps(message, allow_nan=False).encode() + b"\n"
        try:
            sent = self._control.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            self._control.sendall(data[sent:])
        except OSError as exc:
            raise _Broken(Break.UNSENT, str(exc)) from exc
        self.child_running = True

    def exited(self, deadline: float) -> dict[str, Any]:
        """The server's report on the child that just ended."""
        assert self._lines is not None
        message = self._lines.next(deadline).get("exited")
        if not isinstance(message, dict):
            raise _Broken(Break.UNEXPECTED, "from the server")
        self.child_running = False
        return message

    def collect(self) -> dict[str, Any] | None:
        """The running child's exit, once it has exited; None, and the worker killed,
        when it does not report within EXIT_TIMEOUT_S."""
        try:
            return self.exited(time.monotonic() + EXIT_TIMEOUT_S)
        except (_Expired, _Broken):
            self.kill()
            return None

    def kill(self) -> None:
        if self._proc is not None:
            _end(self._proc, self._monitor)
            if self._proc.stderr is not None:
                self._proc.stderr.close()
            self._proc = None
        if self._control is not None:
            self._control.close()
            self._control = None
        self._lines = None
        self.child_running = False
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


def _end(proc: subprocess.Popen[bytes], monitor: bool) -> None:
    """Kill a worker and its children, and reap it. A `monitor` (bubblewrap) reaps its
    child itself and then exits: given the time, so that the namespace's first process
    does not stay a zombie for init to collect."""
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split():
            os.kill(int(child), signal.SIGKILL)
    if monitor:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(REAP_TIMEOUT_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _rebuild_exception(raised: Any) -> BaseException:
    if not isinstance(raised, dict):
        return CandidateError("?", "an exception the candidate described malformedly")
    kind = getattr(builtins, str(raised.get("type")), None)
    message = str(raised.get("message", ""))
    error: BaseException = CandidateError(str(raised.get("type")), message)
    if isinstance(kind, type) and issubclass(kind, Exception):
        with contextlib.suppress(TypeError):
            error = kind(message)
    if raised.get("trace"):
        error.add_note(f"raised in the candidate:\n{raised['trace']}".rstrip())
    return error


def _child_limits(limits: Limits) -> dict[str, int]:
    """The limits a child sets on itself (see worker.py), and whether it may start
    processes (its seccomp filter)."""
    kept = {k: getattr(limits, k) for k in ("cpu_s", "memory_mb", "file_size_mb", "open_files")}
    return kept | {"processes": int(limits.allow_processes)}


def _stopped_by(
    exit: ChildExit, worker: Worker, oom_before: int, limits: Limits
) -> tuple[Stop, str] | None:
    """The limit that ended a child that has exited, read from its exit and its
    worker's cgroup; None when none did."""
    if exit.signal == signal.SIGXCPU or exit.cpu_s >= limits.cpu_s:
        return Stop.TIMEOUT, f"over {limits.cpu_s} s of CPU"
    if worker.cgroup and worker.cgroup.oom_kills() > oom_before:
        return Stop.MEMORY, "killed by the memory limit"
    return None


def _how(exit: ChildExit) -> str:
    return f"signal {exit.signal}" if exit.signal else f"code {exit.code}"


class _Child:
    """A fresh child of the worker for one spawn request: its pipes, its deadline, and
    why it stopped. `finished` is set once the child has said all it will say, so that
    its exit is expected rather than a crash."""

    def __init__(
        self, worker: Worker, request: dict[str, Any], limits: Limits, peer: tuple[int, ...] = ()
    ) -> None:
        """`peer`: two more pipe ends the child gets, after the host's (see worker.py)."""
        self._worker = worker
        self._limits = limits
        self.stop: Stop | None = None
        self.stop_detail = ""
        self.exit: ChildExit | None = None
        self.report: dict[str, Any] = {}
        self.finished = False
        worker.ensure()
        self.deadline = time.monotonic() + limits.timeout_s
        self._oom_before = worker.cgroup.oom_kills() if worker.cgroup else 0
        to_child_r, self._to_child = os.pipe()
        from_child, from_child_w = os.pipe()
        self._from_child = _Lines(from_child)
        try:
            worker.spawn(
                {"op": "spawn", **request, "limits": _child_limits(limits)},
                to_child_r,
                from_child_w,
                *peer,
            )
        except _Broken as exc:
            self._halt(Stop.CRASH, f"the worker broke ({exc})")
        finally:
            os.close(to_child_r)
            os.close(from_child_w)

    def _receive(self, deadline: float) -> dict[str, Any] | None:
        """The child's next message, or None when it is gone (and why is recorded)."""
        if self.stop is not None or self.exit is not None:
            return None
        try:
            return self._from_child.next(deadline)
        except _Expired:
            self._halt(Stop.TIMEOUT, f"no answer within {self._limits.timeout_s:g} s wall")
        except _Broken as exc:
            if exc.reason is Break.CLOSED:
                self._child_gone(deadline)
            else:
                self._halt(
                    Stop.OUTPUT_LIMIT if exc.reason is Break.OVERSIZE else Stop.CRASH, str(exc)
                )
        return None

    def _send(self, message: dict[str, Any], deadline: float) -> bool:
        try:
            data = json.dumps(message, allow_nan=False).encode() + b"\n"
            while data:
                data = data[os.write(self._to_child, data) :]
        except BrokenPipeError:
            self._child_gone(deadline)
            return False
        return True

    def _halt(self, stop: Stop, detail: str) -> None:
        self.stop, self.stop_detail = stop, detail
        self._worker.kill()

    def _child_gone(self, deadline: float) -> None:
        """The child closed its pipe: ask the server how it ended."""
        try:
            self.report = self._worker.exited(deadline + EXIT_TIMEOUT_S)
            self.exit = ChildExit.of(self.report)
        except (_Expired, _Broken) as exc:
            self._halt(Stop.CRASH, f"the worker did not report the exit ({exc})")
            return
        stopped = _stopped_by(self.exit, self._worker, self._oom_before, self._limits)
        if stopped is None and not self.finished:
            stopped = Stop.CRASH, f"the candidate's process ended ({_how(self.exit)})"
        if stopped is not None:
            self.stop, self.stop_detail = stopped

    def end(self) -> None:
        """Close the child's input, so it exits, and collect its exit (and so its
        usage) when it is still running. A child that does not exit in time goes with
        its worker."""
        with contextlib.suppress(OSError):
            os.close(self._to_child)
        with contextlib.suppress(OSError):
            os.close(self._from_child.fd)
        if self.exit is None and self._worker.child_running:
            exited = self._worker.collect()
            self.exit = ChildExit.of(exited) if exited is not None else None


class Session(_Child):
    """One candidate, loaded in a fresh child; calls go in and plain data comes back."""

    def __init__(self, worker: Worker, code: str, limits: Limits) -> None:
        self.functions: tuple[str, ...] = ()
        self.load_error: str | None = None
        self.child_cpu_s = 0.0
        super().__init__(worker, {"code": code}, limits)
        reply = self._receive(self.deadline)
        if reply is not None and "loaded" in reply:
            self.functions = tuple(str(name) for name in reply["loaded"])
        elif reply is not None and "load_error" in reply:
            error = reply["load_error"]
            self.load_error = f"{error.get('type')}: {error.get('message')}"
            self.finished = True

    def call(
        self, name: str, args: list[Any], kwargs: dict[str, Any], cpu_s: float | None = None
    ) -> Any:
        """Call the candidate's function; mutations of the arguments are mirrored back
        into the caller's objects, and a raised built-in exception is raised here.
        With `cpu_s`, the call is cut short after that much CPU time in the child and
        raises CallTimeout here."""
        __tracebackhide__ = True  # test reports show the candidate's frames, not these
        try:
            encoded = [codec.encode(a) for a in args], codec.encode(kwargs)
        except codec.NotPlainData as exc:
            raise TypeError(f"only plain data can be passed to a candidate: {exc}") from exc
        request = {"op": "call", "name": name, "args": encoded[0], "kwargs": encoded[1]}
        if cpu_s is not None:
            request["cpu_s"] = cpu_s
        reply = self._exchange(request, cpu_s)
        if "oversize" in reply:
            self._halt(Stop.OUTPUT_LIMIT, f"a reply over the size cap ({reply['oversize']})")
            raise LimitHit(Stop.OUTPUT_LIMIT, self.stop_detail)
        try:
            if reply.get("args") is not None:
                for index, after in enumerate(codec.decode(reply["args"])[: len(args)]):
                    codec.mirror(args[index], after)
            value = (
                codec.decode(reply["ok"], lambda path: codec.follow(args, path))
                if "ok" in reply
                else None
            )
        except (codec.NotPlainData, IndexError, KeyError, TypeError, ValueError) as exc:
            self._halt(Stop.CRASH, f"the candidate broke the protocol ({exc})")
            raise LimitHit(Stop.CRASH, self.stop_detail) from exc
        if "raised" in reply:
            raise _rebuild_exception(reply["raised"])
        if "over_time" in reply:
            raise CallTimeout(f"{name}() ran past {reply['over_time']} s of CPU")
        if "unplain" in reply:
            raise AssertionError(f"{name}() returned a {reply['unplain']}, which is not plain data")
        if "ok" not in reply:
            self._halt(Stop.CRASH, "the candidate broke the protocol (no result)")
            raise LimitHit(Stop.CRASH, self.stop_detail)
        return value

    def run(self, sources: Sequence[str], cpu_s: float) -> list[bool]:
        """Run pieces of untrusted test code (say, tests a model wrote) one after
        another in the candidate's own process and namespace, in one request, each
        within `cpu_s` CPU seconds there, all within a wall backstop here: which
        completed without raising (a reply that does not say, none). A stopped child
        raises LimitHit. `child_cpu_s` then holds the CPU time the child reports having
        used so far."""
        request = {"op": "run", "sources": list(sources), "cpu_s": cpu_s}
        reply = self._exchange(request, cpu_s * len(sources))
        with contextlib.suppress(TypeError, ValueError):
            self.child_cpu_s = float(reply.get("cpu_s", 0.0))
        ran = reply.get("ran")
        if not isinstance(ran, list) or len(ran) != len(sources):
            return [False] * len(sources)
        return [flag is True for flag in ran]

    def _exchange(self, request: dict[str, Any], cpu_s: float | None = None) -> dict[str, Any]:
        """Send a request and wait for its reply; with `cpu_s`, the wall deadline is
        that plus a margin (never beyond the session's). A stopped child raises LimitHit."""
        deadline = self.deadline
        if cpu_s is not None:
            deadline = min(deadline, time.monotonic() + cpu_s + RUN_WALL_MARGIN_S)
        sent = self.stop is None and self._send(request, deadline)
        reply = self._receive(deadline) if sent else None
        if reply is None:
            raise LimitHit(self.stop or Stop.CRASH, self.stop_detail)
        return reply


class TestRun(_Child):
    """A workspace's tests, run by the in-sandbox runner next to the candidate's files
    (see testrun.py, pytestrun.py when `pytest` says how to run a repository's
    tests, and nativerun.py when `native` names a compiled language's steps).
    `records` yields what the runner sends, as it comes, until the child ends;
    `stop` then says whether a limit or a crash ended it first."""

    __test__ = False

    def __init__(
        self,
        worker: Worker,
        files: dict[str, str],
        tests: dict[str, str],
        *,
        nonce: str,
        limits: Limits,
        blobs: dict[str, bytes],
        pytest: dict[str, Any] | None,
        guarded: bool,
        native: dict[str, Any] | None = None,
    ) -> None:
        spec: dict[str, Any] = {"files": files, "tests": tests, "nonce": nonce}
        if native is not None:
            spec["native"] = native
        if not guarded:
            spec["guarded"] = False
        if blobs:
            spec["blobs"] = {path: base64.b64encode(data).decode() for path, data in blobs.items()}
        if pytest is not None:
            spec["pytest"] = pytest
        super().__init__(worker, {"workspace": spec}, limits)

    def records(self) -> Iterator[dict[str, Any]]:
        while (record := self._receive(self.deadline)) is not None:
            if "end" in record:
                self.finished = True
            yield record

    @property
    def exits(self) -> tuple[ChildExit | None, ...]:
        """How each process of the run ended (None where the host had to stop it)."""
        return (self.exit,)


class SplitRun(TestRun):
    """A workspace's tests, run in a child of `peer` (a sandbox of their own) while a
    child of `worker` holds the candidate's files and serves the tests' requests on
    its objects (see remote.py). The two children talk over pipes of their own; the
    host reads the tests' records, as from a TestRun, and how each child ended. A
    limit or an exit that ends the candidate's child ends the run: `stop` says which."""

    def __init__(
        self,
        worker: Worker,
        peer: Worker,
        files: dict[str, str],
        tests: dict[str, str],
        *,
        nonce: str,
        limits: Limits,
        modules: dict[str, str],
        imports: list[str],
        cpu: int,
    ) -> None:
        """`imports`: the candidate's modules its child imports as it starts; `cpu`:
        the processor both children keep to."""
        self._candidate = worker
        self.candidate_exit: ChildExit | None = None
        self._reported: set[str] = set()
        candidate_in, tests_out = os.pipe()
        tests_in, candidate_out = os.pipe()
        spawned = True
        try:
            worker.ensure()
            self._candidate_oom = worker.cgroup.oom_kills() if worker.cgroup else 0
            request = {
                "op": "spawn",
                "serve": {"files": files, "imports": imports},
                "limits": _child_limits(limits),
                "cpu": cpu,
            }
            worker.spawn(request, candidate_in, candidate_out)
        except _Broken:
            spawned = False
        finally:
            os.close(candidate_in)
            os.close(candidate_out)
        spec = {"tests": tests, "nonce": nonce, "modules": modules}
        try:
            tests_child = {"workspace": spec, "cpu": cpu}
            _Child.__init__(self, peer, tests_child, limits, peer=(tests_in, tests_out))
        finally:
            os.close(tests_in)
            os.close(tests_out)
        if not spawned:
            self._halt(Stop.CRASH, "the candidate's worker broke")

    def records(self) -> Iterator[dict[str, Any]]:
        for record in super().records():
            self._reported.update(key for key in ("gone", "oversize") if key in record)
            yield record

    def _halt(self, stop: Stop, detail: str) -> None:
        super()._halt(stop, detail)
        self._candidate.kill()

    def end(self) -> None:
        """End the tests' child, then collect the candidate's, which exits once the
        tests' child is gone, and say which limit (if any) ended the candidate's."""
        super().end()
        if self._candidate.child_running:
            exited = self._candidate.collect()
            self.candidate_exit = ChildExit.of(exited) if exited is not None else None
        if self.stop is not None or self.candidate_exit is None:
            return
        exit = self.candidate_exit
        stopped = _stopped_by(exit, self._candidate, self._candidate_oom, self._limits)
        if stopped is None and "oversize" in self._reported:
            stopped = Stop.OUTPUT_LIMIT, "a reply over the size cap"
        if stopped is None and "gone" in self._reported:
            stopped = Stop.CRASH, f"the candidate's process ended ({_how(exit)})"
        if stopped is not None:
            self.stop, self.stop_detail = stopped

    @property
    def exits(self) -> tuple[ChildExit | None, ...]:
        return (self.exit, self.candidate_exit)


@dataclass(frozen=True)
class Left:
    """What a program left behind: the start of its standard output, the end of its
    standard error, the files it wrote in its output folder (within the caps;
    `skipped` names the others), the exception it raised ({"type", "message",
    "trace"}) and the data of the charts it saved ([{"file", "axes"}]). A run given
    an output cap also has its whole standard output up to the cap (`output`) and
    that output's size in bytes (`output_size`)."""

    stdout: str = ""
    stderr: str = ""
    files: dict[str, bytes] = dataclasses.field(default_factory=dict)
    skipped: tuple[str, ...] = ()
    raised: dict[str, str] | None = None
    figures: tuple[dict[str, Any], ...] = ()
    output: bytes = b""
    output_size: int = 0

    @classmethod
    def of(cls, report: Any) -> Left:
        """Read from the server's report, which holds what the program could write:
        anything malformed is left out, and text is made valid UTF-8."""
        if not isinstance(report, dict):
            return cls()
        files, raised, skipped = (report.get(key) for key in ("files", "raised", "skipped"))
        output = _decoded({"output": report.get("output")}).get("output", b"")
        size = report.get("output_size")
        return cls(
            stdout=_text(report.get("stdout", "")),
            stderr=_text(report.get("stderr", "")),
            files=_decoded(files if isinstance(files, dict) else {}),
            skipped=tuple(_text(n) for n in skipped) if isinstance(skipped, list) else (),
            raised={_text(k): _text(v) for k, v in raised.items()}
            if isinstance(raised, dict)
            else None,
            figures=_figures(report.get("figures")),
            output=output,
            output_size=size if isinstance(size, int) and size >= 0 else len(output),
        )


def _text(value: Any) -> str:
    return str(value).encode("utf-8", "replace").decode("utf-8")


def _decoded(files: dict[Any, Any]) -> dict[str, bytes]:
    decoded = {}
    for name, data in files.items():
        if isinstance(name, str) and _text(name) == name and isinstance(data, str):
            with contextlib.suppress(ValueError):
                decoded[name] = base64.b64decode(data, validate=True)
    return decoded


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _figures(raw: Any) -> tuple[dict[str, Any], ...]:
    """Saved charts as [{"file", "axes": [{"title", "series": [{"kind", "label",
    "y"}]}]}], whatever shape the report had."""
    figures = []
    for figure in raw if isinstance(raw, list) else []:
        if not isinstance(figure, dict) or not isinstance(figure.get("file"), str):
            continue
        axes = []
        found = figure.get("axes")
        for ax in found if isinstance(found, list) else []:
            if not isinstance(ax, dict) or not isinstance(ax.get("series"), list):
                continue
            series = [
                {
                    "kind": _text(one.get("kind", "")),
                    "label": _text(one.get("label", "")),
                    "y": [_number(v) for v in one["y"]],
                }
                for one in ax["series"]
                if isinstance(one, dict) and isinstance(one.get("y"), list)
            ]
            axes.append({"title": _text(ax.get("title", "")), "series": series})
        figures.append({"file": _text(figure["file"]), "axes": axes})
    return tuple(figures)


class ProgramRun(_Child):
    """A program, run as __main__ in an empty output folder (see worker.py). The run
    is over when the constructor returns: `exit` and `stop` say how it ended (an
    exit of any code is the program's own), `left` what it left behind (nothing when
    a limit or a crash took the whole worker). `stdin`: the text its standard input
    reads (else /dev/null); `output_cap`: the bytes of standard output it may write,
    all of which `left.output` holds: more is the stop "output_limit"."""

    def __init__(
        self,
        worker: Worker,
        code: str,
        limits: Limits,
        *,
        stdin: str | None = None,
        output_cap: int | None = None,
    ) -> None:
        program: dict[str, Any] = {"code": code}
        if stdin is not None:
            program["input"] = stdin
        if output_cap is not None:
            program["output_cap"] = output_cap
        super().__init__(worker, {"program": program}, limits)
        self.finished = True  # a program ends by exiting, so its exit is no crash
        while self._receive(self.deadline) is not None:
            pass  # the program may write on its channel; nothing it says is read
        if self.stop is None and self.exit is not None and self.exit.signal is not None:
            if self.exit.signal == signal.SIGXFSZ:
                self.stop, self.stop_detail = Stop.OUTPUT_LIMIT, "a file over the size limit"
            else:
                self.stop, self.stop_detail = Stop.CRASH, f"killed by signal {self.exit.signal}"
        self.left = Left.of(self.report.get("program"))
        if self.stop is None and output_cap is not None and self.left.output_size > output_cap:
            self.stop, self.stop_detail = (
                Stop.OUTPUT_LIMIT,
                f"over {output_cap} bytes of standard output",
            )
