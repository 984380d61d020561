import bisect
import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    tails = []
    for token in data[1 : n + 1]:
        value = int(token)
        at = bisect.bisect_left(tails, value)
        if at == len(tails):
            tails.append(value)
        else:
            tails[at] = value
    print(len(tails))


main()
