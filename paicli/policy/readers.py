"""The read-only programs, option by option: what makes one write, run a program, or read a file it names.

Each `Spec` lists a program's options that are unsafe (write files, run programs, follow links out), that
name a file it reads (checked like any path), that read file names from a file or stdin (never safe:
the names cannot be checked), and that take some other value (so the next word is not an operand).
Options are read as GNU getopt does: `--opt=value`, `--opt value`, unique abbreviations (`--out` is
`--output`), clusters (`-uo FILE` holds `-o`), values glued on (`-T/tmp`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from paicli.shell.syntax import Literal, Word

OPERANDS_PATHS = "paths"
OPERANDS_DATA = "data"  # operands are text, not files (`tr a-z A-Z`, `basename /x/y`)
OPERANDS_PATTERN_FIRST = "pattern-first"  # the first operand is a pattern (grep, rg, jq)


@dataclass(frozen=True)
class Spec:
    unsafe: frozenset[str] = frozenset()
    paths: frozenset[str] = frozenset()
    name_lists: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    operands: str = OPERANDS_PATHS
    pattern_options: frozenset[str] = frozenset()  # options that give the pattern, so no operand is one

    @property
    def long_options(self) -> list[str]:
        every = self.unsafe | self.paths | self.name_lists | self.valued | self.pattern_options
        return sorted(o for o in every if o.startswith("--"))

    def takes_value(self, option: str) -> bool:
        return option in self.paths | self.name_lists | self.valued | self.pattern_options


def _spec(
    unsafe: str = "",
    paths: str = "",
    name_lists: str = "",
    valued: str = "",
    operands: str = OPERANDS_PATHS,
    pattern_options: str = "",
) -> Spec:
    return Spec(
        frozenset(unsafe.split()),
        frozenset(paths.split()),
        frozenset(name_lists.split()),
        frozenset(valued.split()),
        operands,
        frozenset(pattern_options.split()),
    )


_GREP = _spec(
    unsafe="-R --dereference-recursive",
    paths="-f --file --exclude-from",
    pattern_options="-e --regexp",
    valued="-m --max-count -A -B -C --after-context --before-context --context --color --colour --label -d "
    "--directories -D --devices --exclude --include --exclude-dir --binary-files --group-separator",
    operands=OPERANDS_PATTERN_FIRST,
)
READERS: dict[str, Spec] = {
    "ls": _spec(
        valued="-I --ignore --hide -T --tabsize -w --width --format --color --time-style --block-size "
        "--quoting-style --indicator-style --sort --time"
    ),
    "cat": _spec(),
    "head": _spec(valued="-n -c --lines --bytes"),
    "tail": _spec(valued="-n -c --lines --bytes -s --sleep-interval --pid --max-unchanged-stats"),
    "wc": _spec(name_lists="--files0-from"),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": _spec(
        unsafe="--pre --pre-glob -z --search-zip -L --follow --hostname-bin",
        paths="--ignore-file -f --file",
        pattern_options="-e --regexp",
        valued="-g --glob --iglob -t --type -T --type-not --type-add --type-clear -m --max-count -A -B -C "
        "--after-context --before-context --context -M --max-columns -j --threads -d --max-depth -r --replace "
        "--color --colors --sort --sortr --engine -E --encoding --path-separator --context-separator "
        "--field-context-separator --field-match-separator --max-filesize --dfa-size-limit --regex-size-limit "
        "--generate",
        operands=OPERANDS_PATTERN_FIRST,
    ),
    "file": _spec(
        unsafe="-C --compile",
        paths="-m --magic-file",
        name_lists="-f --files-from",
        valued="-F --separator -P --parameter -e --exclude --exclude-quiet",
    ),
    "stat": _spec(valued="-c --format --printf"),
    "du": _spec(
        name_lists="--files0-from",
        paths="-X --exclude-from",
        valued="--exclude -d --max-depth -B --block-size -t --threshold --time-style --time",
    ),
    "tree": _spec(
        unsafe="-o -R -l", paths="--fromfile", valued="-L -P -I -H -T --charset --filelimit --timefmt --sort"
    ),
    "basename": _spec(valued="-s --suffix", operands=OPERANDS_DATA),
    "dirname": _spec(operands=OPERANDS_DATA),
    "realpath": _spec(paths="--relative-to --relative-base"),
    "readlink": _spec(),
    "cut": _spec(valued="-b --bytes -c --characters -f --fields -d --delimiter --output-delimiter"),
    "tr": _spec(operands=OPERANDS_DATA),
    "diff": _spec(
        unsafe="-r --recursive",
        paths="--from-file --to-file -X --exclude-from",
        valued="-x --exclude -I --ignore-matching-lines -U -C --unified --context --label -F "
        "--show-function-line --horizon-lines --color --palette -W --width --tabsize -D --ifdef --line-format "
        "--old-line-format --new-line-format --unchanged-line-format --old-group-format --new-group-format "
        "--changed-group-format --unchanged-group-format",
    ),
    "cmp": _spec(valued="-i --ignore-initial -n --bytes"),
    "nl": _spec(
        valued="-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter --footer-numbering "
        "--header-numbering --line-increment --join-blank-lines --number-format --number-separator "
        "--starting-line-number --number-width"
    ),
    "sort": _spec(
        unsafe="-o --output --compress-program",
        name_lists="--files0-from",
        paths="-T --temporary-directory --random-source",
        valued="-k --key -t --field-separator -S --buffer-size --parallel --batch-size --sort",
    ),
    "uniq": _spec(valued="-f --skip-fields -s --skip-chars -w --check-chars"),
    "sed": _spec(),
    "jq": _spec(paths="-f --from-file -L", valued="--indent", operands=OPERANDS_PATTERN_FIRST),
    "md5sum": _spec(name_lists="-c --check"),
    "sha1sum": _spec(name_lists="-c --check"),
    "sha256sum": _spec(name_lists="-c --check"),
    "column": _spec(
        valued="-c --output-width -s --separator -o --output-separator -N --table-columns -R "
        "--table-right -E --table-noextreme -H --table-hide -W --table-wrap -J --json -n "
        "--table-name -r --tree -i --tree-id -p --tree-parent -d"
    ),
    "date": _spec(
        unsafe="-s --set",
        paths="-f --file -r --reference",
        valued="-d --date --rfc-3339 --resolution",
        operands=OPERANDS_DATA,
    ),
    "df": _spec(valued="-B --block-size -t --type -x --exclude-type --output"),
    "git": _spec(),  # paicli.policy.git_reader
    "find": _spec(),  # paicli.policy.find
}
# jq options with two values: `--arg NAME VALUE`, `--rawfile NAME FILE` (the second one is a path).
JQ_PAIRS = {"--arg": False, "--argjson": False, "--rawfile": True, "--slurpfile": True}


@dataclass(frozen=True)
class Option:
    name: str  # the option as the program reads it (`--output`, `-o`); "" for an operand
    word: Word  # the word it came in
    value: Word | None = None  # its value, when it takes one
    ambiguous: tuple[str, ...] = ()  # an abbreviation that stands for any of these


def read_options(spec: Spec, args: tuple[Word, ...]) -> Iterator[Option]:
    """The options and operands of a command as GNU getopt reads them (options anywhere until `--`)."""
    longs = spec.long_options
    index = 0
    options_done = False
    while index < len(args):
        word = args[index]
        text = word.text
        index += 1
        if options_done or not text.startswith("-") or text == "-":
            yield Option("", word)
            continue
        if text == "--":
            options_done = True
            continue
        if text.startswith("--"):
            option, equals, _ = text.partition("=")
            candidates = [o for o in longs if o == option] or [o for o in longs if o.startswith(option)]
            name = candidates[0] if len(candidates) == 1 else option
            if equals:
                yield Option(name, word, _value(word, len(option) + 1), tuple(candidates))
            elif spec.takes_value(name) and index < len(args):
                yield Option(name, word, args[index], tuple(candidates))
                index += 1
            else:
                yield Option(name, word, None, tuple(candidates))
            continue
        for position in range(1, len(text)):
            short = "-" + text[position]
            if spec.takes_value(short):
                if position + 1 < len(text):
                    yield Option(short, word, _value(word, position + 1))
                elif index < len(args):
                    yield Option(short, word, args[index])
                    index += 1
                else:
                    yield Option(short, word)
                break
            yield Option(short, word)


def _value(word: Word, start: int) -> Word:
    """The value glued to an option (`--output=FILE`, `-T/tmp`) as a word of its own."""
    text = word.text[start:]
    if word.static:
        return Word(text, (Literal(text, quoted=True),))
    return Word(text, word.parts)  # dynamic: stays dynamic, checked as "only known when it runs"
