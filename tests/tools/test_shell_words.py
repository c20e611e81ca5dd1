"""Splitting a command line the way bash would, for the command guard."""

from __future__ import annotations

import pytest

from paicli.tools.shell_words import SimpleCommand, extract_substitutions, pipelines, restore, tokenize


def test_substitutions_are_found_in_double_quotes_but_not_single_quotes() -> None:
    flat, subs = extract_substitutions("""a "$(one)" '$(two)' `three` <(four)""")
    assert subs == ["one", "three", "four"]
    assert "$(two)" in flat


def test_nested_and_quoted_parentheses_close_at_the_right_place() -> None:
    flat, subs = extract_substitutions('x $(echo ")" $(inner)) tail')
    assert subs == ['echo ")" $(inner)']
    assert flat.endswith(" tail")


def test_restore_puts_the_code_back() -> None:
    flat, subs = extract_substitutions("rm -rf $(pwd)")
    assert restore(flat, subs).split() == ["rm", "-rf", "$(pwd)"]
    assert restore("__paicli_sub_7__", subs) == "$()"


def test_quotes_are_removed_and_hash_is_not_a_comment() -> None:
    assert tokenize("""r"m" -rf 'a b' c#d""") == ["rm", "-rf", "a b", "c#d"]


def test_unbalanced_quotes_raise_value_error() -> None:
    with pytest.raises(ValueError):
        tokenize("echo 'open")


def test_pipelines_split_on_operators_and_keep_redirects_apart() -> None:
    result = list(pipelines("a x | b 2>&1 > out; c && d\ne"))
    assert result == [
        [SimpleCommand(["a", "x"]), SimpleCommand(["b", "2"], [(">&", "1"), (">", "out")])],
        [SimpleCommand(["c"])],
        [SimpleCommand(["d"])],
        [SimpleCommand(["e"])],
    ]


def test_lines_before_an_unbalanced_quote_are_still_split() -> None:
    result = list(pipelines("first line\necho 'open"))
    assert [SimpleCommand(["first", "line"])] in result
