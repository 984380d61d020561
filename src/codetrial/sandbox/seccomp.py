"""The seccomp filter every candidate's process runs under, compiled on the host.

libseccomp (through pyseccomp) turns the rules into a BPF program once per process;
the sandbox worker only installs those bytes in each child, so it never
loads libseccomp's Python binding, whose imports (threading among them) would make
every fork of the worker slower.
"""

from __future__ import annotations

import os

ERRNO_EPERM, ERRNO_ENOSYS = 1, 38
CLONE_THREAD = 0x00010000


def filter_program(deny_processes: bool, deny_sockets: bool) -> bytes | None:
    """The filter as BPF instructions, or None where libseccomp is not available.
    Denied calls fail with EPERM (clone3 with ENOSYS, so the C library falls back to
    clone, where a new thread is told from a new process)."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, RuntimeError):
        return None
    deny = seccomp.ERRNO(ERRNO_EPERM)
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    if deny_sockets:
        # A child that may start processes may make socket pairs: Node (libuv) makes its
        # children's pipes of them, and a pair reaches nothing but itself.
        for name in ("socket", "socketpair") if deny_processes else ("socket",):
            rules.add_rule(deny, name)
    if deny_processes:
        for name in ("fork", "vfork", "execve", "execveat"):
            rules.add_rule(deny, name)
        rules.add_rule(seccomp.ERRNO(ERRNO_ENOSYS), "clone3")
        rules.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    for name in ("ptrace", "process_vm_writev", "process_vm_readv", "unshare", "setns"):
        rules.add_rule(deny, name)
    memory = os.memfd_create("seccomp")
    with open(memory, "w+b") as exported:
        rules.export_bpf(exported)
        exported.seek(0)
        return exported.read()
