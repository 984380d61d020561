def is_balanced(text: str) -> bool:
    """Return True if the (), [] and {} brackets in text are balanced."""
    opener_of = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in opener_of:
            if not stack or stack.pop() != opener_of[ch]:
                return False
    return not stack
