import pytest

from brackets import first_error, is_balanced


@pytest.mark.parametrize(("text", "index"), [
    ("", None), ("()[]{}", None), ("([{}])", None), ("f(a[1], {b: 2})", None),
    (")", 0), ("(]", 1), ("([)]", 2), ("((", 0), ("a(b[c", 1), ("(()", 0), ("{[]}}", 4),
    ("print(')')", None), ('x = "(" + ")"', None), ("'a\\'b' (", 7), ("'it\\'s' )", 8), ("'\\\\' ]", 5),
    ("( 'abc", 0), ("x 'abc", 2), ("'(", 0), ('"', 0),
])
def test_first_error(text, index):
    assert first_error(text) == index


def test_is_balanced():
    assert is_balanced("{[()]}") and not is_balanced("{[(])}")
