import sys


def ones_up_to(n):
    total = 0
    bit = 0
    while (1 << bit) <= n:
        period = 1 << (bit + 1)
        full, rest = divmod(n + 1, period)
        total += full * (period // 2) + max(0, rest - period // 2)
        bit += 1
    return total


def main():
    data = sys.stdin.buffer.read().split()
    count = int(data[0])
    print("\n".join(str(ones_up_to(int(v))) for v in data[1 : 1 + count]))


main()
