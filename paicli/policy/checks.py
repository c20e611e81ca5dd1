"""Per-program checks for the classifier: when a command that can only read stays read-only and inside.

Each check returns the reasons the command is not SAFE, each with its risk (ASK, or OPAQUE when paicli
cannot tell what it runs); an empty list means it only reads inside the workspace.
"""

from __future__ import annotations

import re

from paicli.policy.find import check_find
from paicli.policy.paths import Places, option_like_glob
from paicli.policy.readers import JQ_PAIRS, OPERANDS_DATA, OPERANDS_PATTERN_FIRST, READERS, read_options
from paicli.policy.risk import Risk
from paicli.shell.syntax import Word

Reasons = list[tuple[Risk, str]]

# Commands that only print, whatever their arguments (no options that write, run or read a named file).
HARMLESS = frozenset(
    {
        "echo",
        "true",
        "false",
        "pwd",
        "whoami",
        "id",
        "uname",
        "sleep",
        "which",
        "type",
        "nproc",
        "popd",
        "dirs",
        "printenv",
        ":",
        "time",
    }
)
_SED_PRINT_SCRIPT = re.compile(r"(?:[0-9]+|\$)(?:,(?:[0-9]+|\$))?p|/[^/]*/p")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def unknowable_arguments(name: str, args: tuple[Word, ...]) -> Reasons:
    """Arguments whose value, once expanded, paicli cannot know: it could be an option of `name`."""
    for word in args:
        if word.braces:
            return [(Risk.ASK, f"{word.text!r} uses brace expansion, which paicli does not expand")]
        if not word.static:
            return [(Risk.ASK, f"{name} gets arguments only known when it runs ({word.text}); one could be an option")]
        if option_like_glob(word):
            return [(Risk.ASK, f"the glob {word.text} can expand to a file named like an option of {name}")]
    return []


def check_reader(name: str, args: tuple[Word, ...], places: Places) -> Reasons:
    """A program from the read-only table: unsafe options, file-naming options, operands as paths."""
    if unknowable := unknowable_arguments(name, args):
        return unknowable
    if name == "find":
        why, paths = check_find(args)
        return [(Risk.ASK, why)] if why else _paths(paths, places)
    if name == "jq":
        return _jq(args, places)
    spec = READERS[name]
    reasons: Reasons = []
    operands: list[Word] = []
    pattern_given = False
    for option in read_options(spec, args):
        if not option.name:
            operands.append(option.word)
            continue
        candidates = option.ambiguous or (option.name,)
        if unsafe := [c for c in candidates if c in spec.unsafe]:
            reasons.append((Risk.ASK, f"{name} {unsafe[0]} can write files, run programs or follow links out"))
        elif lists := [c for c in candidates if c in spec.name_lists]:
            reasons.append((Risk.ASK, f"{name} {lists[0]} reads file names paicli cannot check"))
        elif option.name in spec.paths and option.value is not None:
            reasons += _paths([option.value], places)
        pattern_given = pattern_given or option.name in spec.pattern_options or option.name in spec.paths
    if spec.operands == OPERANDS_DATA:
        return reasons
    if spec.operands == OPERANDS_PATTERN_FIRST and not pattern_given:
        operands = operands[1:]
    if name == "sed":
        return reasons + _sed(args, operands, places)
    if name == "uniq" and (len(operands) > 1 or any(w.glob for w in args)):  # a glob can expand to two
        reasons.append((Risk.ASK, "uniq with two file names writes the second one"))
    return reasons + _paths(operands, places)


def check_printf(args: tuple[Word, ...]) -> Reasons:
    """`printf -v NAME` assigns (and evaluates `a[$(cmd)]` in NAME); an unknown first word could be `-v`."""
    if args and (not args[0].static or option_like_glob(args[0])):
        return [(Risk.ASK, f"printf's first argument {args[0].text} is only known when it runs; it could be -v")]
    if args and args[0].text.startswith("-v"):
        target = args[0].text[2:] or (args[1].text if len(args) > 1 and args[1].static else "")
        if not _IDENTIFIER.fullmatch(target):
            return [(Risk.OPAQUE, f"printf -v evaluates {target or 'its name'!r} as a variable name, which runs code")]
        return [(Risk.ASK, f"printf -v {target} sets a shell variable that later commands use")]
    return []


