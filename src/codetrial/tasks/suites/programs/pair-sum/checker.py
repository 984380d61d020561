import json
import sys


def main():
    case = json.load(sys.stdin)
    data = case["input"].split()
    n, k = int(data[0]), int(data[1])
    values = [int(v) for v in data[2 : 2 + n]]
    expected = case["expected"].split()
    got = case["output"].split()
    if expected == ["-1"]:
        verdict(got == ["-1"], "there is no such pair")
        sys.exit(0)
    if len(got) != 2 or not all(t.lstrip("-").isdigit() for t in got):
        verdict(False, "expected two positions")
    i, j = int(got[0]), int(got[1])
    verdict(1 <= i < j <= n, "positions out of order or out of range")
    verdict(values[i - 1] + values[j - 1] == k, f"a_{i} + a_{j} is not {k}")
    sys.exit(0)


def verdict(right, why):
    if not right:
        print(why)
        sys.exit(1)


main()
