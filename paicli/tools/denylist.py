"""The hard denylist: shell commands refused in every approval mode, `yolo` included.

`dangerous_reason` walks the parsed command (paicli.shell) as bash would run it: every simple command,
with quotes removed (`r"m"` is rm), behind wrappers (`env`, `nohup`, `timeout 5`, `xargs`, `find -exec`,
`busybox`), and inside the code handed to a shell (`bash -c`, `eval`, `$(...)`, backticks, `<(...)`,
here-documents and here-strings fed to a shell, `echo ... | sh`, `git -c alias.x='!...'`, `alias`, options
that take a command line such as `tar --to-command`), and the command a project runner starts (`uv run`).
Quoted text is data: `echo 'rm -rf /'` is fine. What the grammar cannot read is not dangerous by itself
here; the approval layer fails closed on it.

It errs on the side of refusing: `rm -rf *` is refused even after a `cd`, any program given a block
device as an argument is refused unless it only reads, and copying a denylisted program (a renamed
`mkfs` runs just the same) is refused. Anything subtler (scripts written to files, interpreter code,
`python -c`) is the approval policy's and the sandbox's business, not this list's.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from paicli.shell.parse import parse_script
from paicli.shell.programs import SHELLS, basename, is_interpreter, script_file, stdin_language
from paicli.shell.syntax import (
    NESTED_TOO_DEEPLY,
    Compound,
    Expansion,
    Kind,
    Pipeline,
    Redirect,
    Script,
    SimpleCommand,
    Unreadable,
    Word,
)
from paicli.shell.walk import Site, Visitor, walk, written_file
from paicli.shell.wrappers import runner_commands
from paicli.tools.critical import critical, is_block_device
from paicli.tools.fetches import Fetches, fetchers_in, is_fetcher

_PRIVILEGE = {"sudo", "doas", "su", "pkexec", "run0"}
_POWER = {"shutdown", "reboot", "halt", "poweroff"}
_SYSTEMCTL_POWER = {"poweroff", "reboot", "halt", "kexec"}
_DISK_TOOLS = {
    "mke2fs",
    "mkswap",
    "wipefs",
    "blkdiscard",
    "mkdosfs",
    "mkntfs",
    "mkexfatfs",
    "mkfs",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "sg_format",
    "zerofree",
}
# Listing forms of the partitioning tools, which only read.
_DISK_LISTING = {
    "fdisk": {"-l", "--list"},
    "sfdisk": {"-l", "--list", "-d", "--dump", "-s", "--show-size", "-J", "--json", "-V", "--verify"},
    "parted": {"-l", "--list"},
    "gdisk": {"-l"},
    "sgdisk": {"-p", "--print", "-i", "--info", "-v", "--verify"},
}
# name -> arguments that make it destroy a disk's data
_DESTROYING = {
    "cryptsetup": {"luksFormat", "erase", "luksErase", "reencrypt"},
    "lvremove": {"*"},
    "vgremove": {"*"},
    "pvremove": {"*"},
    "mdadm": {"--zero-superblock", "--create", "-C"},
    "zpool": {"destroy", "labelclear"},
    "nvme": {"format", "sanitize"},
    "hdparm": {"--security-erase", "--security-erase-enhanced", "--trim-sector-ranges"},
    "badblocks": {"-w"},
}
# Programs that only read from a device named as an argument.
_DEVICE_READERS = {
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "hexdump",
    "od",
    "xxd",
    "strings",
    "file",
    "stat",
    "ls",
    "lsblk",
    "blkid",
    "findmnt",
    "df",
    "smartctl",
    "udevadm",
    "cmp",
    "diff",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "wc",
    "readlink",
    "realpath",
    "test",
    "[",
    "echo",
    "printf",
    "grep",
    "dmesg",
    "mount",
    "umount",
    "pv",
    "dumpe2fs",
    "tune2fs",
    "lsof",
    "fuser",
}
_COPIERS = {"cp", "ln", "install", "mv", "rsync", "scp", "cat", "tee", "dd", "link", "objcopy", "ditto"}
_DESTINATION_LAST = {"cp", "mv", "install", "rsync", "scp", "ln", "ditto"}
_DELETERS = {"rm", "shred", "unlink"}
_CODE_OPTIONS = ("-c", "-e", "-E", "--eval")
_SYSTEM_BIN = ("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin")


def dangerous_reason(command: str, *, workspace: Path | None = None) -> str | None:
    """Why `command` is on the hard denylist, or None. Never raises.

    `workspace`, when given, also protects the workspace folder and its ancestors by absolute path.
    """
    root = Path(os.path.realpath(workspace)) if workspace is not None else None
    try:
        denylist = Denylist(root)
        walk(parse_script(command), denylist)
        return denylist.reason
    except Exception as error:  # a bug here must refuse, not let the command through
        return f"the command could not be checked ({type(error).__name__})"


def denylisted_program(name: str) -> bool:
    """Whether running `name` (any arguments) may be refused by the denylist: a renamed copy may not run."""
    return name in _PRIVILEGE | _POWER | _DISK_TOOLS or name.startswith("mkfs") or name in _DESTROYING


class Denylist(Visitor):
    def __init__(self, workspace: Path | None) -> None:
        self.workspace = workspace
        self.reason: str | None = None
        self.fetches = Fetches()
        self.program_variables: set[str] = set()  # variables holding the path of a denylisted program
        self.written: dict[str, str] = {}  # files this command line writes with echo/printf/cat, and their text

    def refuse(self, reason: str | None) -> None:
        if reason and self.reason is None:
            self.reason = reason

    def unreadable(self, item: Unreadable, depth: int) -> None:
        if item.reason == NESTED_TOO_DEEPLY:
            self.refuse(NESTED_TOO_DEEPLY)

    def compound(self, compound: Compound, depth: int) -> None:
        if compound.kind is Kind.FUNCTION and compound.name and _calls_itself_in_a_pipeline(compound):
            self.refuse("a fork bomb")

    def redirect(self, redirect: Redirect, depth: int) -> None:
        target = redirect.target
        if target is not None and (redirect.writes or redirect.operator == "<>") and is_block_device(target.text):
            self.refuse(f"writing to the device {target.text}")

    def command(self, site: Site) -> None:
        for assignment in site.command.assignments:
            if assignment.value is not None and _names_denylisted_program(assignment.value):
                self.program_variables.add(assignment.name)
        words = site.words
        if not words:
            return
        name, args = basename(words[0].text), words[1:]
        self.refuse(self._program(name, args) or self._devices(name, args) or self._copies(name, args))
        self.refuse(self._targets(name, args) or self._fetched_code(site, name, args))
        self.fetches.record(name, args, site.command.redirects)
        if written := written_file(site.command):
            self.written[os.path.normpath(written[0])] = written[1]
        for runs in runner_commands(words):  # `uv run mkfs.ext4 img`
            if self.reason is None:
                text = " ".join(w.text for w in runs)
                walk(Script(text, (Pipeline((SimpleCommand(text, runs),)),)), self, site.depth + 1)
        script = script_file(words)
        code = self.written.get(os.path.normpath(script.text)) if script is not None and script.static else None
        if code is not None and self.reason is None:  # `echo 'mkfs ...' > s; sh s`: the code it wrote
            walk(parse_script(code), self, site.depth + 1)

    def _program(self, name: str, args: tuple[Word, ...]) -> str | None:
        texts = [a.text for a in args]
        if name in _PRIVILEGE:
            return f"{name}: running commands as another user is not allowed"
        if name.startswith("mkfs") or name in ("mke2fs", "mkdosfs", "mkntfs", "mkexfatfs"):
            return f"{name} formats a filesystem"
        if name in _DISK_TOOLS:
            listing = _DISK_LISTING.get(name, set())
            options = {t for t in texts if t.startswith("-")}
            if not (options and options <= listing) and not (name == "parted" and "print" in texts[-1:]):
                return f"{name} can erase, format or repartition a disk"
        if name in _DESTROYING and (_DESTROYING[name] & set(texts) or "*" in _DESTROYING[name]):
            return f"{name} {' '.join(texts[:2])} destroys the data on a disk"
        if name in _POWER or (name == "systemctl" and _SYSTEMCTL_POWER & set(texts)):
            return "shutting down or rebooting the machine"
        if name in {"init", "telinit"} and texts[:1] in (["0"], ["6"]):
            return "shutting down or rebooting the machine"
        return None

    def _devices(self, name: str, args: tuple[Word, ...]) -> str | None:
        if name == "dd":
            for arg in args:
                if arg.text.startswith("of=") and is_block_device(arg.text[3:]):
                    return f"dd writing to the device {arg.text[3:]}"
            return None
        if name in _DEVICE_READERS or name in _DISK_LISTING:
            return None
        operands = [a for a in args if not a.text.startswith("-")]
        if name in _DESTINATION_LAST:
            operands = operands[-1:]
        for arg in operands:
            if is_block_device(arg.text.split("=", 1)[-1]):
                return f"{name} given the device {arg.text} can write to it"
        return None

    def _copies(self, name: str, args: tuple[Word, ...]) -> str | None:
        """A copy or link of a denylisted program runs just like it under another name."""
        if name == "hash":  # `hash -p /sbin/mkfs.ext4 ls`: `ls` now runs mkfs
            texts = [a.text for a in args]
            path = args[texts.index("-p") + 1] if "-p" in texts[:-1] else None
            if path is not None and _names_denylisted_program(path):
                return f"hash -p maps a name to the denylisted program {path.text}"
            return None
        if name not in _COPIERS:
            return None
        sources = [a for a in args if not a.text.startswith("-") or a.text.startswith("if=")]
        if name in _DESTINATION_LAST:
            sources = sources[:-1] if len(sources) > 1 else sources
        for word in sources:
            if _names_denylisted_program(word) or any(p.name in self.program_variables for p in _expansions(word)):
                return f"{name} copies the denylisted program {word.text} (a copy runs just the same)"
        return None

    def _targets(self, name: str, args: tuple[Word, ...]) -> str | None:
        if name == "rm" and _recursive(args, "rR"):
            for target in _operands(args):
                if why := critical(target, self.workspace, include_workspace=True):
                    return f"rm -r of {target.text} ({why})"
        if name in {"chmod", "chown", "chgrp"} and _recursive(args, "R"):
            for target in _operands(args):
                if why := critical(target, self.workspace, include_workspace=False):
                    return f"{name} -R on {target.text} ({why})"
        if name == "find":
            return self._find(args)
        if name == "rsync" and any(a.text.startswith("--del") for a in args):
            for target in _operands(args)[-1:]:
                if why := critical(target, self.workspace, include_workspace=True):
                    return f"rsync --delete onto {target.text} ({why})"
        if name == "mv":
            for source in _operands(args)[:-1]:
                if why := critical(source, self.workspace, include_workspace=False):
                    return f"mv of {source.text} ({why})"
        return None

    def _find(self, args: tuple[Word, ...]) -> str | None:
        """`find / -delete`, `find ~ -exec rm {} +`: deleting below the root, a home or an ancestor."""
        texts = [a.text for a in args]
        deleting = "-delete" in texts or any(
            texts[i] in ("-exec", "-execdir", "-ok", "-okdir") and basename(texts[i + 1]) in _DELETERS
            for i in range(len(texts) - 1)
        )
        if not deleting:
            return None
        for root in args:
            if root.text.startswith(("-", "(", "!")) and root.text not in ("-H", "-L", "-P"):
                break
            if root.text not in ("-H", "-L", "-P") and (why := critical(root, self.workspace, include_workspace=False)):
                return f"find deleting files below {root.text} ({why})"
        return None

    def _fetched_code(self, site: Site, name: str, args: tuple[Word, ...]) -> str | None:
        """Downloaded code run unread: `curl ... | sh`, `sh <(curl ...)`, `curl -o f ...; sh f`."""
        if not (is_interpreter(name) or name in ("eval", "source", ".")):
            return None
        if stdin_language(site.words) and site.pipeline is not None:
            stages = site.pipeline.commands[: site.stage]
            if any(isinstance(s, SimpleCommand) and s.words and is_fetcher(s.words[0].text) for s in stages):
                return f"piping a download into {name} runs unreviewed code"
            if any("<" in r.operator and r.target and self.fetches.holds(r.target) for r in site.command.redirects):
                return f"{name} running a file it just downloaded"
        for word in _code_words(name, args):
            if any(fetchers_in(s) for s in word.scripts):
                return f"{name} running downloaded code"
            if self.fetches.holds(word):
                return f"{name} running a file it just downloaded"
        if site.words and self.fetches.holds(site.words[0]):
            return "running a file it just downloaded"
        return None


def _code_words(name: str, args: tuple[Word, ...]) -> list[Word]:
    """The arguments this command runs as code or as a script file."""
    if name in ("eval", "source", "."):
        return list(args)
    for index, arg in enumerate(args):
        text = arg.text
        if text in _CODE_OPTIONS or (name in SHELLS and text[:1] == "-" and text[1:2] != "-" and "c" in text[1:]):
            return list(args[index + 1 : index + 2])
        if not text.startswith("-"):
            return [arg]
    return []


def _calls_itself_in_a_pipeline(function: Compound) -> bool:
    """`:(){ :|:& };:`, `bomb() { bomb | bomb & }`: a function that pipes itself into itself."""

    def pipes_itself(script: Script) -> bool:
        for pipeline in script.pipelines:
            calls = [
                c
                for c in pipeline.commands
                if isinstance(c, SimpleCommand) and c.words and c.words[0].text == function.name
            ]
            if len(calls) >= 2:
                return True
            if any(isinstance(c, Compound) and any(pipes_itself(s) for s in c.scripts) for c in pipeline.commands):
                return True
        return False

    return any(pipes_itself(script) for script in function.scripts)


def _names_denylisted_program(word: Word) -> bool:
    """`/sbin/mkfs.ext4`, `/usr/sbin/mk*`, `$(command -v mkfs.ext4)`: a word that names a denylisted program."""
    if denylisted_program(basename(word.text)):
        return True
    if word.glob and word.static and word.text.startswith(_SYSTEM_BIN):
        matches = glob.glob(word.pattern)[:200]
        if any(denylisted_program(os.path.basename(m)) for m in matches):
            return True
    for script in word.scripts:
        for pipeline in script.pipelines:
            for command in pipeline.commands:
                if isinstance(command, SimpleCommand) and any(_names_denylisted_program(w) for w in command.words[1:]):
                    return True
    return False


def _expansions(word: Word) -> list[Expansion]:
    return [p for p in word.parts if isinstance(p, Expansion) and p.name]


def _recursive(args: tuple[Word, ...], letters: str) -> bool:
    for arg in args:
        text = arg.text
        if text == "--":
            return False
        if text == "--recursive" or (text.startswith("-") and not text.startswith("--") and set(letters) & set(text)):
            return True
    return False


def _operands(args: tuple[Word, ...]) -> list[Word]:
    operands = []
    options_done = False
    for arg in args:
        if not options_done and arg.text == "--":
            options_done = True
        elif options_done or not arg.text.startswith("-") or arg.text == "-":
            operands.append(arg)
    return operands
