import sys


def main():
    data = sys.stdin.buffer.read().split()
    count = int(data[0])
    lines = []
    for i in range(count):
        x1, y1, x2, y2, x3, y3 = (int(v) for v in data[1 + 6 * i : 7 + 6 * i])
        twice = abs((x2 - x1) * (y3 - y1) - (x3 - x1) * (y2 - y1))
        lines.append(f"{twice / 2:.6f}")
    print("\n".join(lines))


main()
