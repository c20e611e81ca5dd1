"""Bracket checking."""

_PAIRS = {")": "(", "]": "[", "}": "{"}


def first_error(text: str) -> int | None:
    stack: list[tuple[str, int]] = []
    quote, quote_at, escaped = None, -1, False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote, quote_at = ch, i
        elif ch in "([{":
            stack.append((ch, i))
        elif ch in _PAIRS:
            if not stack or stack[-1][0] != _PAIRS[ch]:
                return i
            stack.pop()
    if quote:
        return stack[0][1] if stack and stack[0][1] < quote_at else quote_at
    return stack[0][1] if stack else None


def is_balanced(text: str) -> bool:
    return first_error(text) is None
