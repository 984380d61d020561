import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, budget = int(data[0]), int(data[1])
    costs = [int(t) for t in data[2 : 2 + n]]
    best = total = left = 0
    for right, cost in enumerate(costs):
        total += cost
        while total > budget:
            total -= costs[left]
            left += 1
        best = max(best, right - left + 1)
    print(best)


main()
