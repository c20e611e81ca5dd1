"""The files a command overwrites or deletes, read from its words, so that one undo cannot bring back (a
git-ignored file, one over the checkpoints' size limit: policy/destructive.py) asks even in the sandbox.

What each program destroys, as GNU's option parsing reads its words (options anywhere, `--` ending them,
a short option's value attached or in the next word, `--long=value` or `--long value`):

    cp, mv, install   the destination; with `-t DIR` (or a destination that is a folder) DIR/name of each
                      source; `-T` makes the destination itself the target
    rsync             the destination, or DIR/name of each source (a source ending in `/` copies what it
                      holds: each file below it is not looked at)
    tee               every file named (not with `-a`)
    dd                `of=FILE`
    rm, unlink, shred, srm, wipe, truncate   every file named (these ask anyway: the reason says what is lost)

Only words whose text is known before the command runs are followed (quotes undone, globs expanded as bash
would, `~/` expanded, symlinks resolved); `cp x "$F"` is not. What a recursive copy overwrites below a
folder it copies into is not looked at either.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from paicli.policy.destructive import uncovered_reason
from paicli.policy.paths import Places
from paicli.shell.syntax import Literal, Word

MAX_TARGETS = 200  # paths looked at per command; more are not checked (the command asks anyway if it deletes)


@dataclass(frozen=True)
class _Program:
    verb: str
    short_values: str = ""  # short options that take a value
    long_values: frozenset[str] = frozenset()  # long options that take a value (without `=`)
    into: bool = False  # the last operand is the destination, which may be a folder the others go into
    target_option: bool = False  # `-t DIR` / `--target-directory=DIR`, `-T` / `--no-target-directory`
    skip: frozenset[str] = field(default_factory=frozenset)  # options that make it destroy nothing


_COPY_LONG = frozenset({"--target-directory", "--suffix"})
_RSYNC_LONG = frozenset(
    {
        *("--rsh", "--filter", "--exclude", "--include", "--exclude-from", "--include-from", "--files-from"),
        *("--temp-dir", "--partial-dir", "--compare-dest", "--copy-dest", "--link-dest", "--block-size"),
        *("--log-file", "--password-file", "--chmod", "--chown", "--usermap", "--groupmap", "--backup-dir"),
        *("--suffix", "--max-size", "--min-size", "--timeout", "--port", "--bwlimit", "--remote-option"),
        *("--out-format", "--rsync-path", "--iconv"),
    }
)
_PROGRAMS = {
    "cp": _Program("overwrites", "tS", _COPY_LONG, into=True, target_option=True),
    "mv": _Program("overwrites", "tS", _COPY_LONG, into=True, target_option=True),
    "install": _Program(
        "overwrites",
        "tSmogZ",
        _COPY_LONG | {"--mode", "--owner", "--group", "--strip-program", "--context"},
        into=True,
        target_option=True,
        skip=frozenset({"-d", "--directory"}),
    ),
    "rsync": _Program("overwrites", "efTBM", _RSYNC_LONG, into=True),
    "tee": _Program("overwrites", skip=frozenset({"-a", "--append"})),
    "rm": _Program("deletes"),
    "unlink": _Program("deletes"),
    "srm": _Program("deletes"),
    "wipe": _Program("destroys"),
    "shred": _Program("destroys", "ns", frozenset({"--iterations", "--size", "--random-source"})),
    "truncate": _Program("cuts", "sr", frozenset({"--size", "--reference"})),
}


@dataclass
class _Parsed:
    operands: list[Word] = field(default_factory=list)
    target: Word | None = None  # -t DIR
    no_target: bool = False  # -T
    skipped: bool = False  # an option that makes it destroy nothing (tee -a, install -d)


def destroyed(name: str, args: tuple[Word, ...], places: Places) -> tuple[str, list[Path]] | None:
    """What `name args` overwrites or deletes, as (verb, the paths it may land on from any folder the command
    may be in, resolved); None when it is none of these programs, or destroys nothing."""
    if name == "dd":
        outputs = [_drop(word, 3) for word in args if word.text.startswith("of=")]
        return ("overwrites", _paths([w for w in outputs if w is not None], places)) if outputs else None
    program = _PROGRAMS.get(name)
    if program is None:
        return None
    parsed = _parse(program, args)
    if parsed.skipped:
        return None
    if not program.into:
        return (program.verb, _paths(parsed.operands, places)) if parsed.operands else None
    if parsed.target is not None:
        return program.verb, _into(parsed.target, parsed.operands, places)
    if len(parsed.operands) < 2:
        return None
    *sources, destination = parsed.operands
    paths = _paths([destination], places)
    if not parsed.no_target:
        paths += _into(destination, sources, places)
    return program.verb, paths[:MAX_TARGETS]


def lost_by(name: str, args: tuple[Word, ...], places: Places) -> str | None:
    """Why `name args` destroys a file undo cannot restore (policy/destructive.py); None when it does not."""
    found = destroyed(name, args, places)
    return uncovered_reason(found[1], places.root, f"{name} {found[0]}") if found else None


def lost_by_redirect(target: Word, places: Places) -> str | None:
    """Why `> target` cuts a file undo cannot restore, from any folder the command may be in."""
    return uncovered_reason(places.paths(target), places.root)


def _parse(program: _Program, args: tuple[Word, ...]) -> _Parsed:
    parsed = _Parsed()
    words = iter(args)
    for word in words:
        text = word.text
        if not word.static or text == "-" or not text.startswith("-"):
            parsed.operands.append(word)
        elif text == "--":
            parsed.operands += list(words)
        elif text.startswith("--"):
            option, equals, _ = text.partition("=")
            parsed.skipped = parsed.skipped or option in program.skip
            targets = program.target_option and len(option) > 3 and "--target-directory".startswith(option)
            if program.target_option and len(option) > 4 and "--no-target-directory".startswith(option):
                parsed.no_target = True
            if not (targets or option in program.long_values):
                continue
            value = _drop(word, len(option) + 1) if equals else next(words, None)
            if targets:
                parsed.target = value
        else:
            _short(program, word, words, parsed)
    return parsed


def _short(program: _Program, word: Word, words: Iterator[Word], parsed: _Parsed) -> None:
    """One cluster of short options (`-fT`, `-tDIR`, `-t DIR`): a letter that takes a value ends it."""
    cluster = word.text[1:]
    for index, letter in enumerate(cluster):
        parsed.skipped = parsed.skipped or f"-{letter}" in program.skip
        if program.target_option and letter == "T":
            parsed.no_target = True
        if letter in program.short_values:
            value = _drop(word, index + 2) if index + 1 < len(cluster) else next(words, None)
            if program.target_option and letter == "t":
                parsed.target = value
            return


def _drop(word: Word, count: int) -> Word | None:
    """`word` without its first `count` characters (`of=`, `-t`), its quoting kept; None when they are not
    plain text, or nothing is left."""
    parts = list(word.parts)
    while count and parts:
        first = parts[0]
        if not isinstance(first, Literal):
            return None
        if len(first.text) <= count:
            count -= len(first.text)
            parts.pop(0)
        else:
            parts[0] = Literal(first.text[count:], first.quoted)
            count = 0
    return Word(word.source, tuple(parts)) if parts and not count else None


def _paths(words: list[Word], places: Places) -> list[Path]:
    found: list[Path] = []
    for word in words[:MAX_TARGETS]:
        found += places.paths(word)
    return found[:MAX_TARGETS]


def _into(folder: Word, sources: list[Word], places: Places) -> list[Path]:
    """FOLDER/name of each source, for each place FOLDER may be that is a folder (a source ending in `/`
    brings what it holds, not itself)."""
    names: set[str] = set()
    for source in sources:
        if source.text.endswith("/"):
            continue
        names |= {path.name for path in places.paths(source, resolve=False)}
    found: list[Path] = []
    for base in places.paths(folder):
        if base.is_dir():
            found += [Path(os.path.realpath(base / name)) for name in sorted(names) if name not in ("", ".", "..")]
    return found[:MAX_TARGETS]
