"""An arithmetic evaluator (recursive descent)."""

import re

_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\.\d+|\d+)|(\*\*|[-+*/()]))")


def _tokens(text):
    tokens, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise ValueError(f"unexpected character at {pos}: {text[pos:pos + 1]!r}")
        number, op = match.groups()
        if number is not None:
            if re.match(r"\.\d", text[match.end():match.end() + 2]) or text[match.end():match.end() + 1] == ".":
                raise ValueError(f"bad number at {pos}")
            tokens.append(("num", float(number) if "." in number else int(number)))
        else:
            tokens.append(("op", op))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens):
        self.tokens, self.i, self.divides = tokens, 0, False

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None)

    def take(self, op=None):
        kind, value = self.peek()
        if kind is None or (op is not None and value != op):
            raise ValueError(f"expected {op or 'more input'}")
        self.i += 1
        return kind, value

    def expression(self):
        value = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            right = self.term()
            value = value + right if op == "+" else value - right
        return value

    def term(self):
        value = self.unary()
        while self.peek() in (("op", "*"), ("op", "/")):
            op = self.take()[1]
            right = self.unary()
            if op == "*":
                value = value * right
            else:
                self.divides = True
                value = value / right
        return value

    def unary(self):
        if self.peek() in (("op", "-"), ("op", "+")):
            op = self.take()[1]
            value = self.unary()
            return -value if op == "-" else value
        return self.power()

    def power(self):
        base = self.atom()
        if self.peek() == ("op", "**"):
            self.take()
            return base ** self.unary()
        return base

    def atom(self):
        kind, value = self.take()
        if kind == "num":
            return value
        if value == "(":
            inner = self.expression()
            self.take(")")
            return inner
        raise ValueError(f"unexpected {value!r}")


def evaluate(expression: str):
    tokens = _tokens(expression)
    if not tokens:
        raise ValueError("empty expression")
    parser = _Parser(tokens)
    value = parser.expression()
    if parser.i != len(tokens):
        raise ValueError(f"unexpected {parser.peek()[1]!r}")
    return value