def check_test(args: tuple[Word, ...]) -> Reasons:
    """`test -v NAME` evaluates a subscript in NAME; split or globbed words can turn into `-v`."""
    texts = [w.text for w in args]
    for index, text in enumerate(texts):
        if text in ("-v", "-R") and index + 1 < len(args):
            operand = args[index + 1]
            if not (operand.static and _IDENTIFIER.fullmatch(operand.text)):
                return [(Risk.OPAQUE, f"test {text} evaluates {operand.text!r} as a variable name, which runs code")]
    for word in args:
        if word.unquoted_dynamic or option_like_glob(word) or word.braces:
            return [(Risk.ASK, f"test gets {word.text}, which may split into several arguments when it runs")]
    return []


_DECLARING = frozenset({"declare", "typeset", "local", "readonly", "export"})  # take attributes and values


def check_variable_names(name: str, args: tuple[Word, ...]) -> Reasons:
    """`declare 'a[$(cmd)]=1'`, `unset 'a[$(cmd)]'`, `read "$name"`, `let 'x=a[$(cmd)]'`: a name bash
    evaluates is code paicli cannot see."""
    declaring = name in _DECLARING
    for word in args:
        text = word.text
        if declaring and word.static and text.startswith(("-", "+")) and "i" in text[1:]:
            return [(Risk.OPAQUE, f"{name} {text} makes every value the variable gets arithmetic, which can run code")]
        if declaring and word.static and re.match(r"[^=]*=\(.*[\[$`]", text, re.DOTALL):
            return [(Risk.OPAQUE, f"{name} evaluates the array in {text!r} when it runs, which can run code")]
        if text.startswith(("-", "+")) and word.static and name != "let":
            continue
        target = text if name == "let" else text.split("=", 1)[0]
        if not word.static or (name == "let" and re.search(r"[\[$`]", text)):
            return [(Risk.OPAQUE, f"{name} evaluates {text!r} when it runs, which can run code")]
        if name != "let" and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[0-9@*]*\])?", target):
            return [(Risk.OPAQUE, f"{name} evaluates {target!r} as a variable name, which can run code")]
    return []


def check_cd(args: tuple[Word, ...], places: Places) -> Reasons:
    targets = [w for w in args if w.text not in ("--", "-L", "-P", "-e", "-@")]
    if len(targets) != 1 or targets[0].text == "-" or targets[0].text.startswith("-"):
        return [(Risk.ASK, "it changes to a folder paicli cannot check")]
    if reason := places.enter(targets[0]):
        return [(Risk.ASK, reason)]
    return []


def _paths(words: list[Word], places: Places) -> Reasons:
    for word in words:
        if reason := places.outside(word):
            return [(Risk.ASK, reason)]
    return []


def _sed(args: tuple[Word, ...], operands: list[Word], places: Places) -> Reasons:
    """Only `sed -n 'N,Mp' FILE...` (printing lines) counts as reading."""
    options = [a.text for a in args if a.text.startswith("-")]
    if options != ["-n"] or not operands or not _SED_PRINT_SCRIPT.fullmatch(operands[0].text):
        return [(Risk.ASK, "sed can edit files in place or run commands; only `sed -n 'N,Mp' FILE` counts as reading")]
    return _paths(operands[1:], places)


def _jq(args: tuple[Word, ...], places: Places) -> Reasons:
    """jq FILTER [FILE...]; `--rawfile NAME FILE` and `-f FILE` read files; after `--args` come strings."""
    paths: list[Word] = []
    operands: list[Word] = []
    filter_from_file = False
    index = 0
    while index < len(args):
        text = args[index].text
        if text in ("--args", "--jsonargs"):
            break
        if text.split("=", 1)[0] in JQ_PAIRS:
            if JQ_PAIRS[text] and index + 2 < len(args):
                paths.append(args[index + 2])
            index += 3
            continue
        if text in ("-f", "--from-file", "-L"):
            filter_from_file = filter_from_file or text != "-L"
            paths.extend(args[index + 1 : index + 2])
            index += 2
            continue
        if text == "--indent":
            index += 2
            continue
        if not text.startswith("-") or text == "-":
            operands.append(args[index])
        index += 1
    if not filter_from_file and operands and re.search(r"\b(?:import|include)\b", operands[0].text):
        return [(Risk.ASK, "the jq program loads modules from files")]
    return _paths(paths + (operands if filter_from_file else operands[1:]), places)
