"""Which files matter for a goal, best first.

1. Files the goal names: a path (`src/app.py`, `@src/app.py`), a file name (`app.py`) or a dotted
   module (`paicli.agent.context`) that matches a listed file. They come first, in the goal's order.
2. BM25 over each file's words (its text, its path's words counted `PATH_WEIGHT` times, its symbols'
   names `SYMBOL_WEIGHT` times) with the goal's words as the query; a file in a folder the goal names
   (a compound name such as `babel-register` or `@babel/standalone`, matching one of the top three levels
   of folders, at most three such folders) scores `FOLDER_BOOST` times as much.
3. Widened by the code's own links from the best `LINKED_FROM` files: the files defining the top-level
   symbols they use (a name defined in at most `MAX_DEFINERS` files), their tests (`test_x.py`,
   `x_test.go`, `x.test.ts`, `XTest.java`, ...), and the files that usually change with them (git
   history, history.py). A linked file gets a share of its source's score: a test a good share, a
   definition a small one (a tie-breaker: larger shares crowd out the goal's hits), a file changed with
   it `COCHANGE_SHARE` times the share of its commits they shared.
4. The files with no score last, shallow ones first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol

from paicli.repomap.words import IDENTIFIER, STOP, words

K1 = 1.2
B = 0.75
LINKED_FROM = 10
MAX_DEFINERS = 3
DEFINES_SHARE = 0.02  # measured (bench context, mypy): 0.35 took recall at 1,000 tokens from 0.81 to 0.33
TEST_SHARE = 0.3
COCHANGE_SHARE = 0.6  # measured (bench context): 0.3 and 1.0 were no better over mypy and babel together
FOLDER_BOOST = 2.0  # measured (40 babel commits, 3,000 tokens): none 0.705, 2.0 0.726, 3.0 0.701; mypy the same
FOLDER_DEPTH = 3
MENTION = re.compile(r"@?([\w.\-/]+)")
TEST_NAMES = ("test_{}", "{}_test", "{}.test", "{}.spec", "{}Test", "{}Tests", "{}_spec", "test{}")


class Corpus(Protocol):
    def documents(self) -> tuple[int, float]: ...
    def postings(self, term: str) -> dict[str, tuple[int, int]]: ...
    def definers(self, names: Sequence[str]) -> dict[str, list[str]]: ...
    def changed_with(self, path: str) -> tuple[int, dict[str, int]]: ...


@dataclass
class Ranking:
    named: list[str]  # files the goal names, in its order
    ranked: list[str]  # every other file with a score, best first
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def files(self) -> list[str]:
        return self.named + self.ranked


def named_files(goal: str, paths: Sequence[str]) -> list[str]:
    """The listed files the goal names (see the module's docstring), at most three per mention."""
    by_name: dict[str, list[str]] = {}
    listed = set(paths)
    for path in paths:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    found: list[str] = []
    for match in MENTION.finditer(goal):
        mention = match.group(1).strip("./").rstrip(".,;:")
        if not mention or ("." not in mention and "/" not in mention):
            continue
        candidates = [mention] if mention in listed else []
        if not candidates and "/" in mention:
            candidates = [p for p in paths if p.endswith("/" + mention)]
        if not candidates and "/" not in mention:
            candidates = by_name.get(mention, [])
        if not candidates and re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+", mention):
            module = mention.replace(".", "/")
            wanted = (f"{module}.py", f"{module}/__init__.py", f"{module}.go", f"{module}.rs", f"{module}.java")
            inside = tuple("/" + w for w in wanted)
            candidates = [p for p in paths if p in wanted or p.endswith(inside)]
        if len(candidates) <= 3:
            found += [c for c in candidates if c not in found]
    return found


def named_folders(goal: str, paths: Sequence[str]) -> tuple[str, ...]:
    """The folders (`prefix/`) of the top `FOLDER_DEPTH` levels the goal names by a compound name (with
    `-`, `_` or `/`: a package, not a common word); an npm-style `@scope/name` names `scope-name` or
    `name` too. A name shared by more than three folders names none."""
    wanted: set[str] = set()
    for match in MENTION.finditer(goal):
        mention = match.group(1).strip("./").rstrip(".,;:")
        if any(mark in mention for mark in "-_/"):
            wanted.update((mention, mention.replace("/", "-"), mention.rsplit("/", 1)[-1]))
    wanted = {name for name in wanted if len(name) >= 4}
    if not wanted:
        return ()
    found: dict[str, set[str]] = {}
    for path in paths:
        parts = path.split("/", FOLDER_DEPTH)[:-1][:FOLDER_DEPTH]
        for depth, part in enumerate(parts):
            if part in wanted:
                found.setdefault(part, set()).add("/".join(parts[: depth + 1]) + "/")
    return tuple(sorted(prefix for prefixes in found.values() if len(prefixes) <= 3 for prefix in prefixes))


def bm25(corpus: Corpus, query: Sequence[str]) -> dict[str, float]:
    count, mean_length = corpus.documents()
    scores: dict[str, float] = {}
    for term, weight in _weights(query).items():
        postings = corpus.postings(term)
        if not postings:
            continue
        idf = math.log(1 + (count - len(postings) + 0.5) / (len(postings) + 0.5))
        for path, (tf, length) in postings.items():
            norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / mean_length))
            scores[path] = scores.get(path, 0.0) + weight * idf * norm
    return scores


