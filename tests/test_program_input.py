"""A sandboxed program's standard input and its whole standard output, in real sandboxes."""

from __future__ import annotations

from codetrial.config import Limits
from codetrial.sandbox import Sandbox, Stop
from codetrial.sandbox.server import ProgramRun

CAP = 1 << 20


def run(
    sandbox: Sandbox,
    code: str,
    stdin: str | None = None,
    cap: int | None = CAP,
    limits: Limits | None = None,
) -> ProgramRun:
    with sandbox.program(code, stdin=stdin, output_cap=cap, limits=limits) as ran:
        pass
    return ran


def test_a_program_reads_exactly_its_input(sandbox: Sandbox) -> None:
    ran = run(sandbox, "import sys\nprint(repr(sys.stdin.read()))", stdin="3\n1 2 3\né\n")
    assert ran.stop is None and ran.exit is not None and ran.exit.code == 0
    assert ran.left.output == "'3\\n1 2 3\\né\\n'\n".encode()


def test_reading_past_the_input_finds_its_end(sandbox: Sandbox) -> None:
    code = "import sys\nprint(len(sys.stdin.read()), repr(sys.stdin.read()), flush=True)\ninput()"
    ran = run(sandbox, code, stdin="abc")
    assert ran.exit is not None and ran.exit.code == 1  # input() at the end: EOFError
    assert ran.left.output == b"3 ''\n"
    assert "EOFError" in ran.left.stderr


def test_reading_dev_stdin_twice_gives_the_input_and_nothing_else(sandbox: Sandbox) -> None:
    code = (
        "import os\n"
        "print(repr(open('/dev/stdin').read()), repr(open('/dev/stdin').read()))\n"
        "print(sorted(os.listdir('..')))\n"
        "try:\n"
        "    open('/dev/stdin', 'w').write('forged')\n"
        "except OSError as exc:\n"
        "    print('refused', type(exc).__name__)\n"
    )
    ran = run(sandbox, code, stdin="7 8\n")
    assert ran.left.output.decode().splitlines() == [
        "'7 8\\n' '7 8\\n'",
        "['out', 'stderr.txt', 'stdout.txt']",  # unlinked once open: no name reaches it
        "refused PermissionError",  # read-only, even through /proc
    ]


def test_without_input_standard_input_is_empty(sandbox: Sandbox) -> None:
    ran = run(sandbox, "import sys\nprint(repr(sys.stdin.read()))", cap=None)
    assert ran.left.stdout == "''\n" and ran.left.output == b""


def test_the_whole_output_comes_back_within_the_cap(sandbox: Sandbox) -> None:
    code = "import sys\nsys.stdout.write('x' * (CAP - 1) + '\\n')".replace("CAP", str(CAP))
    ran = run(sandbox, code)
    assert ran.stop is None and ran.left.output_size == CAP
    assert ran.left.output == b"x" * (CAP - 1) + b"\n"
    assert len(ran.left.stdout) < CAP // 8  # what a question's program shows is still its start


def test_output_past_the_cap_is_the_output_limit(sandbox: Sandbox) -> None:
    ran = run(sandbox, "while True:\n    print('flood' * 1000)")
    assert ran.stop is Stop.OUTPUT_LIMIT
    assert ran.left.output_size == CAP + 1 and len(ran.left.output) == CAP


def test_a_flood_that_swallows_its_error_is_still_the_output_limit(sandbox: Sandbox) -> None:
    code = (
        "import os\n"
        "try:\n"
        "    while True:\n"
        "        os.write(1, b'y' * 65536)\n"
        "except OSError:\n"
        "    pass\n"
        "os._exit(0)\n"
    )
    ran = run(sandbox, code)
    assert ran.stop is Stop.OUTPUT_LIMIT


def test_a_cap_above_the_file_size_limit_is_the_cap_in_force(sandbox: Sandbox) -> None:
    cap = 17 * 1024 * 1024  # above the 16 MiB every other run's files are held to
    # Reading 17 MiB back takes the server a while on a busy machine: 30 s of wall.
    roomy = Limits(timeout_s=30, cpu_s=3)
    ran = run(sandbox, f"import sys\nsys.stdout.write('z' * {cap})", cap=cap, limits=roomy)
    assert ran.stop is None and ran.exit is not None and ran.exit.code == 0, ran.stop_detail
    assert ran.left.output_size == cap and len(ran.left.output) == cap
