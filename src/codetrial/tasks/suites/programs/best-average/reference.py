import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    values = [int(v) for v in data[2 : 2 + n]]
    window = sum(values[:k])
    best = window
    for at in range(k, n):
        window += values[at] - values[at - k]
        best = max(best, window)
    print(f"{best / k:.9f}")


main()
