"""The in-sandbox runner of a compiled language's build and tests, one step at a time.

Runs inside the sandbox from a read-only file, in a child the worker forked for the
run, before any of the candidate's code: the trusted side names each step (argv,
environment, files to remove once it is done) and this runner starts it as a process
in the workspace, its standard input empty, its output (standard output and error
together) read through a pipe, and sends what it printed, cut to `cap` bytes, with
how it ended:

    {"nonce", "step": name, "exit": code or None, "signal": number or None,
     "output": text, "cut": bytes left out, "report"?: text}
    {"nonce", "end": number of steps run}

A step with `expand` has each argument that names files by a pattern replaced by
the files it names (a test binary whose name ends in a hash the build chose). A step
with a `report` (a path) is a test runner that writes its machine-readable
report to that file: once the step is done, the file's text (a regular file, never
through a link, at most `cap` bytes) travels in the record. `links` (workspace path ->
target) are made before the first step: a read-only dependency folder (JavaScript's
node_modules) seen where the build looks for it.

A step whose `stop` is true and that fails ends the run: nothing after a failed build
runs. The records are the runner's, not the steps': the channel is never inherited by
a step's process, and this process makes itself undumpable before the first step, so
that no process of the run (all run as the same user) can open its descriptors, the
channel's among them, through /proc. What a step printed is data, read on the trusted
side as a test runner's report that the candidate's code may have written into: the
trusted side decides how far to believe it (see `codetrial.verdict.polyglot`).
"""

from __future__ import annotations

import ctypes
import glob
import os
import stat
import subprocess
from typing import Any, NoReturn

from testrun import channel

_PR_SET_DUMPABLE = 4


def _undumpable() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "could not make the runner undumpable")


def _step(step: dict[str, Any], workspace: str, base: dict[str, str], cap: int) -> dict[str, Any]:
    argv = step["argv"]
    if step.get("expand"):
        argv = [found for arg in argv for found in (sorted(glob.glob(arg)) or [arg])]
    try:
        process = subprocess.Popen(
            argv,
            cwd=workspace,
            env={**base, **step.get("env", {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            close_fds=True,
            start_new_session=False,
        )
    except OSError as exc:
        return {"step": step["name"], "exit": None, "signal": None, "output": str(exc), "cut": 0}
    assert process.stdout is not None
    kept, cut = b"", 0
    while chunk := process.stdout.read(65536):
        room = cap - len(kept)
        kept += chunk[:room]
        cut += max(0, len(chunk) - room)
    status = process.wait()
    report = _read_report(step["report"], cap) if "report" in step else None
    for path in step.get("remove", []):
        target = os.path.normpath(os.path.join(workspace, path))
        if target.startswith(workspace + os.sep) and os.path.isfile(target):
            os.unlink(target)
    return {
        "step": step["name"],
        "exit": status if status >= 0 else None,
        "signal": -status if status < 0 else None,
        "output": kept.decode("utf-8", "replace"),
        "cut": cut,
        **({"report": report} if report is not None else {}),
    }


def _read_report(path: str, cap: int) -> str | None:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return handle.read(cap).decode("utf-8", "replace")


def run(spec: dict[str, Any], out_fd: int, workspace: str) -> NoReturn:
    """Run the steps of `spec["native"]` ({"steps", "env", "cap"}) in `workspace`,
    report on `out_fd`, and end the process."""
    native = spec["native"]
    send = channel(out_fd, spec["nonce"])
    _undumpable()
    for path, target in native.get("links", {}).items():
        os.symlink(target, os.path.join(workspace, path))
    ran = 0
    for step in native["steps"]:
        record = _step(step, workspace, native["env"], native["cap"])
        send(record)
        ran += 1
        if step.get("stop") and record["exit"] != 0:
            break
    send({"end": ran})
    os._exit(0)
