import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, total = int(data[0]), int(data[1])
    values = [int(v) for v in data[2 : 2 + n]]
    mask = (1 << (total + 1)) - 1
    reachable = [1]
    for value in values:
        reachable.append((reachable[-1] | reachable[-1] << value) & mask)
    if not reachable[-1] >> total & 1:
        print(-1)
        return
    chosen = []
    left = total
    for at in range(n, 0, -1):
        if not reachable[at - 1] >> left & 1:
            chosen.append(at)
            left -= values[at - 1]
    print(len(chosen))
    print(" ".join(map(str, reversed(chosen))))


main()