def rank(corpus: Corpus, goal: str, paths: Sequence[str], read: ReadText) -> Ranking:
    """The files of `paths` ranked for `goal`; `read(path)` gives a listed file's text (None if unreadable)."""
    listed = set(paths)
    named = named_files(goal, paths)
    scores = {path: score for path, score in bm25(corpus, words(goal)).items() if path in listed}
    if folders := named_folders(goal, paths):
        scores = {path: score * FOLDER_BOOST if path.startswith(folders) else score for path, score in scores.items()}
    seeds = named + [p for p in sorted(scores, key=lambda p: -scores[p]) if p not in named][:LINKED_FROM]
    top = max(scores.values(), default=1.0)
    for seed in seeds:
        base = scores.get(seed, top)
        for linked, share in _links(corpus, seed, paths, read):
            if linked in listed and linked != seed:
                scores[linked] = scores.get(linked, 0.0) + share * base
    ranked = sorted((p for p in scores if p not in named), key=lambda p: (-scores[p], p))
    rest = sorted((p for p in paths if p not in scores and p not in named), key=lambda p: (p.count("/"), p))
    return Ranking(named=named, ranked=ranked + rest, scores=scores)


class ReadText(Protocol):
    def __call__(self, path: str) -> str | None: ...


def _weights(query: Sequence[str]) -> dict[str, float]:
    """Each distinct query word once; a word repeated in the goal weighs a little more."""
    weights: dict[str, float] = {}
    for word in query:
        weights[word] = 1.0 if word not in weights else min(weights[word] + 0.25, 2.0)
    return weights


def _links(corpus: Corpus, seed: str, paths: Sequence[str], read: ReadText) -> list[tuple[str, float]]:
    links = [(test, TEST_SHARE) for test in tests_for(seed, paths)]
    changes, together = corpus.changed_with(seed)
    links += [(other, COCHANGE_SHARE * shared / changes) for other, shared in together.items()]
    text = read(seed)
    if text is None:
        return links
    used = {name for name in IDENTIFIER.findall(text) if len(name) > 2 and name.lower() not in STOP}
    for _name, definers in corpus.definers(sorted(used)).items():
        if len(definers) <= MAX_DEFINERS:
            links += [(path, DEFINES_SHARE / len(definers)) for path in definers]
    return links


def tests_for(path: str, paths: Sequence[str]) -> list[str]:
    """The listed files whose name says they test `path` (`test_x.py` for `x.py`, and so on)."""
    pure = PurePosixPath(path)
    stem, suffix = pure.stem, pure.suffix
    if not stem or _is_test(pure.name):
        return []
    names = {pattern.format(stem) + suffix for pattern in TEST_NAMES}
    return [p for p in paths if p.rsplit("/", 1)[-1] in names]


def _is_test(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("test") or any(marker in lowered for marker in ("_test.", ".test.", ".spec.", "test."))
