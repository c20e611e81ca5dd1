"""The commands a sed script runs: `e COMMAND` runs a shell command, `e` alone and the `e` flag of `s`
run the pattern space as one (GNU sed). `sed_code(args)` reads sed's options and scripts and returns
them as `Inner`s for the walk: the command of `e COMMAND` as code (the denylist reads it), the others as
work for a human. A script read from a file or one paicli cannot read needs a human too; `--sandbox`
makes sed refuse all of them.
"""

from __future__ import annotations

from paicli.shell.syntax import Inner, Word, word_suffix

_SIMPLE = set("=dDgGhHlnNpPqQxzF")
_LABELS = set("btT:v")  # a label or a version: to `;` or the end of the line
_TEXT = set("aic")
_FILES = set("rRwW")
_HUMAN_E = "sed runs its pattern space as a shell command (`e`)"


class _Unreadable(Exception):
    pass


def sed_code(args: tuple[Word, ...]) -> list[Inner]:
    scripts: list[Word] = []
    files: list[Word] = []
    operands: list[Word] = []
    index = 0
    while index < len(args):
        word, text = args[index], args[index].text
        following = args[index + 1] if index + 1 < len(args) else None
        index += 1
        if text == "--":
            operands += args[index:]
            break
        if text == "--sandbox":
            return []
        if text.startswith("--"):
            name, equals, _ = text.partition("=")
            if "--expression".startswith(name) and len(name) > 2:
                scripts += [word_suffix(word, len(name) + 1)] if equals else [following] if following else []
                index += 0 if equals else 1
            elif "--file".startswith(name) and len(name) > 2:
                files += [word] if equals else [following] if following else []
                index += 0 if equals else 1
            elif "--line-length".startswith(name) and len(name) > 2 and not equals:
                index += 1
            continue
        if text.startswith("-") and len(text) > 1:
            for position, letter in enumerate(text[1:], start=2):
                rest = text[position:]
                if letter == "i":
                    break
                if letter in "efl":
                    if not rest and following is not None:
                        index += 1
                    value = word_suffix(word, position) if rest else following
                    if letter == "e" and value is not None:
                        scripts.append(value)
                    elif letter == "f":
                        files.append(word)
                    break
            continue
        operands.append(word)
    if not scripts and not files and operands:
        scripts.append(operands[0])
    if files:
        return [Inner("sed -f", human="sed runs a script from a file, whose `e` commands run shell commands")]
    found: list[Inner] = []
    for script in scripts:
        if not script.static:
            found.append(Inner("sed", human="the sed script is only known when it runs (its `e` runs commands)"))
            continue
        try:
            found += _commands(script.text)
        except _Unreadable as error:
            found.append(Inner("sed", human=f"paicli cannot read the sed script ({error})"))
    return found


def _commands(script: str) -> list[Inner]:
    """Scan a GNU sed script: every `e`, and every `s` with the `e` flag."""
    found: list[Inner] = []
    at, end = 0, len(script)
    while at < end:
        at = _blanks(script, at, ";\n")
        if at >= end:
            break
        if script[at] == "#":
            at = _line_end(script, at)
            continue
        at = _address(script, at)
        at = _blanks(script, at, "")
        if at < end and script[at] == "!":
            at = _blanks(script, at + 1, "")
        if at >= end:
            raise _Unreadable("an address without a command")
        command = script[at]
        at += 1
        if command in "{}" or command in _SIMPLE:
            while at < end and (script[at].isdigit() or script[at] in " \t"):
                at += 1  # `q 5`, `l 70`
        elif command in _LABELS:
            at = _until(script, at, ";\n")
        elif command in _TEXT or command in _FILES:
            at = _text_end(script, at) if command in _TEXT else _line_end(script, at)
        elif command == "e":
            stop = _line_end(script, at)
            text = script[at:stop].strip()
            found.append(Inner("sed e", code=text) if text else Inner("sed e", human=_HUMAN_E))
            at = stop
        elif command == "s":
            at, flags = _substitution(script, at)
            if "e" in flags:
                found.append(Inner("sed s///e", human=_HUMAN_E))
        elif command == "y":
            at, _ = _substitution(script, at, flags=False)
        else:
            raise _Unreadable(f"the command {command!r}")
    return found


def _blanks(script: str, at: int, also: str) -> int:
    while at < len(script) and (script[at] in " \t" or script[at] in also):
        at += 1
    return at


def _line_end(script: str, at: int) -> int:
    stop = script.find("\n", at)
    return len(script) if stop < 0 else stop


def _until(script: str, at: int, stops: str) -> int:
    while at < len(script) and script[at] not in stops:
        at += 1
    return at


def _text_end(script: str, at: int) -> int:
    """The text of `a`, `i`, `c`: to the end of a line that does not end with a backslash."""
    while at < len(script):
        stop = _line_end(script, at)
        if stop >= len(script) or not script[:stop].endswith("\\") or script[:stop].endswith("\\\\"):
            return stop
        at = stop + 1
    return at


def _address(script: str, at: int) -> int:
    """Skip up to two addresses (`3`, `$`, `1~2`, `/re/I`, `\\%re%`, `0,/re/`, `3,+2`, `3,~4`)."""
    for count in range(2):
        if at >= len(script):
            return at
        char = script[at]
        if char.isdigit():
            while at < len(script) and (script[at].isdigit() or script[at] == "~"):
                at += 1
        elif char == "$":
            at += 1
        elif char in "+~" and count == 1:
            at += 1
            while at < len(script) and script[at].isdigit():
                at += 1
        elif char == "/" or char == "\\":
            delimiter = char if char == "/" else (script[at + 1] if at + 1 < len(script) else "")
            if not delimiter or delimiter in "\n\\":
                raise _Unreadable("an address delimiter")
            at = _delimited(script, at + (1 if char == "/" else 2), delimiter)
            while at < len(script) and script[at] in "IM":
                at += 1
        elif count == 0:
            return at
        else:
            raise _Unreadable("a second address")
        at = _blanks(script, at, "")
        if count == 0 and at < len(script) and script[at] == ",":
            at = _blanks(script, at + 1, "")
            continue
        return at
    return at


def _delimited(script: str, at: int, delimiter: str, *, what: str = "regular expression") -> int:
    """The index after the closing `delimiter`; a backslash escapes the next character. A regular
    expression ends at a newline; a replacement may hold escaped newlines (`s/a/b\\` newline `c/`)."""
    while at < len(script):
        char = script[at]
        if char == "\\":
            at += 2
            continue
        if char == delimiter:
            return at + 1
        if char == "\n" and delimiter != "\n" and what == "regular expression":
            raise _Unreadable("a newline inside a regular expression")
        at += 1
    raise _Unreadable(f"an unterminated {what}")


def _substitution(script: str, at: int, *, flags: bool = True) -> tuple[int, str]:
    if at >= len(script) or script[at] in "\n\\":
        raise _Unreadable("a substitution delimiter")
    delimiter = script[at]
    at = _delimited(script, at + 1, delimiter)
    at = _delimited(script, at, delimiter, what="replacement")
    if not flags:
        return at, ""
    start = at
    while at < len(script) and script[at] not in ";\n}#":
        if script[at] == "w":  # `w FILE` takes the rest of the line
            return _line_end(script, at), script[start:at] + "w"
        if script[at] not in "gpiImMe0123456789 \t":
            raise _Unreadable(f"the substitution flag {script[at]!r}")
        at += 1
    return at, script[start:at]
