import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    intervals = sorted((int(data[1 + 2 * i]), int(data[2 + 2 * i])) for i in range(n))
    merged = [list(intervals[0])]
    for left, right in intervals[1:]:
        if left <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], right)
        else:
            merged.append([left, right])
    print(len(merged))
    print("\n".join(f"{left} {right}" for left, right in merged))


main()
