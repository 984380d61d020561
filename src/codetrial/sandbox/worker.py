"""The sandboxed side: a fork server that runs one candidate at a time.

Standard library only: it runs inside the sandbox from read-only files, without the
rest of codetrial; the seccomp filter comes compiled, as a BPF file, from the host.
The host holds a control socket to the server and, for each candidate, a fresh pair
of pipes that only that candidate's process ever sees (passed to the server with
SCM_RIGHTS). Messages are JSON lines:

    host -> server    (the two pipe ends) {"op": "spawn", "code", "limits"}
    child -> host     {"loaded": [names]} | {"load_error": {"type", "message"}}
    host -> child     {"op": "call", "name", "args", "kwargs", "cpu_s"?}
    child -> host     {"ok": value, "args": [...]} | {"raised": {...}, "args": [...]}
                      | {"unplain": type name, "args": [...]} | {"over_time": cpu_s}
                      | {"oversize": why}
    host -> child     {"op": "run", "source", "cpu_s"}  (untrusted test code, say
                      tests a model wrote, run in the candidate's namespace)
    child -> host     {"ran": true, "cpu_s"} | {"raised": {...}, "cpu_s"}
                      | {"over_time": cpu_s, "cpu_s"}  (its CPU so far)
    host closes the child's input: the child exits
    server -> host    {"exited": {"code", "signal", "cpu_s", "peak_kb"}}  (its rusage)

"over_time" answers a request that carried `cpu_s` and ran past it: the call was
cut short by a CPU timer, the process lives on.

A spawn may carry a workspace instead of code: {"op": "spawn", "workspace": {"files",
"blobs"?, "tests", "nonce", "pytest"?}, "limits"}. The child writes the candidate's
files (text, and base64 blobs) into its workspace folder and runs the tests there
(see testrun.py; with "pytest", a repository's tests, see pytestrun.py), sending
records instead of taking calls.

A child that takes calls never learns anything of the task's tests: it sees
arguments and returns values, and only code as untrusted as the candidate runs
beside it. Nothing a child prints, writes or exits with is read as evidence of a
pass, and it can never write on the server's channel.
"""

from __future__ import annotations

# Every child compiles a candidate and may format a traceback; both need the AST
# types, which importing ast builds once here rather than in each child.
import ast  # noqa: F401
import base64
import builtins
import contextlib
import json
import linecache
import os
import resource
import shutil
import signal
import socket
import sys
import time
import traceback
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import codec

PROTOCOL_IN, PROTOCOL_OUT = 10, 11
LINE_CAP = 16 * 1024 * 1024
READ_SIZE = 65536
OUTPUT_FILE = "output.txt"
WORKSPACE = "workspace"
_MB = 1024 * 1024


class _Lines:
    """Newline-framed messages from a file descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""

    def next(self) -> dict[str, Any] | None:
        while b"\n" not in self.buffer:
            chunk = os.read(self.fd, READ_SIZE)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        message = json.loads(line)
        if not isinstance(message, dict):
            raise ValueError("a message must be a JSON object")
        return message


def _send(fd: int, message: dict[str, Any]) -> None:
    _write(fd, json.dumps(message, allow_nan=False))


def _write(fd: int, text: str) -> None:
    data = text.encode() + b"\n"
    while data:
        data = data[os.write(fd, data) :]


class _Filter:
    """A compiled seccomp filter (BPF instructions), installed in each child with two
    prctl calls."""

    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2

    def __init__(self, program: bytes) -> None:
        import ctypes

        class _Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        self._code = ctypes.create_string_buffer(program, len(program))
        self._program = _Program(len(program) // 8, ctypes.addressof(self._code))
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl
        self._pointer = ctypes.byref(self._program)

    def install(self) -> None:
        if self._prctl(self.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError("could not set no_new_privs")
        if self._prctl(self.PR_SET_SECCOMP, self.SECCOMP_MODE_FILTER, self._pointer, 0, 0) != 0:
            raise OSError("could not install the seccomp filter")


def _limit(limits: dict[str, int]) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 1))
    memory = limits["memory_mb"] * _MB
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    size = limits["file_size_mb"] * _MB
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"], limits["open_files"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _describe(exc: BaseException) -> dict[str, str]:
    """Type, message and the candidate's own traceback; its __str__ may raise anything."""
    try:
        message = str(exc)
        frames = exc.__traceback__.tb_next if exc.__traceback__ else None
        lines = traceback.format_exception(type(exc), exc, frames)
        trace = "".join(lines[1:][-8:])
    except BaseException:
        message = trace = "<unprintable>"
    return {"type": type(exc).__name__, "message": message[:2000], "trace": trace[-3000:]}


