import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    meetings = sorted((int(data[2 + 2 * i]), int(data[1 + 2 * i])) for i in range(n))
    held, free_at = 0, 0
    for end, start in meetings:
        if start >= free_at:
            held += 1
            free_at = end
    print(held)


main()
