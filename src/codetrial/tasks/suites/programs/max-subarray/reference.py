import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    best = current = int(data[1])
    for token in data[2 : n + 1]:
        value = int(token)
        current = max(value, current + value)
        best = max(best, current)
    print(best)


main()
