import sys

MOD = 10**9 + 7


def main():
    lines = sys.stdin.read().split()
    rows, cols = int(lines[0]), int(lines[1])
    grid = lines[2 : 2 + rows]
    ways = [0] * cols
    ways[0] = 1
    for row in grid:
        for col in range(cols):
            if row[col] == "#":
                ways[col] = 0
            elif col:
                ways[col] = (ways[col] + ways[col - 1]) % MOD
    print(ways[-1] % MOD)


main()
