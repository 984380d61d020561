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
    host -> child     {"op": "run", "sources", "cpu_s"}  (pieces of untrusted test
                      code, say tests a model wrote, run in the candidate's
                      namespace one after another, each within cpu_s)
    child -> host     {"ran": [completed without raising, per piece], "cpu_s"}
                      (its CPU so far)
    host closes the child's input: the child exits
    server -> host    {"exited": {"code", "signal", "cpu_s", "peak_kb"}}  (its rusage)

"over_time" answers a request that carried `cpu_s` and ran past it: the call was
cut short by a CPU timer, the process lives on.

A spawn may carry a workspace instead of code: {"op": "spawn", "workspace": {"files",
"blobs"?, "tests", "nonce", "pytest"?}, "limits"}. The child writes the candidate's
files (text, and base64 blobs) into its workspace folder and runs the tests there
(see testrun.py; with "pytest", a repository's tests, see pytestrun.py), sending
records instead of taking calls.

A workspace's tests may instead run in two children, each in a sandbox of its own
(see remote.py): {"op": "spawn", "serve": {"files", "blobs"?, "imports"}, "limits"}
makes a child that writes the candidate's files, imports the modules the tests import
first, and serves requests on its two pipe ends,
which lead to the other child, never to the host; {"op": "spawn", "workspace":
{"tests", "nonce", "modules"}, "limits"}, sent with four descriptors (the host's
two, then the two that lead to the candidate's child), makes the child that runs the
tests and reaches the candidate's modules (named in "modules") only through them.
Both spawns carry "cpu": the one processor both children keep to, since only one of
them runs at a time and a wake-up on another processor costs more than a request.

A spawn may carry a program instead: {"op": "spawn", "program": {"code", "input"?,
"output_cap"?}, "limits"}. The child runs it as __main__ in an empty output folder,
its standard output and error going to files, and exits with the program's exit (1
when it raised); it sends nothing. Its standard input is "input" (text) when given:
written to a file that is unlinked once open, so the program holds only a read-only
descriptor of it; /dev/null otherwise. Once it is gone, the server (not the child)
reads what it left — the output, the files in the output folder, the exception and
the data of the charts it saved — and sends it with the exit, as {"exited": {...,
"program": {...}}}. With "output_cap" (bytes), no file it writes may exceed one byte
more than the cap, and the server sends its whole standard output up to the cap
("output", base64) and the output's size ("output_size"): a size over the cap is
output the program was not allowed.

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
import fcntl
import io
import json
import linecache
import math
import os
import resource
import shutil
import signal
import socket
import stat
import sys
import time
import traceback
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import codec

PROTOCOL_IN, PROTOCOL_OUT = 10, 11
PEER_IN, PEER_OUT = 12, 13
# Imported by the server once, so that a child that runs tests, or serves the tests'
# requests, starts with them loaded: unittest alone takes longer to import than a
# small exercise's tests take to run.
RUNNERS = ("unittest", "testrun", "remote")
LINE_CAP = 16 * 1024 * 1024
READ_SIZE = 65536
OUTPUT_FILE = "output.txt"
WORKSPACE = "workspace"
PROGRAM = "program.py"
OUT = "out"
STDOUT, STDERR, RAISED, FIGURES = "stdout.txt", "stderr.txt", "raised.json", "figures.json"
STDIN = "stdin.txt"
TEXT_CAP = 65536
FILES_CAP = 16 * 1024 * 1024
FILES_MAX = 50
SKIPPED_MAX = 100
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


def _limit(limits: dict[str, int], file_size: int | None) -> None:
    """Set the child's limits; `file_size` (bytes), when given, in place of the
    limits' own."""
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 1))
    memory = limits["memory_mb"] * _MB
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    size = file_size or limits["file_size_mb"] * _MB
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
    """Run pieces of untrusted test code one after another, each within its CPU
    seconds: which completed without raising."""
    ran = []
    for source in message["sources"]:
        try:
            with _cpu_limited(message["cpu_s"]):
                exec(compile(source, "generated_test.py", "exec"), namespace)
        except BaseException:
            ran.append(False)
        else:
            ran.append(True)
    return {"ran": ran, "cpu_s": time.process_time()}


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


