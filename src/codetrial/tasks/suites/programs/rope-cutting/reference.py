import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    ropes = [int(t) for t in data[2 : 2 + n]]
    low, high = 0, max(ropes)
    while low < high:
        middle = (low + high + 1) // 2
        if sum(rope // middle for rope in ropes) >= k:
            low = middle
        else:
            high = middle - 1
    print(low)


main()
