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


def range_sums(rng: random.Random, n: int) -> str:
    q = rng.randint(1, n)
    values = numbers([rng.randint(-(10**9), 10**9) for _ in range(n)])
    questions = [sorted((rng.randint(1, n), rng.randint(1, n))) for _ in range(q)]
    return f"{n} {q}\n{values}\n" + "".join(f"{left} {right}\n" for left, right in questions)


def prime_count(rng: random.Random, q: int) -> str:
    high = rng.choice([30, 10**4, 10**6])
    return f"{q}\n{numbers([rng.randint(1, high) for _ in range(q)])}\n"


def grid_escape(rng: random.Random, size: int) -> str:
    rows, cols = size + 1, rng.randint(max(1, size // 2), size + 1)
    walls = rng.choice([0.0, 0.2, 0.35])
    cells = ["#" if rng.random() < walls else "." for _ in range(rows * cols)]
    start, goal = rng.sample(range(rows * cols), 2)
    cells[start], cells[goal] = "S", "E"
    lines = ["".join(cells[r * cols : (r + 1) * cols]) for r in range(rows)]
    return f"{rows} {cols}\n" + "\n".join(lines) + "\n"


def friend_groups(rng: random.Random, n: int) -> str:
    ops = [f"{rng.choice('12')} {rng.randint(1, n)} {rng.randint(1, n)}" for _ in range(n)]
    ops.append(f"2 {rng.randint(1, n)} {rng.randint(1, n)}")
    return f"{n} {len(ops)}\n" + "".join(f"{o}\n" for o in ops)


def merge_intervals(rng: random.Random, n: int) -> str:
    span = rng.choice([20, 10**6, 10**9])
    intervals = []
    for _ in range(n):
        left = rng.randint(0, span)
        intervals.append(f"{left} {rng.randint(left, min(span, left + span // (n + 1) + 1))}")
    return f"{n}\n" + "".join(f"{i}\n" for i in intervals)


def binomial_mod(rng: random.Random, q: int) -> str:
    high = rng.choice([10, 10**6])
    questions = []
    for _ in range(q):
        n = rng.randint(0, high)
        questions.append(f"{n} {rng.randint(0, n)}")
    return f"{q}\n" + "".join(f"{x}\n" for x in questions)


def budget_window(rng: random.Random, n: int) -> str:
    high = rng.choice([10, 10**9])
    costs = [rng.randint(0, high) for _ in range(n)]
    budget = rng.randint(0, sum(costs) // rng.choice([1, 3, 50]))
    return f"{n} {budget}\n{numbers(costs)}\n"


def knapsack(rng: random.Random, n: int) -> str:
    capacity = rng.randint(1, 1000) if n > 100 else rng.randint(1, 30)
    heaviest = rng.choice([capacity, 1000])
    items = [f"{rng.randint(1, heaviest)} {rng.randint(1, 10**9)}" for _ in range(n)]
    return f"{n} {capacity}\n" + "".join(f"{i}\n" for i in items)


def rope_cutting(rng: random.Random, n: int) -> str:
    ropes = [rng.randint(1, rng.choice([10, 10**9])) for _ in range(n)]
    k = rng.choice([rng.randint(1, n), rng.randint(1, 10**9), min(10**9, sum(ropes))])
    return f"{n} {k}\n{numbers(ropes)}\n"


def longest_palindrome(rng: random.Random, length: int) -> str:
    letters = rng.choice(["ab", "abc", "abcdefghijklmnopqrstuvwxyz"])
    text = [rng.choice(letters) for _ in range(length)]
    if length > 2 and rng.random() < 0.5:
        half = rng.randint(1, length // 2)
        at = rng.randint(0, length - 2 * half)
        text[at + half : at + 2 * half] = reversed(text[at : at + half])
    return "".join(text) + "\n"


def one_room(rng: random.Random, n: int) -> str:
    span = rng.choice([20, 10**4, 10**9])
    meetings = []
    for _ in range(n):
        start = rng.randint(0, span - 1)
        meetings.append(f"{start} {rng.randint(start + 1, min(span, start + span // 8 + 1))}")
    return f"{n}\n" + "".join(f"{m}\n" for m in meetings)


def coin_ways(rng: random.Random, q: int) -> str:
    n = rng.randint(1, min(q, 50))
    coins = rng.sample(range(1, max(n, rng.choice([20, 2 * 10**4])) + 1), n)
    high = rng.choice([50, 2 * 10**4])
    return f"{n} {q}\n{numbers(coins)}\n{numbers([rng.randint(0, high) for _ in range(q)])}\n"


def spiral_order(rng: random.Random, size: int) -> str:
    rows, cols = size, rng.randint(1, size)
    lines = [numbers([rng.randint(-(10**9), 10**9) for _ in range(cols)]) for _ in range(rows)]
    return f"{rows} {cols}\n" + "".join(f"{line}\n" for line in lines)


def run_length(rng: random.Random, length: int) -> str:
    letters = rng.choice(["ab", "xyz", "abcdefghijklmnopqrstuvwxyz"])
    text: list[str] = []
    while len(text) < length:
        text += rng.choice(letters) * rng.randint(1, rng.choice([1, 3, 12]))
    return "".join(text[:length]) + "\n"


def range_gcd(rng: random.Random, n: int) -> str:
    base = rng.choice([1, 6, 210])
    values = numbers([base * rng.randint(1, rng.choice([10, 10**9 // base])) for _ in range(n)])
    questions = [sorted((rng.randint(1, n), rng.randint(1, n))) for _ in range(rng.randint(1, n))]
    return f"{n} {len(questions)}\n{values}\n" + "".join(f"{a} {b}\n" for a, b in questions)


def bit_count(rng: random.Random, t: int) -> str:
    high = rng.choice([100, 10**9, 10**18])
    return f"{t}\n{numbers([rng.randint(1, high) for _ in range(t)])}\n"


def island_count(rng: random.Random, size: int) -> str:
    rows, cols = size, rng.randint(1, size)
    land = rng.choice([0.2, 0.45, 0.6])
    lines = ["".join("#" if rng.random() < land else "." for _ in range(cols)) for _ in range(rows)]
    return f"{rows} {cols}\n" + "\n".join(lines) + "\n"


def best_average(rng: random.Random, n: int) -> str:
    high = rng.choice([10, 10**9])
    values = [rng.randint(-high, high) for _ in range(n)]
    return f"{n} {rng.randint(1, n)}\n{numbers(values)}\n"


def subset_sum(rng: random.Random, n: int) -> str:
    high = rng.choice([10, 1000, 5 * 10**4])
    values = [rng.randint(1, high) for _ in range(n)]
    reachable = sum(rng.sample(values, rng.randint(1, n)))
    target = min(5 * 10**4, rng.choice([reachable, reachable, rng.randint(1, n * high)]))
    return f"{n} {target}\n{numbers(values)}\n"


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
    "range-sums": (
        112,
        range_sums,
        10,
        8_000,
        ["1 1\n-1000000000\n1 1\n", "3 2\n0 0 0\n1 3\n2 2\n"],
    ),
    "prime-count": (113, prime_count, 10, 20_000, ["1\n1\n", "1\n2\n", "3\n1000000 999999 3\n"]),
    "grid-escape": (114, grid_escape, 8, 300, ["1 2\nSE\n", "1 3\nS#E\n", "3 3\nS.#\n##.\n..E\n"]),
    "friend-groups": (
        115,
        friend_groups,
        12,
        12_000,
        ["1 1\n2 1 1\n", "2 3\n2 1 2\n1 2 1\n2 1 2\n"],
    ),
    "merge-intervals": (
        116,
        merge_intervals,
        8,
        8_000,
        ["1\n5 5\n", "2\n1 3\n3 5\n", "2\n3 4\n1 2\n"],
    ),
    "binomial-mod": (
        117,
        binomial_mod,
        8,
        12_000,
        ["1\n0 0\n", "1\n1000000 500000\n", "2\n5 0\n5 5\n"],
    ),
    "budget-window": (
        118,
        budget_window,
        12,
        15_000,
        ["1 0\n5\n", "3 0\n0 0 0\n", "2 1000000000000000\n1000000000 1000000000\n"],
    ),
    "knapsack": (119, knapsack, 10, 1_000, ["1 1\n2 5\n", "1 5\n5 7\n", "3 4\n2 3\n2 3\n4 5\n"]),
    "rope-cutting": (
        120,
        rope_cutting,
        10,
        15_000,
        ["1 2\n1\n", "1 1\n1000000000\n", "2 3\n5 5\n"],
    ),
    "longest-palindrome": (121, longest_palindrome, 20, 100_000, ["a\n", "aaaa\n", "abcd\n"]),
    "one-room": (
        122,
        one_room,
        10,
        8_000,
        ["1\n0 1000000000\n", "3\n0 2\n0 2\n0 2\n", "2\n0 5\n5 9\n"],
    ),
    "coin-ways": (123, coin_ways, 8, 10_000, ["1 1\n5\n0\n", "1 1\n2\n7\n", "3 1\n1 2 3\n20000\n"]),
    "spiral-order": (124, spiral_order, 6, 150, ["1 1\n5\n", "1 4\n1 2 3 4\n", "2 2\n1 2\n3 4\n"]),
    "run-length": (125, run_length, 30, 100_000, ["a\n", "bbbbbbbbbbbb\n", "abab\n"]),
    "range-gcd": (
        126,
        range_gcd,
        10,
        12_000,
        ["1 1\n7\n1 1\n", "2 1\n1000000000 999999999\n1 2\n"],
    ),
    "bit-count": (127, bit_count, 10, 7_000, ["1\n1\n", "2\n2 1152921504606846975\n"]),
    "island-count": (128, island_count, 8, 380, ["1 1\n.\n", "1 1\n#\n", "3 3\n###\n#.#\n###\n"]),
    "best-average": (129, best_average, 10, 15_000, ["1 1\n-1000000000\n", "3 2\n1 2 4\n"]),
    "subset-sum": (
        130,
        subset_sum,
        12,
        5_000,
        ["1 5\n5\n", "1 4\n5\n", "4 50000\n12500 12500 12500 12500\n"],
    ),
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