def _call(function: Any, message: dict[str, Any]) -> dict[str, Any]:
    args = codec.decode(message["args"])
    kwargs = codec.decode(message["kwargs"])
    try:
        with _cpu_limited(message.get("cpu_s")):
            result = function(*args, **kwargs)
    except _OverTime:
        return {"over_time": message["cpu_s"], "args": _encode_args(args)}
    except BaseException as exc:
        return {"raised": _describe(exc), "args": _encode_args(args)}
    reply: dict[str, Any] = {"args": _encode_args(args)}
    try:
        reply["ok"] = codec.encode(result, codec.container_paths(args))
    except (codec.NotPlainData, RecursionError):
        reply["unplain"] = type(result).__name__
    return reply


class _OverTime(BaseException):
    """A BaseException, so the candidate's `except Exception` does not hide it."""


def _over_time(signum: int, frame: Any) -> None:
    raise _OverTime("over the CPU time for one test")


@contextlib.contextmanager
def _cpu_limited(cpu_s: float | None) -> Any:
    """Raise _OverTime in the code inside after `cpu_s` CPU seconds, when given."""
    if cpu_s is None:
        yield
        return
    signal.signal(signal.SIGPROF, _over_time)
    signal.setitimer(signal.ITIMER_PROF, float(cpu_s))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)


