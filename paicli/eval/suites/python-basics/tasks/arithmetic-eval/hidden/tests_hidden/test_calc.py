import ast

import pytest

import calc
from calc import evaluate


@pytest.mark.parametrize(("text", "value"), [
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("10 - 4 - 3", 3), ("2 ** 3 ** 2", 512), ("-2 ** 2", -4),
    ("(-2) ** 2", 4), ("7 / 2", 3.5), ("8 / 4", 2.0), (".5 + 2.5", 3.0), ("--3", 3), ("+4", 4),
    ("2 * -3", -6), (" 42 ", 42), ("2 ** -1", 0.5), ("((((1))))", 1), ("100 - 2 * (3 + 4) / 7", 98.0),
])
def test_values(text, value):
    result = evaluate(text)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize("text", ["", "1 +", "(1 + 2", "1 + 2)", "2 $ 3", "* 3", "1 2", "()", "1..2"])
def test_errors(text):
    with pytest.raises(ValueError):
        evaluate(text)


def test_division_by_zero():
    with pytest.raises(ZeroDivisionError):
        evaluate("1 / (2 - 2)")


def test_no_eval():
    tree = ast.parse(open(calc.__file__, encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in ("eval", "exec", "compile")
        if isinstance(node, ast.Import):
            assert "ast" not in [alias.name for alias in node.names]
        if isinstance(node, ast.ImportFrom):
            assert node.module != "ast"
