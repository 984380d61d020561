import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, capacity = int(data[0]), int(data[1])
    best = [0] * (capacity + 1)
    for i in range(n):
        weight, worth = int(data[2 + 2 * i]), int(data[3 + 2 * i])
        if weight <= capacity:
            best = best[:weight] + [
                max(kept, without + worth)
                for without, kept in zip(best, best[weight:], strict=False)
            ]
    print(best[capacity])


main()