def _child(message: dict[str, Any], rules: dict[bool, _Filter], pipes: list[int]) -> None:
    """Runs in the forked child; never returns. `rules`: the seccomp filter by whether
    the child may start processes (as its limits say); `pipes`: the ends to the
    host, then (for a workspace's tests run apart from the candidate) the ends to its
    child."""
    targets = (PROTOCOL_IN, PROTOCOL_OUT, PEER_IN, PEER_OUT)[: len(pipes)]
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, PEER_OUT + 1) for fd in pipes]
    for fd, target in zip(high, targets, strict=True):
        os.dup2(fd, target)
    program = "program" in message
    given = message["program"].get("input") if program else None
    null = _input_file(given) if isinstance(given, str) else os.open(os.devnull, os.O_RDONLY)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    output = os.open(STDOUT if program else OUTPUT_FILE, flags, 0o600)
    errors = os.open(STDERR, flags, 0o600) if program else output
    os.dup2(null, 0)
    os.dup2(output, 1)
    os.dup2(errors, 2)
    os.closerange(3, PROTOCOL_IN)
    os.closerange(targets[-1] + 1, 1024)
    if "cpu" in message:
        with contextlib.suppress(OSError, ValueError):
            os.sched_setaffinity(0, {message["cpu"]})
    cap = message["program"].get("output_cap") if program else None
    _limit(message["limits"], cap + 1 if isinstance(cap, int) else None)
    chosen = rules.get(bool(message["limits"].get("processes")))
    if chosen is not None:
        chosen.install()
    if "serve" in message:
        _serve_candidate(message["serve"])
    if "workspace" in message:
        _test_workspace(message["workspace"], peer=len(pipes) == 4)
    if program:
        _run_program(message["program"]["code"])
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


def _input_file(text: str) -> int:
    """A read-only descriptor of a file holding `text`, which is unlinked: the program
    reads its input through it and can reach it no other way."""
    writing = os.open(STDIN, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    with os.fdopen(writing, "wb") as handle:
        handle.write(text.encode("utf-8"))
    descriptor = os.open(STDIN, os.O_RDONLY)
    os.unlink(STDIN)
    return descriptor


def _test_workspace(spec: dict[str, Any], peer: bool) -> None:
    """Write the candidate's files into the workspace and run the tests; never returns.
    The runner is imported here, before any file is written, and only by such a child:
    testrun.py for a task's own test files, pytestrun.py for a repository's tests,
    nativerun.py for a compiled language's build and test runner.
    With a `peer`, the candidate's modules are in the other child, reached through
    PEER_IN and PEER_OUT, and no file of the candidate's is here."""
    import testrun

    runner: Any = testrun
    if "pytest" in spec:
        import pytestrun

        runner = pytestrun
    elif "native" in spec:
        import nativerun

        runner = nativerun
    workspace = _write_workspace(spec)
    if peer:
        testrun.run(spec, PROTOCOL_OUT, workspace, peer=(PEER_IN, PEER_OUT))
    runner.run(spec, PROTOCOL_OUT, workspace)


def _write_workspace(spec: dict[str, Any]) -> str:
    """Write the files of `spec` (text, and base64 blobs) into the workspace folder and
    enter it. The host checked the paths; a path that leaves the workspace is refused
    here too."""
    workspace = os.path.abspath(WORKSPACE)
    os.makedirs(workspace)
    blobs = {path: base64.b64decode(data) for path, data in spec.get("blobs", {}).items()}
    texts = {path: text.encode("utf-8") for path, text in spec.get("files", {}).items()}
    for path, data in (texts | blobs).items():
        target = os.path.normpath(os.path.join(workspace, path))
        if not target.startswith(workspace + os.sep):
            os._exit(2)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data)
    os.chdir(workspace)
    return workspace


def _serve_candidate(spec: dict[str, Any]) -> None:
    """Write the candidate's files into the workspace and serve the tests' requests on
    its objects until the tests' child is gone; never returns. The runner and the
    protocol are imported before any file is written."""
    import remote
    import testrun

    workspace = _write_workspace(spec)
    sys.path.insert(0, workspace)
    for name in spec.get("imports", ()):
        # Imported now rather than when the tests ask, which their first request would
        # wait for; a module that fails here is imported again then, and fails there.
        with contextlib.suppress(BaseException):
            __import__(name)
    wire = remote.Wire(PROTOCOL_IN, PROTOCOL_OUT)
    end = remote.CandidateSide(wire, lambda error: testrun.workspace_frames(error, workspace))
    with contextlib.suppress(remote.Stopped):
        end.serve_forever()
    os._exit(0)


