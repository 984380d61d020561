import sys


def main():
    text = sys.stdin.readline().strip()
    parts = []
    start = 0
    for at in range(1, len(text) + 1):
        if at == len(text) or text[at] != text[start]:
            parts.append(f"{text[start]}{at - start}")
            start = at
    print("".join(parts))


main()
