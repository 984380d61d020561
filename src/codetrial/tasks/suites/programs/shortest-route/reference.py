import heapq
import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    roads = [[] for _ in range(n + 1)]
    for i in range(m):
        u, v, w = (int(x) for x in data[2 + 3 * i : 5 + 3 * i])
        roads[u].append((v, w))
    best = [None] * (n + 1)
    queue = [(0, 1)]
    while queue:
        length, town = heapq.heappop(queue)
        if best[town] is not None:
            continue
        best[town] = length
        for other, w in roads[town]:
            if best[other] is None:
                heapq.heappush(queue, (length + w, other))
    print(best[n] if best[n] is not None else -1)


main()