def _exit(code: Any = None) -> None:
    """`exit` and `quit` as `site` defines them, for this Python starts without it."""
    raise SystemExit(code)


def _run_program(code: str) -> None:
    """Run a program as __main__ in the output folder and exit with its exit; never
    returns. The data of every chart it saves with matplotlib is kept (see
    `_figure_data`), keyed by the file it went to."""
    saved: list[dict[str, Any]] = []
    _record_saved_charts(saved, os.path.abspath(OUT))
    os.makedirs(OUT)
    os.chdir(OUT)
    sys.argv = [PROGRAM]
    linecache.cache[PROGRAM] = (len(code), None, code.splitlines(True), PROGRAM)
    for name in ("exit", "quit"):
        setattr(builtins, name, _exit)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    status = 0
    try:
        exec(compile(code, PROGRAM, "exec"), namespace)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException as exc:
        status = 1
        described = _describe(exc)
        sys.stderr.write(f"Traceback (most recent call last):\n{described['trace']}")
        _dump(os.path.join("..", RAISED), described)
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
        sys.stderr.flush()
        _dump(os.path.join("..", FIGURES), saved)
    os._exit(status & 0xFF)


def _dump(path: str, data: Any) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)


def _record_saved_charts(saved: list[dict[str, Any]], out: str) -> None:
    """When matplotlib is loaded, keep the data of each figure as it is saved, under
    the name of its file in the output folder `out`."""
    figure = sys.modules.get("matplotlib.figure")
    if figure is None:
        return
    original = figure.Figure.savefig

    def savefig(self: Any, fname: Any, *args: Any, **kwargs: Any) -> Any:
        with contextlib.suppress(Exception):
            if isinstance(fname, str | os.PathLike):
                where = os.path.relpath(os.path.abspath(os.fspath(fname)), out)
                saved.append({"file": where, "axes": _figure_data(self)})
        return original(self, fname, *args, **kwargs)

    figure.Figure.savefig = savefig


def _numbers(values: Any) -> list[float | None]:
    found: list[float | None] = []
    for value in list(values)[:10000]:
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        found.append(number if math.isfinite(number) else None)
    return found


def _figure_data(figure: Any) -> list[dict[str, Any]]:
    """Each axes' title and series: a line's y values, a bar chart's heights (widths
    for horizontal bars), in plotting order."""
    axes = []
    for ax in figure.get_axes():
        series = [
            {"kind": "line", "label": str(line.get_label()), "y": _numbers(line.get_ydata())}
            for line in ax.get_lines()
        ]
        for container in ax.containers:
            bars = list(getattr(container, "patches", ()))
            horizontal = getattr(container, "orientation", "vertical") == "horizontal"
            sizes = [b.get_width() if horizontal else b.get_height() for b in bars]
            series.append(
                {"kind": "bar", "label": str(container.get_label()), "y": _numbers(sizes)}
            )
        axes.append({"title": str(ax.get_title()), "series": series})
    return axes


