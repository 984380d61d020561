import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    seen = {}
    for j in range(1, n + 1):
        value = int(data[1 + j])
        if k - value in seen:
            print(seen[k - value], j)
            return
        seen.setdefault(value, j)
    print(-1)


main()