def _run(namespace: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    """Run a piece of untrusted test code within its CPU seconds."""
    try:
        with _cpu_limited(message["cpu_s"]):
            exec(compile(message["source"], "generated_test.py", "exec"), namespace)
    except _OverTime:
        return {"over_time": message["cpu_s"], "cpu_s": time.process_time()}
    except BaseException as exc:
        return {"raised": _describe(exc), "cpu_s": time.process_time()}
    return {"ran": True, "cpu_s": time.process_time()}


def _encode_args(args: list[Any]) -> list[Any] | None:
    try:
        return [codec.encode(arg) for arg in args]
    except (codec.NotPlainData, RecursionError):
        return None


def _reply(reply: dict[str, Any]) -> None:
    """Send a reply, or say that it was too large to send."""
    try:
        data = json.dumps(reply, allow_nan=False)
    except MemoryError:
        data = json.dumps({"oversize": "out of memory while encoding"})
    if len(data) > LINE_CAP:
        data = json.dumps({"oversize": f"{len(data)} bytes"})
    _write(PROTOCOL_OUT, data)


def _child(message: dict[str, Any], rules: _Filter | None, pipes: tuple[int, int]) -> None:
    """Runs in the forked child; never returns."""
    os.dup2(pipes[0], PROTOCOL_IN)
    os.dup2(pipes[1], PROTOCOL_OUT)
    null = os.open(os.devnull, os.O_RDONLY)
    output = os.open(OUTPUT_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.closerange(3, PROTOCOL_IN)
    os.closerange(PROTOCOL_OUT + 1, 1024)
    _limit(message["limits"])
    if rules is not None:
        rules.install()
    if "workspace" in message:
        _test_workspace(message["workspace"])
    namespace: dict[str, Any] = {"__name__": "candidate", "__builtins__": builtins}
    code = message["code"]
    linecache.cache["candidate.py"] = (len(code), None, code.splitlines(True), "candidate.py")
    try:
        exec(compile(code, "candidate.py", "exec"), namespace)
    except BaseException as exc:
        _send(PROTOCOL_OUT, {"load_error": _describe(exc)})
        os._exit(0)
    functions = {k: v for k, v in namespace.items() if callable(v) and not k.startswith("__")}
    _send(PROTOCOL_OUT, {"loaded": sorted(functions)})
    requests = _Lines(PROTOCOL_IN)
    while True:
        request = requests.next()
        if request is None or request.get("op") not in ("call", "run"):
            os._exit(0)
        if request["op"] == "run":
            reply = _run(namespace, request)
        elif (function := functions.get(request["name"])) is None:
            reply = {"raised": {"type": "NameError", "message": request["name"]}, "args": None}
        else:
            reply = _call(function, request)
        _reply(reply)


def _test_workspace(spec: dict[str, Any]) -> None:
    """Write the candidate's files into the workspace and run the tests; never returns.
    The host checked the paths; a path that leaves the workspace is refused here too.
    The runner is imported here, before any file is written, and only by such a child:
    testrun.py for a task's own test files, pytestrun.py for a repository's tests."""
    import testrun

    runner: Any = testrun
    if "pytest" in spec:
        import pytestrun

        runner = pytestrun
    workspace = os.path.abspath(WORKSPACE)
    os.makedirs(workspace)
    blobs = {path: base64.b64decode(data) for path, data in spec.get("blobs", {}).items()}
    texts = {path: text.encode("utf-8") for path, text in spec["files"].items()}
    for path, data in (texts | blobs).items():
        target = os.path.normpath(os.path.join(workspace, path))
        if not target.startswith(workspace + os.sep):
            os._exit(2)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data)
    os.chdir(workspace)
    runner.run(spec, PROTOCOL_OUT, workspace)


def _reset(folders: tuple[str, ...]) -> None:
    """Empty the writable places, so no run finds what an earlier one left."""
    for folder in folders:
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            continue
        for entry in os.listdir(folder):
            path = os.path.join(folder, entry)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def _kill_leftovers(child: int, sandboxed: bool) -> None:
    """Nothing the candidate started outlives its run."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sandboxed:
            os.kill(-1, signal.SIGKILL)
        else:
            os.killpg(child, signal.SIGKILL)
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break


class _Control:
    """The server's end of the control socket: messages, some carrying two fds."""

    def __init__(self, fd: int) -> None:
        self.sock = socket.socket(fileno=fd)
        self.buffer = b""

    def next(self) -> tuple[dict[str, Any], list[int]] | None:
        fds: list[int] = []
        while b"\n" not in self.buffer:
            data, received, _, _ = socket.recv_fds(self.sock, READ_SIZE, 2)
            if not data:
                return None
            fds.extend(received)
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        return (message if isinstance(message, dict) else {}), fds

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")


def serve(control_fd: int, scratch: str, sandboxed: bool, seccomp: str | None) -> None:
    """`sandboxed`: this server has its own PID namespace and private /tmp and /dev/shm,
    so it may kill every other process it sees and empty those folders. `seccomp`: the
    file holding the filter's BPF program, when there is one."""
    os.chdir(scratch)
    writable = (scratch, "/tmp", "/dev/shm") if sandboxed else (scratch,)
    rules = None
    if seccomp is not None:
        with open(seccomp, "rb") as program:
            rules = _Filter(program.read())
    _reset(writable)
    control = _Control(control_fd)
    control.send({"ready": {"seccomp": rules is not None}})
    while True:
        received = control.next()
        if received is None:
            return
        request, fds = received
        if request.get("op") != "spawn" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        child = os.fork()
        if child == 0:
            try:
                if not sandboxed:
                    os.setpgid(0, 0)
                control.sock.close()
                _child(request, rules, (fds[0], fds[1]))
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        _, status, usage = os.wait4(child, 0)
        _kill_leftovers(child, sandboxed)
        control.send(
            {
                "exited": {
                    "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                    "cpu_s": usage.ru_utime + usage.ru_stime,
                    "peak_kb": usage.ru_maxrss,
                }
            }
        )
        _reset(writable)


if __name__ == "__main__":
    options = sys.argv[3:]
    serve(
        int(sys.argv[1]),
        sys.argv[2],
        sandboxed="--sandboxed" in options,
        seccomp=options[options.index("--seccomp") + 1] if "--seccomp" in options else None,
    )