def _open_regular(path: str) -> io.BufferedReader | None:
    """A regular file opened for reading, never through a link nor blocking on a
    pipe; None for anything else."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    handle: io.BufferedReader = os.fdopen(descriptor, "rb")
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        handle.close()
        return None
    return handle


def _read_back(scratch: str, output_cap: Any) -> dict[str, Any]:
    """What a program's child left in `scratch`: its output (the start of standard
    output, the end of standard error; with an `output_cap`, standard output whole
    up to the cap, and its size), the files in its output folder (regular files with
    UTF-8 names only, within the caps; SKIPPED_MAX others named), its exception and
    its saved charts. Read by the server after the child is gone; what the child
    could have written there is read as untrusted data."""
    found: dict[str, Any] = {
        "stdout": _read_text(os.path.join(scratch, STDOUT), keep_end=False),
        "stderr": _read_text(os.path.join(scratch, STDERR), keep_end=True),
        "files": {},
        "skipped": [],
    }
    if isinstance(output_cap, int):
        handle = _open_regular(os.path.join(scratch, STDOUT))
        if handle is not None:
            with handle:
                found["output_size"] = os.fstat(handle.fileno()).st_size
                found["output"] = base64.b64encode(handle.read(output_cap)).decode()
    for key, name in (("raised", RAISED), ("figures", FIGURES)):
        handle = _open_regular(os.path.join(scratch, name))
        if handle is not None:
            with handle, contextlib.suppress(Exception):
                found[key] = json.loads(handle.read(TEXT_CAP * 16))
    total = 0
    out = os.path.join(scratch, OUT)
    for folder, _, names in os.walk(out):
        for name in sorted(names):
            relative = os.path.relpath(os.path.join(folder, name), out)
            handle = None if not _utf8(relative) else _open_regular(os.path.join(folder, name))
            if handle is None:
                _skip(found, relative)
                continue
            with handle:
                size = os.fstat(handle.fileno()).st_size
                if len(found["files"]) >= FILES_MAX or total + size > FILES_CAP:
                    _skip(found, relative)
                    continue
                total += size
                found["files"][relative] = base64.b64encode(handle.read(size)).decode()
    return found


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # a name of bytes that are not UTF-8
        return False
    return True


def _skip(found: dict[str, Any], name: str) -> None:
    if len(found["skipped"]) < SKIPPED_MAX:
        found["skipped"].append(name.encode("utf-8", "replace").decode("utf-8"))


def _read_text(path: str, keep_end: bool) -> str:
    handle = _open_regular(path)
    if handle is None:
        return ""
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if keep_end and size > TEXT_CAP:
            handle.seek(size - TEXT_CAP)
        data = handle.read(TEXT_CAP)
    text = data.decode("utf-8", "replace")
    if size > TEXT_CAP:
        return f"[...]\n{text}" if keep_end else f"{text}\n[... {size - TEXT_CAP} more bytes]"
    return text


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
            data, received, _, _ = socket.recv_fds(self.sock, READ_SIZE, 4)
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


def serve(
    control_fd: int,
    scratch: str,
    sandboxed: bool,
    seccomp: dict[bool, str],
    paths: list[str],
    preload: list[str],
) -> None:
    """`sandboxed`: this server has its own PID namespace and private /tmp and /dev/shm,
    so it may kill every other process it sees and empty those folders. `seccomp`: the
    files holding the filters' BPF programs, when there are some, by whether a child
    under the filter may start processes (which its spawn's limits say). `paths`: package
    environments every child may import from; `preload`: modules of theirs imported
    here once, so that each child starts with them loaded (a module that fails to
    import is left for a child to fail on)."""
    os.chdir(scratch)
    sys.path[1:1] = paths
    for module in RUNNERS:
        __import__(module)
    for module in preload:
        with contextlib.suppress(Exception):
            __import__(module)
    writable = (scratch, "/tmp", "/dev/shm") if sandboxed else (scratch,)
    rules = {}
    for processes, path in seccomp.items():
        with open(path, "rb") as program:
            rules[processes] = _Filter(program.read())
    _reset(writable)
    control = _Control(control_fd)
    control.send({"ready": {"seccomp": bool(rules)}})
    while True:
        received = control.next()
        if received is None:
            return
        request, fds = received
        if request.get("op") != "spawn" or len(fds) not in (2, 4):
            for fd in fds:
                os.close(fd)
            continue
        child = os.fork()
        if child == 0:
            try:
                if not sandboxed:
                    os.setpgid(0, 0)
                control.sock.close()
                _child(request, rules, fds)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        _, status, usage = os.wait4(child, 0)
        _kill_leftovers(child, sandboxed)
        exited: dict[str, Any] = {
            "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_kb": usage.ru_maxrss,
        }
        if "program" in request:
            exited["program"] = _read_back(scratch, request["program"].get("output_cap"))
        control.send({"exited": exited})
        _reset(writable)


def _values(options: list[str], flag: str) -> list[str]:
    return [options[i + 1] for i, option in enumerate(options[:-1]) if option == flag]


if __name__ == "__main__":
    options = sys.argv[3:]
    serve(
        int(sys.argv[1]),
        sys.argv[2],
        sandboxed="--sandboxed" in options,
        seccomp={
            processes: path
            for processes, flag in ((False, "--seccomp"), (True, "--seccomp-processes"))
            for path in _values(options, flag)[:1]
        },
        paths=_values(options, "--path"),
        preload=_values(options, "--preload"),
    )
