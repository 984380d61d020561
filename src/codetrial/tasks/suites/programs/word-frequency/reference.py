import collections
import re
import sys


def main():
    words = re.findall(r"[a-z]+", sys.stdin.read().lower())
    if not words:
        print("none 0")
        return
    counts = collections.Counter(words)
    word, count = min(counts.items(), key=lambda item: (-item[1], item[0]))
    print(word, count)


main()
