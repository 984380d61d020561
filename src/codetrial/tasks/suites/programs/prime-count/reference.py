import sys


def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    queries = [int(t) for t in data[1 : 1 + q]]
    top = max(queries)
    prime = bytearray([1]) * (top + 1)
    prime[0] = 0
    if top >= 1:
        prime[1] = 0
    for p in range(2, int(top**0.5) + 1):
        if prime[p]:
            prime[p * p :: p] = bytes(len(range(p * p, top + 1, p)))
    count = [0] * (top + 1)
    running = 0
    for value in range(top + 1):
        running += prime[value]
        count[value] = running
    print("\n".join(str(count[n]) for n in queries))


main()
