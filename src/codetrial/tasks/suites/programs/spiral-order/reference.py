import sys


def main():
    data = sys.stdin.buffer.read().split()
    rows, cols = int(data[0]), int(data[1])
    grid = [data[2 + r * cols : 2 + (r + 1) * cols] for r in range(rows)]
    top, bottom, left, right = 0, rows - 1, 0, cols - 1
    order = []
    while top <= bottom and left <= right:
        order += grid[top][left : right + 1]
        order += [grid[r][right] for r in range(top + 1, bottom + 1)]
        if top < bottom and left < right:
            order += grid[bottom][left:right][::-1]
            order += [grid[r][left] for r in range(bottom - 1, top, -1)]
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    print(b" ".join(order).decode())


main()
