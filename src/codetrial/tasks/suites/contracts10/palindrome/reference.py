def is_palindrome(text: str) -> bool:
    """Return True if text is a palindrome, ignoring case and non-alphanumeric characters."""
    cleaned = [ch.lower() for ch in text if ch.isalnum()]
    return cleaned == cleaned[::-1]
