import json
import sys


def main():
    case = json.load(sys.stdin)
    data = case["input"].split()
    n, total = int(data[0]), int(data[1])
    values = [int(v) for v in data[2 : 2 + n]]
    got = case["output"].split()
    if case["expected"].split() == ["-1"]:
        verdict(got == ["-1"], "no choice of positions has the sum")
        sys.exit(0)
    verdict(bool(got) and all(t.isdigit() for t in got), "expected a count and positions")
    count, positions = int(got[0]), [int(t) for t in got[1:]]
    verdict(count >= 1 and len(positions) == count, "the count does not match the positions")
    verdict(len(set(positions)) == count, "a position is chosen twice")
    verdict(all(1 <= p <= n for p in positions), "a position is out of range")
    chosen = sum(values[p - 1] for p in positions)
    verdict(chosen == total, f"the chosen numbers add up to {chosen}, not {total}")
    sys.exit(0)


def verdict(right, why):
    if not right:
        print(why)
        sys.exit(1)


main()
