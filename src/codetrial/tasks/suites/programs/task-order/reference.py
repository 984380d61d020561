import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    after = [[] for _ in range(n + 1)]
    needs = [0] * (n + 1)
    for i in range(m):
        a, b = int(data[2 + 2 * i]), int(data[3 + 2 * i])
        after[a].append(b)
        needs[b] += 1
    ready = [t for t in range(1, n + 1) if needs[t] == 0]
    order = []
    while ready:
        task = ready.pop()
        order.append(task)
        for other in after[task]:
            needs[other] -= 1
            if needs[other] == 0:
                ready.append(other)
    print(" ".join(map(str, order)) if len(order) == n else "IMPOSSIBLE")


main()
