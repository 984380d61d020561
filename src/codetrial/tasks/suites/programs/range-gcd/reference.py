import sys
from math import gcd


def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    table = [[int(v) for v in data[2 : 2 + n]]]
    width = 1
    while 2 * width <= n:
        last = table[-1]
        table.append([gcd(last[i], last[i + width]) for i in range(n - 2 * width + 1)])
        width *= 2
    answers = []
    for at in range(2 + n, 2 + n + 2 * q, 2):
        left, right = int(data[at]) - 1, int(data[at + 1])
        level = (right - left).bit_length() - 1
        row = table[level]
        answers.append(gcd(row[left], row[right - (1 << level)]))
    print("\n".join(map(str, answers)))


main()
