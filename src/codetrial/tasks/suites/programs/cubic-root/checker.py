import json
import math
import sys

TOLERANCE = 1e-6


def main():
    case = json.load(sys.stdin)
    a, b, c, d = (int(v) for v in case["input"].split())
    got = case["output"].split()
    try:
        x = float(got[0]) if len(got) == 1 else math.nan
    except ValueError:
        x = math.nan
    if not math.isfinite(x):
        print("expected one real number")
        sys.exit(1)

    def p(t):
        return ((a * t + b) * t + c) * t + d

    # a root lies within the tolerance when p changes sign (or vanishes) there
    low, high = p(x - TOLERANCE), p(x + TOLERANCE)
    if low * high > 0 and p(x) != 0:
        print(f"p({x}) is {p(x)}, and no root lies within {TOLERANCE} of {x}")
        sys.exit(1)
    sys.exit(0)


main()
