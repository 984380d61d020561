import sys


def main():
    text = sys.stdin.readline().strip()
    padded = "^#" + "#".join(text) + "#$"
    radius = [0] * len(padded)
    center = right = 0
    for i in range(1, len(padded) - 1):
        if i < right:
            radius[i] = min(right - i, radius[2 * center - i])
        while padded[i + radius[i] + 1] == padded[i - radius[i] - 1]:
            radius[i] += 1
        if i + radius[i] > right:
            center, right = i, i + radius[i]
    print(max(radius))


main()
