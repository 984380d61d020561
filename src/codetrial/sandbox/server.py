"""The host side of a sandbox worker: start it, talk to it, kill it.

A worker is a long-lived fork server (see worker.py). Each candidate gets a Session:
a fresh child process, forked from the warm server, limited, and spoken to in plain
data. Every wait has a deadline; on a deadline, an oversized message or anything
that breaks the protocol, the host kills the whole worker (and with it every process
in its namespace) and starts a new one for the next candidate.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from codetrial.config import Limits
from codetrial.errors import SandboxError
from codetrial.sandbox import codec
from codetrial.sandbox.cgroup import Cgroup
from codetrial.sandbox.launch import Launch

START_TIMEOUT_S = 20.0
MESSAGE_CAP = 64 * 1024 * 1024


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
    """A candidate raised an exception that is not a built-in one."""


@dataclass(frozen=True)
class ChildExit:
    code: int | None
    signal: int | None
    cpu_s: float
    overflow: bool
    output: str


class _Expired(Exception):
    pass


class _Broken(Exception):
    pass


class Worker:
    """One fork server process and the pipe to it."""

    def __init__(self, launch: Callable[[], Launch], limits: Limits, use_cgroup: bool) -> None:
        self._launch = launch
        self._limits = limits
        self._use_cgroup = use_cgroup
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self.cgroup: Cgroup | None = None
        self.seccomp = False

    def ensure(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self.kill()
        launch = self._launch()
        if self._use_cgroup:
            memory = (self._limits.memory_mb + 2 * self._limits.scratch_mb + 64) * 1024 * 1024
            self.cgroup = Cgroup.create(memory, self._limits.max_processes)
        join = self.cgroup.add if self.cgroup else None
        try:
            self._proc = subprocess.Popen(
                launch.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=launch.env,
                start_new_session=True,
                preexec_fn=(lambda: join(os.getpid())) if join else None,
            )
        except OSError as exc:
            raise SandboxError(f"could not start the sandbox ({launch.argv[0]}): {exc}") from exc
        try:
            ready = self.receive(time.monotonic() + START_TIMEOUT_S)["ready"]
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

    def send(self, message: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(message, allow_nan=False).encode() + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise _Broken(str(exc)) from exc

    def receive(self, deadline: float) -> dict[str, Any]:
        """The next message of the server's; raises _Expired or _Broken."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Expired()
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                if not selector.select(remaining):
                    continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise _Broken("the sandbox worker closed its pipe")
            self._buffer += chunk
            if len(self._buffer) > MESSAGE_CAP:
                raise _Broken("message over the size cap")
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError as exc:
            raise _Broken("malformed message") from exc
        if not isinstance(message, dict):
            raise _Broken("malformed message")
        return message

    def kill(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
            for pipe in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                if pipe is not None:
                    pipe.close()
            self._proc = None
        self._buffer = b""
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None


def _rebuild_exception(raised: Any) -> BaseException:
    if not isinstance(raised, dict):
        return CandidateError("an exception the candidate described malformedly")
    kind = getattr(builtins, str(raised.get("type")), None)
    message = str(raised.get("message", ""))
    if isinstance(kind, type) and issubclass(kind, Exception):
        with contextlib.suppress(TypeError):
            return kind(message)
    return CandidateError(f"{raised.get('type')}: {message}")


class Session:
    """One candidate, loaded in a fresh child; calls go in and plain data comes back."""

    def __init__(self, worker: Worker, code: str, limits: Limits) -> None:
        self._worker = worker
        self._limits = limits
        self.deadline = time.monotonic() + limits.timeout_s
        self.stop: Stop | None = None
        self.stop_detail = ""
        self.exit: ChildExit | None = None
        self.functions: tuple[str, ...] = ()
        self.load_error: str | None = None
        self._ending = False
        worker.ensure()
        oom_before = worker.cgroup.oom_kills() if worker.cgroup else 0
        self._oom_before = oom_before
        limit_fields = ("cpu_s", "memory_mb", "file_size_mb", "open_files")
        self._exchange(
            {"op": "spawn", "code": code, "limits": {k: getattr(limits, k) for k in limit_fields}}
        )

    def _exchange(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """Send a request; the child's reply, or None when the child is gone."""
        if self.stop is not None or self.exit is not None:
            return None
        try:
            self._worker.send(request)
            message = self._worker.receive(self.deadline)
            if "exited" in message:
                self._child_gone(message["exited"])
                return None
            reply = json.loads(message["child"])
            if not isinstance(reply, dict):
                raise _Broken("malformed reply")
        except _Expired:
            self._halt(Stop.TIMEOUT, f"no answer within {self._limits.timeout_s:g} s wall")
            return None
        except (_Broken, KeyError, ValueError, TypeError) as exc:
            self._halt(Stop.CRASH, f"the candidate broke the protocol ({exc})")
            return None
        if "loaded" in reply:
            self.functions = tuple(str(name) for name in reply["loaded"])
        elif "load_error" in reply:
            error = reply["load_error"]
            self.load_error = f"{error.get('type')}: {error.get('message')}"
        return reply

    def _halt(self, stop: Stop, detail: str) -> None:
        self.stop, self.stop_detail = stop, detail
        self._worker.kill()

    def _child_gone(self, exited: dict[str, Any]) -> None:
        self.exit = ChildExit(
            code=exited.get("code"),
            signal=exited.get("signal"),
            cpu_s=float(exited.get("cpu_s", 0.0)),
            overflow=bool(exited.get("overflow")),
            output=str(exited.get("output", "")),
        )
        if self.exit.overflow:
            self.stop, self.stop_detail = Stop.OUTPUT_LIMIT, "a message over the size cap"
        elif self.exit.signal == signal.SIGXCPU or self.exit.cpu_s >= self._limits.cpu_s:
            self.stop, self.stop_detail = Stop.TIMEOUT, f"over {self._limits.cpu_s} s of CPU"
        elif self._worker.cgroup and self._worker.cgroup.oom_kills() > self._oom_before:
            self.stop, self.stop_detail = Stop.MEMORY, "killed by the memory limit"
        elif not (self._ending and self.exit.code == 0) and self.load_error is None:
            how = f"signal {self.exit.signal}" if self.exit.signal else f"code {self.exit.code}"
            self.stop, self.stop_detail = Stop.CRASH, f"the candidate's process ended ({how})"

    def call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Call the candidate's function; mutations of the arguments are mirrored back
        into the caller's objects, and a raised built-in exception is raised here."""
        try:
            encoded = [codec.encode(a) for a in args], codec.encode(kwargs)
        except codec.NotPlainData as exc:
            raise TypeError(f"only plain data can be passed to a candidate: {exc}") from exc
        reply = self._exchange({"op": "call", "name": name, "args": encoded[0],
                                "kwargs": encoded[1]})  # fmt: skip
        if reply is None:
            raise LimitHit(self.stop or Stop.CRASH, self.stop_detail)
        if "oversize" in reply:
            self._halt(Stop.OUTPUT_LIMIT, f"a reply over the size cap ({reply['oversize']})")
            raise LimitHit(Stop.OUTPUT_LIMIT, self.stop_detail)
        try:
            if reply.get("args") is not None:
                for index, after in enumerate(codec.decode(reply["args"])[: len(args)]):
                    codec.mirror(args[index], after)
            value = (
                codec.decode(reply["ok"], lambda p: codec.follow(args, p))
                if "ok" in reply
                else None
            )
        except (codec.NotPlainData, IndexError, KeyError, TypeError, ValueError) as exc:
            self._halt(Stop.CRASH, f"the candidate broke the protocol ({exc})")
            raise LimitHit(Stop.CRASH, self.stop_detail) from exc
        if "raised" in reply:
            raise _rebuild_exception(reply["raised"])
        if "unplain" in reply:
            raise AssertionError(f"{name}() returned a {reply['unplain']}, which is not plain data")
        if "ok" not in reply:
            self._halt(Stop.CRASH, "the candidate broke the protocol (no result)")
            raise LimitHit(Stop.CRASH, self.stop_detail)
        return value

    def end(self) -> ChildExit | None:
        """Tell the child to exit and collect how it ended."""
        if self.stop is None and self.exit is None:
            self._ending = True
            try:
                self._worker.send({"op": "end"})
                while self.exit is None:
                    message = self._worker.receive(self.deadline)
                    if "exited" in message:
                        self._child_gone(message["exited"])
            except _Expired:
                self._halt(Stop.TIMEOUT, f"did not exit within {self._limits.timeout_s:g} s")
            except _Broken as exc:
                self._halt(Stop.CRASH, f"the worker broke ({exc})")
        return self.exit
