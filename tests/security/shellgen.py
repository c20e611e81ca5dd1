"""A seeded generator of shell commands that try to hide a payload from the classifier, and a runner that
runs the ones it calls SAFE for real, to catch any that changed a file.

The commands mix read-only commands with comments, here-documents, quotes, substitutions, line
continuations, carriage returns and globs over hostile file names (`--compress-program=sh`, `-S1k`,
`--files0-from=x`, `-exec`, `-v` next to `a[$(touch PWN)]`, names with newlines, quotes and spaces). A
payload only ever touches files in the throwaway folders (the workspace copy and its `outside` sibling).
Used by tests/security/test_differential.py (a few hundred cases) and bench/shell_diff.py (thousands).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import shutil
import signal
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from paicli.policy.classify import Risk, classify_command
from paicli.shell.parse import parse_script
from paicli.shell.walk import Site, Visitor, walk

# What must never run unasked: each changes something a snapshot sees.
PAYLOADS = [
    "touch PWN",
    "echo x > PWN",
    "touch ../outside/PWN",
    "rm -f canary.txt",
    "cp canary.txt ../outside/copied",
    "mv canary.txt moved",
    "mkdir PWNDIR",
    "chmod 600 canary.txt",
    "sh payload",
    "ln -s canary.txt PWNLINK",
]
# Commands that do not exist: bash reports each one it tries to run (see hidden_commands).
MARKERS = ["pwnmark1", "pwnmark2 x", "pwnmark3 -rf y"]
# Read-only commands that stay inside the workspace (SAFE on their own).
SAFE = [
    "ls",
    "ls -la",
    "cat canary.txt",
    "echo hi",
    "grep -n x canary.txt",
    "sort canary.txt",
    "head -1 canary.txt",
    "wc -l canary.txt",
    "find . -name '*.txt'",
    "git status",
    "git log --oneline",
    "cut -c1 canary.txt",
    "printf '%s\\n' x",
    "test -f canary.txt",
    "true",
    "[ -f canary.txt ]",
    "sed -n 1p canary.txt",
    "pwd",
    "tail -n 1 canary.txt",
    "nl canary.txt",
    "stat canary.txt",
    "du -s .",
    "uniq canary.txt",
    "tr a b < canary.txt",
    "cat < canary.txt",
    "ls src/*.py",
    "cat ./*.txt",
]
# Programs that take file operands; `*`-like globs put the hostile names in front of them as options.
GLOB_READERS = [
    "sort",
    "cat",
    "grep x",
    "wc",
    "ls",
    "find",
    "head",
    "tail",
    "cut -c1",
    "nl",
    "du",
    "file",
    "printf %s",
    "test",
    "diff",
    "md5sum",
    "jq .",
    "tree",
    "rg x",
    "git diff",
    "uniq",
    "stat",
]
GLOBS = ["*", "?*", "[-a]*", "-*", "*s*", "[!.]*", "./*", "src/*"]
# Templates: P is a payload, S a safe command. Some hide P from a careless parser, some really make it data.
TEMPLATES = [
    "S #'\nP #'",
    'S #"\nP #"',
    "S # <<E\nP\nE",
    "S # `\nP # `",
    "S # $(\nP # )",
    "S;#'\nP",
    "S #\\\nP",
    "echo a#b'\nP'",
    "echo '#'\nP",
    'echo "#"\nP',
    "echo a #'\nP'",
    "S &#'\nP",
    "cat <<E\nP\nE",
    "cat <<'E'\n$(P)\nE",
    "cat <<E\n$(P)\nE",
    "cat <<E\n`P`\nE",
    'cat <<"E"\n`P`\nE',
    "cat <<E\n# '\nE\nP",
    "cat <<E\nE\\\n\nP\nE",
    "cat <<E\nfoo\\\nE\nP\nE",
    "cat <<-E\n\t$(P)\n\tE",
    "echo 'P'",
    'echo "$(P)"',
    'echo "\\$(P)"',
    "echo '$(P)'",
    'echo "`P`"',
    "echo `echo \\`P\\``",
    "echo $(P)",
    "ls <(P)",
    'cat <<< "$(P)"',
    "echo ${x:-$(P)}",
    "echo $(true #'\nP #'\n)",
    "S \\\nP",
    "S\r\nP\r\n",
    "S\r#; P",
    "S\f#; P",
    "S\v#; P",
    "S # comment\r\nP",
    "echo $(( $(cat arith) ))",
    'printf -v "$(cat arith)" x',
    'test -v "$(cat arith)"',
    "echo $((x))",
    "bash -c 'P'",
    "bash <<'E'\nP\nE",
    "sh <<< 'P'",
    "echo 'P' | sh",
    "eval 'P'",
    "find . -exec P \\;",
    "S | xargs P",
    "env P",
    "git -c alias.q='!P' q",
    "(P)",
    "{ P; }",
    "f() { P; }; S",
    "if S; then P; fi",
    "for i in a; do P; done",
    "case x in x) P;; esac",
    "S && P",
    "S || P",
    "S; P",
    "S | P",
    "S & P",
    "S\nP",
    "x=$(P) S",
    "S > PWN",
    "S >> ../outside/PWN",
    "S 2> PWN",
    '[ -v "$(cat arith)" ]',
    "[[ -v $(cat arith) ]]",
    "test -v $(cat arith)",
    "echo ${!x}",
    "echo ${x@P}",
    "ls ${x:-$(P)}",
    "echo $'P'",
    "echo $(cat <<E\nP\nE\n)",
    "echo $(cat <<'E'\n)\nE\n); P",
    'echo "$(echo ")" ; P)"',
    "case x in $(P)) ;; esac",
    "for i in $(P); do S; done",
    "cat < $(P)",
    "cat <<A <<B\nx\nA\n$(P)\nB",
    "cat <<A; cat <<B\nx\nA\nP\nB",
    "cat <<E\n$(\nP\n)\nE",
    'echo "a\nP"',
    "echo \\\nP",
    "S ; \\\n P",
    "{ S; P; }",
    "S <<< $(P)",
    "cat <<E\n<(P)\nE",
    "S # $(P)",
    "S '#' $(P)",
    "echo $(( $(cat arith) ))",
    "printf '%s' \"$(P)\"",
    "cat canary.txt | sort -T . | head",
    "sort -o PWN canary.txt",
    "S | tee PWN",
    "PAGER='P' git -p log",
    "GIT_EXTERNAL_DIFF='P #' git diff",
    "echo 'P' > s.sh; bash s.sh",
    "echo P > s.sh; . ./s.sh",
    "cat <<E > s.sh\nP\nE\nsh s.sh",
    "declare 'a[$(P)]=1'",
    "let 'x=a[$(P)]'",
    "read 'a[$(P)]' <<< x",
    "x='a[$(P)]'; echo $((x))",
    'sh -c "$(cat payload)"',
    'eval "$(cat payload)"',
    "cat payload | sh",
    "sh < payload",
    "sh payload",
    "bash -s < payload",
    "source payload",
]
# Hostile names in the workspace, and what some files hold.
HOSTILE_NAMES = [
    "--compress-program=sh",
    "-S1k",
    "--files0-from=payload",
    "-exec",
    "-delete",
    "-v",
    "a[$(touch PWN)]",
    "--output=PWN",
    "-o",
    "-f",
    "-rf",
    "--pre=sh",
    "name\nwith newline",
    "it's",
    'dq"uote',
    "sp ace",
    "-T",
    "--random-source=payload",
    "-i",
    "--in-place",
    "-newer",
    "-fprint",
    "--to-file=payload",
]


@dataclass
class Outcome:
    command: str
    risk: Risk
    ran: bool
    changed: list[str]


def make_template(root: Path) -> Path:
    """The workspace every case starts from (its own git repository, hostile names, a canary)."""
    work = root / "template" / "ws"
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True, capture_output=True)
    shutil.rmtree(work / ".git" / "hooks", ignore_errors=True)
    (work / "canary.txt").write_text("canary\n")
    (work / "payload").write_text("touch PWN\n" * 400)  # enough for `sort -S1k` to spill through its compressor
    (work / "arith").write_text("a[$(touch PWN)]\n")
    (work / "src").mkdir()
    (work / "src" / "a.py").write_text("x = 1\n")
    for name in HOSTILE_NAMES:
        (work / name).write_text("touch PWN\n")
    (root / "template" / "outside").mkdir()
    (root / "template" / "outside" / "canary.txt").write_text("outside\n")
    return root / "template"


def generate(rng: random.Random, payloads: list[str] | None = None) -> str:
    """One command: one to three fragments joined the way a model might join them."""
    fragments = [_fragment(rng, payloads or PAYLOADS) for _ in range(rng.choice((1, 1, 2, 3)))]
    command = fragments[0]
    for fragment in fragments[1:]:
        command += rng.choice(("; ", " && ", "\n", " | ", " || ")) + fragment
    return command


def _fragment(rng: random.Random, payloads: list[str]) -> str:
    roll = rng.random()
    if roll < 0.2:
        return f"{rng.choice(GLOB_READERS)} {rng.choice(GLOBS)}" + rng.choice(("", " | head -1", " 2>/dev/null"))
    if roll < 0.35:
        return rng.choice(SAFE)
    template = rng.choice(TEMPLATES)
    return template.replace("P", rng.choice(payloads)).replace("S", rng.choice(SAFE))


def hidden_commands(
    command: str, template: Path, scratch: Path, *, timeout: float = 5.0, only_readable: bool = True
) -> list[str] | None:
    """The marker commands (`pwnmark...`) bash ran that the walk over the parsed command did not reach; None
    when the classifier already fails closed (OPAQUE or DENY). Bash logs every command it cannot find
    through a `command_not_found_handle` defined in BASH_ENV, so the markers need not exist."""
    found = classify_command(command, template / "ws")
    if only_readable and found.risk in (Risk.OPAQUE, Risk.DENY):
        return None
    seen = _Names()
    walk(parse_script(command), seen)
    run = uuid.uuid4().hex  # a command's background jobs may still log after it: never into the next one's log
    log = scratch.parent / f"{scratch.name}.{run}.log"
    handler = scratch.parent / f"{scratch.name}.{run}.env"
    handler.write_text(f'command_not_found_handle() {{ printf "%s\\0" "$1" >> {log}; return 127; }}\n')
    execute(command, template, scratch, timeout=timeout, extra_env={"BASH_ENV": str(handler)})
    ran = log.read_bytes().decode().split("\0") if log.exists() else []  # names may hold \r or \n
    handler.unlink()
    log.unlink(missing_ok=True)
    return sorted({name for name in ran if name.startswith("pwnmark") and name not in seen.names})


class _Names(Visitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def command(self, site: Site) -> None:
        if site.words:
            self.names.add(site.words[0].text)


def run_case(command: str, template: Path, scratch: Path, *, timeout: float = 5.0) -> Outcome:
    """Classify `command`; if SAFE, run it for real in a fresh copy and report what it changed."""
    found = classify_command(command, template / "ws")
    if found.risk is not Risk.SAFE:
        return Outcome(command, found.risk, ran=False, changed=[])
    return Outcome(command, found.risk, ran=True, changed=execute(command, template, scratch, timeout=timeout))


def execute(
    command: str, template: Path, scratch: Path, *, timeout: float = 5.0, extra_env: dict[str, str] | None = None
) -> list[str]:
    """Run `command` with `bash -c` in a fresh copy of `template`; the paths it created, changed or removed.
    Whatever it left running is killed (its background jobs share its process group)."""
    _remove(scratch)
    shutil.copytree(template, scratch, symlinks=True)
    before = snapshot(scratch)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scratch / "outside"),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        **(extra_env or {}),
    }
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=scratch / "ws",
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # the group of the bash we started: it, or jobs it left behind
    process.wait()
    after = snapshot(scratch)
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def _remove(folder: Path) -> None:
    """Remove a copy a command may have left unwritable (`chmod 000 dir`)."""
    if not folder.exists() and not folder.is_symlink():
        return
    with contextlib.suppress(OSError):
        folder.chmod(0o700)
    for parent, dirs, _ in os.walk(folder):  # top down: each folder is opened after it was made readable
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(parent, name), 0o700, follow_symlinks=False)
    shutil.rmtree(folder)


def snapshot(root: Path) -> dict[str, tuple[int, str]]:
    """Every path under `root` with its mode and content digest (git's own index refresh left out)."""
    state: dict[str, tuple[int, str]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if relative.endswith(".git/index") or relative.endswith(".lock"):
                continue
            info = path.lstat()
            digest = ""
            if path.is_file() and not path.is_symlink():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            elif path.is_symlink():
                digest = "-> " + os.readlink(path)
            state[relative] = (info.st_mode, digest)
    return state
