import sys


def main():
    data = sys.stdin.read().split()
    rows, cols = int(data[0]), int(data[1])
    land = [[ch == "#" for ch in line] for line in data[2 : 2 + rows]]
    islands = 0
    for r in range(rows):
        for c in range(cols):
            if not land[r][c]:
                continue
            islands += 1
            land[r][c] = False
            stack = [(r, c)]
            while stack:
                y, x = stack.pop()
                for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                    if 0 <= ny < rows and 0 <= nx < cols and land[ny][nx]:
                        land[ny][nx] = False
                        stack.append((ny, nx))
    print(islands)


main()
