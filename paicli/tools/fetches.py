"""Downloads in a command line: which programs fetch, and which files they leave behind to be run."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from paicli.shell.programs import basename
from paicli.shell.syntax import Redirect, Script, Word
from paicli.shell.walk import Site, Visitor, walk

FETCHERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-download", "lwp-request", "GET"})
_OUTPUT_OPTIONS = {"curl": ("-o", "--output"), "wget": ("-O", "--output-document"), "aria2c": ("-o", "--out")}
_REMOTE_NAME = {"curl": ("-O", "--remote-name", "--remote-name-all")}


def is_fetcher(name: str) -> bool:
    return basename(name) in FETCHERS


def fetchers_in(script: Script) -> bool:
    """Whether running `script` downloads something (its commands, substitutions and nested code)."""
    finder = _FetcherFinder()
    walk(script, finder)
    return finder.found


class _FetcherFinder(Visitor):
    def __init__(self) -> None:
        self.found = False

    def command(self, site: Site) -> None:
        self.found = self.found or bool(site.words and is_fetcher(site.words[0].text))


class Fetches:
    """The files that the commands seen so far downloaded into, by normalised path."""

    def __init__(self) -> None:
        self.files: set[str] = set()

    def holds(self, word: Word) -> bool:
        return word.static and _normal(word.text) in self.files

    def record(self, name: str, args: tuple[Word, ...], redirects: tuple[Redirect, ...]) -> None:
        if name not in FETCHERS:
            return
        texts = [a.text for a in args]
        outputs = _OUTPUT_OPTIONS.get(name, ())
        named = False
        for index, text in enumerate(texts):
            for option in outputs:
                if text == option and index + 1 < len(texts):
                    self.files.add(_normal(texts[index + 1]))
                    named = True
                elif text.startswith(option + ("=" if option.startswith("--") else "")) and text != option:
                    self.files.add(_normal(text[len(option) :].lstrip("=")))
                    named = True
        remote = name == "wget" or any(t in _REMOTE_NAME.get(name, ()) for t in texts)
        if remote and not named:
            for text in texts:
                if "://" in text:
                    self.files.add(_normal(os.path.basename(urlsplit(text).path) or "index.html"))
        for redirect in redirects:
            if redirect.writes and redirect.target is not None and redirect.fd in (None, "1"):
                self.files.add(_normal(redirect.target.text))


def _normal(path: str) -> str:
    return os.path.normpath(path)
