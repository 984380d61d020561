"""A separate process per run, in its own directory, session and process group.

Limits: CPU seconds, address space, file size, open files and core size through
rlimits; a wall-clock timer in the parent that kills the whole process group; stdin
from /dev/null; an environment that carries none of the parent's variables; stdout
and stderr read with a byte cap (overflow kills the group).
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from codetrial.config import Limits
from codetrial.errors import SandboxError
from codetrial.records import SandboxRun
from codetrial.sandbox.base import SandboxRequest, SandboxResult, register

_MB = 1024 * 1024
_READ_BACK_CAP = 4 * _MB


def _limit_setter(limits: Limits) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
        memory = limits.memory_mb * _MB
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        size = limits.file_size_mb * _MB
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _pump(
    proc: subprocess.Popen[bytes], limits: Limits, deadline: float
) -> tuple[bytes, bytes, bool, bool]:
    """Read both pipes until they close; stop on overflow or at the deadline."""
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    selector = selectors.DefaultSelector()
    for fd in buffers:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    timed_out = overflow = False
    while selector.get_map() and not overflow:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        for key, _ in selector.select(timeout=min(remaining, 0.5)):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fd)
                continue
            buffers[key.fd].extend(chunk)
            overflow = overflow or len(buffers[key.fd]) > limits.output_bytes
    selector.close()
    return bytes(buffers[out_fd]), bytes(buffers[err_fd]), timed_out, overflow


def _reap(pid: int, deadline: float) -> tuple[int | None, resource.struct_rusage | None]:
    """Wait for `pid` until the deadline; (None, None) when it is still running then."""
    while True:
        reaped, status, usage = os.wait4(pid, os.WNOHANG)
        if reaped:
            return status, usage
        if time.monotonic() >= deadline:
            return None, None
        time.sleep(0.002)


def _decode(data: bytes, cap: int) -> str:
    return data[:cap].decode("utf-8", errors="replace")


@register("process")
class ProcessSandbox:
    """Separate process with rlimits; no namespaces. The isolation is named honestly."""

    isolation = "process+rlimits"

    def __init__(self, python: str | None = None) -> None:
        self._python = python or sys.executable

    def _environment(self, request: SandboxRequest, workdir: Path) -> dict[str, str]:
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(workdir),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
        }
        env.update(request.env)
        return env

    def run(self, request: SandboxRequest) -> SandboxResult:
        workdir = Path(tempfile.mkdtemp(prefix="codetrial-run-"))
        try:
            for name, content in request.files.items():
                path = workdir / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8")
            argv = [self._python if a == "python" else a for a in request.argv]
            started = time.monotonic()
            try:
                proc = subprocess.Popen(
                    argv,
                    cwd=workdir,
                    env=self._environment(request, workdir),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    preexec_fn=_limit_setter(request.limits),
                )
            except OSError as exc:
                raise SandboxError(f"could not start {argv[0]}: {exc}") from exc
            out, err, timed_out, overflow = _pump(
                proc, request.limits, started + request.limits.timeout_s
            )
            deadline = started + request.limits.timeout_s
            status, usage = (None, None) if timed_out or overflow else _reap(proc.pid, deadline)
            timed_out = timed_out or (status is None and not overflow)
            _kill_group(proc.pid)
            if status is None:
                _, status, usage = os.wait4(proc.pid, 0)
            _kill_group(proc.pid)
            proc.returncode = returncode = os.waitstatus_to_exitcode(status)
            duration = time.monotonic() - started
            files = {
                name: (workdir / name).read_bytes()[:_READ_BACK_CAP]
                for name in request.read_back
                if (workdir / name).is_file()
            }
        finally:
            _remove(workdir)
        cap = request.limits.output_bytes
        return SandboxResult(
            run=SandboxRun(
                exit_code=returncode if returncode >= 0 else None,
                signal=-returncode if returncode < 0 else None,
                timed_out=timed_out,
                output_overflow=overflow,
                stdout=_decode(out, cap),
                stderr=_decode(err, cap),
                duration_s=duration,
                cpu_s=usage.ru_utime + usage.ru_stime if usage else 0.0,
            ),
            files=files,
        )


def _remove(workdir: Path) -> None:
    for root, dirs, _ in os.walk(workdir):
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, name), 0o700)
    shutil.rmtree(workdir, ignore_errors=True)
