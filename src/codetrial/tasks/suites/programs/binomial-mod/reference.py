import sys

MOD = 10**9 + 7


def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    questions = [(int(data[1 + 2 * i]), int(data[2 + 2 * i])) for i in range(q)]
    top = max(n for n, _ in questions)
    factorial = [1] * (top + 1)
    for i in range(1, top + 1):
        factorial[i] = factorial[i - 1] * i % MOD
    inverse = [1] * (top + 1)
    inverse[top] = pow(factorial[top], MOD - 2, MOD)
    for i in range(top, 0, -1):
        inverse[i - 1] = inverse[i] * i % MOD
    print(
        "\n".join(str(factorial[n] * inverse[k] % MOD * inverse[n - k] % MOD) for n, k in questions)
    )


main()
