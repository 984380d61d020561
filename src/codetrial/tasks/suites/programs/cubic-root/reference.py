import sys


def main():
    a, b, c, d = (int(v) for v in sys.stdin.read().split())
    bound = 1 + max(abs(b), abs(c), abs(d)) / abs(a)
    low, high = -bound, bound
    if a < 0:
        low, high = high, low
    for _ in range(200):
        middle = (low + high) / 2
        if a * middle**3 + b * middle**2 + c * middle + d < 0:
            low = middle
        else:
            high = middle
    print(f"{(low + high) / 2:.10f}")


main()
