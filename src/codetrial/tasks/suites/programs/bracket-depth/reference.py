import sys


def main():
    text = sys.stdin.readline().strip()
    pairs = {")": "(", "]": "["}
    stack = []
    depth = 0
    for char in text:
        if char in "([":
            stack.append(char)
            depth = max(depth, len(stack))
        elif not stack or stack.pop() != pairs[char]:
            print(-1)
            return
    print(depth if not stack else -1)


main()
