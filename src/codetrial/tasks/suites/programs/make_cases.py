"""Generate the hidden cases of the ``programs`` suite.

Running ``python make_cases.py`` writes each problem's ``hidden/NAME.in`` and
computes ``hidden/NAME.out`` by running the problem's ``reference.py`` on it. The
generators are deterministic (one fixed seed per problem, standard library only), so
re-running the script reproduces the files byte for byte. Each problem gets
hand-written edge cases, random small cases and one large case.
"""

import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SMALL = 6


def numbers(values: list[int]) -> str:
    return " ".join(map(str, values))


def max_subarray(rng: random.Random, n: int) -> str:
    return f"{n}\n{numbers([rng.randint(-(10**9), 10**9) for _ in range(n)])}\n"


def bracket_depth(rng: random.Random, length: int) -> str:
    text: list[str] = []
    stack: list[str] = []
    for _ in range(length):
        if stack and rng.random() < 0.5:
            text.append(")" if stack.pop() == "(" else "]")
        else:
            stack.append(rng.choice("(["))
            text.append(stack[-1])
    text += [")" if b == "(" else "]" for b in reversed(stack)]
    if text and rng.random() < 0.3:
        at = rng.randrange(len(text))
        text[at] = rng.choice("()[]")
    return "".join(text) + "\n"


def grid_paths(rng: random.Random, size: int) -> str:
    rows, cols = size, rng.randint(1, size)
    crates = rng.choice([0.0, 0.05, 0.2])
    lines = [
        "".join("#" if rng.random() < crates else "." for _ in range(cols)) for _ in range(rows)
    ]
    return f"{rows} {cols}\n" + "\n".join(lines) + "\n"


def shortest_route(rng: random.Random, size: int) -> str:
    n = max(2, size)
    m = rng.randint(0, 2 * size)
    roads = [f"{rng.randint(1, n)} {rng.randint(1, n)} {rng.randint(1, 10**9)}" for _ in range(m)]
    return f"{n} {m}\n" + "".join(f"{r}\n" for r in roads)


def meeting_rooms(rng: random.Random, n: int) -> str:
    span = rng.choice([20, 10**4, 10**9])
    meetings = []
    for _ in range(n):
        start = rng.randint(0, span - 1)
        meetings.append(f"{start} {rng.randint(start + 1, min(span, start + span // 4 + 1))}")
    return f"{n}\n" + "".join(f"{m}\n" for m in meetings)


def longest_increasing(rng: random.Random, n: int) -> str:
    high = rng.choice([5, 10**9])
    return f"{n}\n{numbers([rng.randint(-high, high) for _ in range(n)])}\n"


WORDS = ["the", "cat", "dog", "end", "a", "river", "The", "CAT", "Zebra", "apple"]


def word_frequency(rng: random.Random, size: int) -> str:
    lines = []
    for _ in range(max(1, size // 8)):
        parts = [
            rng.choice(WORDS) + rng.choice(["", "", ",", ".", "!", "-", "2"])
            for _ in range(rng.randint(0, 8))
        ]
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"


def triangle_area(rng: random.Random, count: int) -> str:
    rows = [numbers([rng.randint(-(10**4), 10**4) for _ in range(6)]) for _ in range(count)]
    return f"{count}\n" + "".join(f"{r}\n" for r in rows)


def pair_sum(rng: random.Random, n: int) -> str:
    high = rng.choice([10, 10**9])
    values = [rng.randint(-high, high) for _ in range(n)]
    k = rng.choice([values[0] + values[-1], rng.randint(-high, high), 2 * high + 1])
    return f"{n} {k}\n{numbers(values)}\n"


def task_order(rng: random.Random, n: int) -> str:
    order = list(range(1, n + 1))
    rng.shuffle(order)
    rules = []
    for _ in range(rng.randint(0, 2 * n)):
        i, j = sorted(rng.sample(range(n), 2)) if n > 1 else (0, 0)
        if i != j:
            rules.append(f"{order[i]} {order[j]}")
    if rules and rng.random() < 0.3:
        a, b = rules[0].split()
        rules.append(f"{b} {a}")
    return f"{n} {len(rules)}\n" + "".join(f"{r}\n" for r in rules)


def cubic_root(rng: random.Random, size: int) -> str:
    a = (
        rng.choice([v for v in range(-1000, 1001) if v])
        if size > 10
        else rng.choice([-3, -1, 1, 2])
    )
    rest = [rng.randint(-1000, 1000) for _ in range(3)]
    return numbers([a, *rest]) + "\n"


# problem -> (seed, generator, small size, large size, hand-written edge cases)
PROBLEMS: dict[str, tuple[int, Callable[[random.Random, int], str], int, int, list[str]]] = {
    "max-subarray": (101, max_subarray, 12, 20_000, ["1\n-1000000000\n", "1\n7\n"]),
    "bracket-depth": (102, bracket_depth, 20, 200_000, ["((((\n", "]\n", "[]\n"]),
    "grid-paths": (103, grid_paths, 6, 400, ["1 1\n.\n", "1 1\n#\n", "2 3\n...\n..#\n"]),
    "shortest-route": (104, shortest_route, 6, 5_000, ["2 0\n", "2 2\n1 1 5\n1 2 1000000000\n"]),
    "meeting-rooms": (105, meeting_rooms, 8, 20_000, ["1\n0 1000000000\n", "3\n0 2\n0 2\n0 2\n"]),
    "longest-increasing": (106, longest_increasing, 12, 20_000, ["1\n5\n", "5\n1 2 3 4 5\n"]),
    "word-frequency": (107, word_frequency, 40, 40_000, ["\n", "123 456 !!!\n", "Aa aA b B\n"]),
    "triangle-area": (
        108,
        triangle_area,
        5,
        5_000,
        ["1\n-10000 -10000 10000 10000 10000 -10000\n"],
    ),
    "pair-sum": (109, pair_sum, 10, 20_000, ["1 2\n1\n", "2 2\n1 1\n", "4 0\n0 5 -5 0\n"]),
    "task-order": (110, task_order, 8, 8_000, ["1 0\n", "3 3\n1 2\n2 3\n3 1\n", "2 1\n2 1\n"]),
    "cubic-root": (111, cubic_root, 5, 1000, ["1 0 0 0\n", "-1 0 0 1000\n", "1 -6 11 -6\n"]),
}


def expected(problem: Path, given: str) -> str:
    ran = subprocess.run(
        [sys.executable, str(problem / "reference.py")],
        input=given,
        capture_output=True,
        text=True,
        check=True,
    )
    return ran.stdout


def main() -> None:
    for name, (seed, generate, small, large, edges) in PROBLEMS.items():
        rng = random.Random(seed)
        sizes = [rng.randint(1, small) for _ in range(SMALL)]
        cases = [*edges, *(generate(rng, size) for size in [*sizes, large])]
        folder = ROOT / name / "hidden"
        folder.mkdir(exist_ok=True)
        for stale in folder.iterdir():
            stale.unlink()
        for number, given in enumerate(cases, 1):
            (folder / f"{number}.in").write_text(given)
            (folder / f"{number}.out").write_text(expected(ROOT / name, given))


if __name__ == "__main__":
    main()
