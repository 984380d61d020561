import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    parent = list(range(n + 1))
    size = [1] * (n + 1)

    def root(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    answers = []
    for at in range(2, 2 + 3 * q, 3):
        a, b = root(int(data[at + 1])), root(int(data[at + 2]))
        if data[at] == b"1":
            if a != b:
                if size[a] < size[b]:
                    a, b = b, a
                parent[b] = a
                size[a] += size[b]
        else:
            answers.append("YES" if a == b else "NO")
    print("\n".join(answers))


main()
