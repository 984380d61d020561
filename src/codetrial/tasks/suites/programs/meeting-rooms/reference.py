import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    events = []
    for i in range(n):
        events.append((int(data[1 + 2 * i]), 1))
        events.append((int(data[2 + 2 * i]), -1))
    events.sort()
    rooms = best = 0
    for _, change in events:
        rooms += change
        best = max(best, rooms)
    print(best)


main()
