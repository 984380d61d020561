import sys

MOD = 10**9 + 7


def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    sums = [int(v) for v in data[2 + n : 2 + n + q]]
    top = max(sums)
    ways = [1] + [0] * top
    for token in data[2 : 2 + n]:
        coin = int(token)
        for amount in range(coin, top + 1):
            ways[amount] = (ways[amount] + ways[amount - coin]) % MOD
    print("\n".join(str(ways[s]) for s in sums))


main()
