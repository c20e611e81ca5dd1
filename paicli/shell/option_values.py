"""Reading the values programs take through their options, shared by the option walkers
(paicli/shell/options.py, paicli/shell/git_options.py)."""

from __future__ import annotations

from paicli.shell.syntax import Inner, Literal, Word, word_suffix


def could_be_option(word: Word) -> bool:
    """Whether a word only known when it runs could be read as an option: it may be split into several
    words, or it may start with `-` (it does not start with plain text)."""
    if word.static:
        return False
    if word.unquoted_dynamic:
        return True
    first = word.parts[0] if word.parts else None
    return not (isinstance(first, Literal) and first.text and not first.text.startswith("-"))


def option_values(
    args: tuple[Word, ...], options: frozenset[str], *, attached_only: bool = False
) -> list[tuple[str, Word]]:
    """The values given to `options`: `--long=V`, `--long V`, `--lo=V` (an abbreviation), `-xV`, `-x V`,
    and `-abx V` (short options bundled; read generously, so a bundle is never missed)."""
    found = []
    for index, word in enumerate(args):
        text = word.text
        if text == "--":
            break
        following = args[index + 1] if index + 1 < len(args) and not attached_only else None
        if text.startswith("--") and len(text) > 2:
            given, equals, _ = text.partition("=")
            for option in options:
                if option.startswith("--") and option.startswith(given):
                    if equals:
                        found.append((option, word_suffix(word, len(given) + 1)))
                    elif following is not None:
                        found.append((option, following))
                    break
        elif text.startswith("-") and not text.startswith("--") and len(text) > 1:
            for option in options:
                if option.startswith("--") or option[1:] not in text[1:]:
                    continue
                rest = text[text.index(option[1:], 1) + len(option) - 1 :]
                if rest:
                    found.append((option, word_suffix(word, len(text) - len(rest))))
                elif following is not None:
                    found.append((option, following))
    return found


def code_of(via: str, value: Word) -> Inner:
    return Inner(via, code=value.text, dynamic=not value.static)
