import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    prefix = [0]
    for token in data[2 : 2 + n]:
        prefix.append(prefix[-1] + int(token))
    answers = []
    for at in range(2 + n, 2 + n + 2 * q, 2):
        answers.append(prefix[int(data[at + 1])] - prefix[int(data[at]) - 1])
    print("\n".join(map(str, answers)))


main()
