import json
import sys


def main():
    case = json.load(sys.stdin)
    data = case["input"].split()
    n, m = int(data[0]), int(data[1])
    got = case["output"].split()
    if case["expected"].split() == ["IMPOSSIBLE"]:
        verdict(got == ["IMPOSSIBLE"], "the rules hold a cycle: no order exists")
        sys.exit(0)
    verdict(all(t.isdigit() for t in got), "expected task numbers")
    order = [int(t) for t in got]
    verdict(sorted(order) == list(range(1, n + 1)), "not every task exactly once")
    place = {task: at for at, task in enumerate(order)}
    for i in range(m):
        a, b = int(data[2 + 2 * i]), int(data[3 + 2 * i])
        verdict(place[a] < place[b], f"task {a} must come before task {b}")
    sys.exit(0)


def verdict(right, why):
    if not right:
        print(why)
        sys.exit(1)


main()
