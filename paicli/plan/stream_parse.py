"""Reading a planner's reply while it streams: each task object as soon as its closing brace arrives.

The whole reply is still parsed by `parse_plan_reply` once it has arrived, and that parse alone says what
the plan is. This parser previews it task by task, so the review screen fills while the model writes
and read-only tasks may start before the plan is complete (paicli/plan/early.py). Each task object is
read by the same code as there (`jsonscan.load`: strict JSON, else json_repair; `parse_reply.read_task`:
aliases, numeric ids, dependency strings, types, `files`, `action`), so a task it yields is the task the
whole parse will hold, unless the model changes its mind further on; a misread costs a result that is
discarded, never a wrong plan.

Where it looks, by the rules of paicli/plan/jsonscan.py read as the text comes:
- outside brackets (prose) only `{` and `[` open JSON: quotes and apostrophes there are prose; fences
  labelled with another language (```bash) are skipped up to their closing fence, ```json and bare
  fences are read; `<think>…</think>` is skipped, and a lone `</think>` means everything before it was
  thinking (the parse starts again after it);
- a task object is an object in a task list: the array under "tasks" or "steps" of any object (inside a
  `{"plan": …}` wrapper too), a bare top-level array, or an object under "tasks" whose values are tasks
  keyed by id (the key is the id when the task names none); an object that holds a plan, or that is no
  valid task on its own (no id, an empty description, `files` that are no list), is not yielded;
- inside brackets, strings in double or single quotes and `//` or `/* */` comments are skipped.

Bounded and linear: every character is looked at once, by regular-expression jumps between the few that
matter; a delta that ends inside something that needs a few more characters to decide (an escape, a
comment's `/`, a tag, the first characters of a line that may be a fence) keeps only those for the next
delta; a task object's text is kept up to `max_task_chars` (a longer one is not yielded: it arrives with
the whole plan); brackets nested deeper than `jsonscan.MAX_DEPTH` end the preview; at most `max_tasks`
tasks are yielded; json_repair gets at most `REPAIR_BUDGET` characters of one reply.

A repeated id is never yielded twice: the same spec again (the plan written out twice) is skipped, a
different one is noted in `repeated` (the whole parse rejects the plan, and the planner asks again).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from paicli.common.errors import PlanError
from paicli.plan import jsonscan
from paicli.plan.model import Task
from paicli.plan.parse_reply import TASK_LIST_KEYS, is_plan_object, read_task
from paicli.plan.stream_text import FENCE, WAIT, ThinkFilter, fence_at

MAX_TASK_CHARS = 16_000  # one task object's text; a plan's task is usually 200 to 600 characters
REPAIR_BUDGET = 64_000  # characters json_repair may work on for one streamed reply (about 0.3 s)
MAX_KEY_CHARS = 64  # longer keys are kept as None: no key that matters is that long
OBJECTS_PER_TASK = 4  # task objects read, per task a plan may have: the whole parse refuses more anyway
_ID_KEYS = ("id", "task_id", "taskId")

_PROSE, _JSON, _STRING, _LINE_COMMENT, _BLOCK_COMMENT, _SKIP_FENCE, _FENCE_LINE = range(7)
_OTHER, _TASK_LIST, _TASKS_BY_ID, _TASK = range(4)
_PROSE_STOP = re.compile(r"[{\[\n]")
_JSON_STOP = re.compile(r"[{}\[\]\"'/:,]")  # in an object whose keys matter (outside task objects)
_VALUE_STOP = re.compile(r"[{}\[\]\"'/]")  # in an array, or inside a task object: keys do not matter
_STRING_STOP = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_FENCE_INFO = re.compile(r"[\w+.\- \t\r]*")  # what a fence's label line may hold (jsonscan's label, padded)


@dataclass(slots=True)
class _Frame:
    opener: str  # "{" or "["
    role: int
    expect_key: bool = False  # an object between `{` or `,` and `:`
    key: str | None = None  # an object's latest key: the value after its `:` sits under it
    hint: str | None = None  # a task keyed by id: the key


class StreamParser:
    """Feed it the reply's text as it arrives; each call returns the tasks completed by that piece."""

    def __init__(
        self,
        *,
        round: int = 1,
        external_ids: Collection[str] = (),
        max_tasks: int = 50,
        max_task_chars: int = MAX_TASK_CHARS,
    ) -> None:
        self.round = round
        self.external_ids = frozenset(external_ids)
        self.max_tasks = max_tasks
        self.max_task_chars = max_task_chars
        self.tasks: list[Task] = []  # every task yielded so far, in order
        self.repeated: list[str] = []  # ids given again with another spec
        self.problems: list[str] = []  # why task objects were not yielded (for tests and the curious)
        self.chars = 0
        self._ascii = 0  # for `tokens`: the estimate paicli/llm/tokens.py makes of the whole text
        self._think = ThinkFilter()
        self._budget = [REPAIR_BUDGET]
        self._specs: dict[str, Task] = {}
        self._known = set(self.external_ids)  # what a dependency string may name
        self.scanned = 0  # characters handed to the scan, held ones counted again (linearity, in tests)
        self._objects = 0  # task objects seen (yielded or not): the next one's number is this + 1
        self._reset()

    @property
    def tokens(self) -> int:
        """The reply's length so far in tokens, estimated as paicli/llm/tokens.py estimates a completion."""
        return -(-self._ascii // 4) + (self.chars - self._ascii)

    def feed(self, text: str) -> list[Task]:
        self.chars += len(text)
        self._ascii += len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
        found: list[Task] = []
        for piece in self._think.feed(text):
            if piece is None:  # a lone </think>: what came before was thinking
                self._reset()
            elif not self._dead:
                self._scan(self._carry + piece, found)
        return found

    def _reset(self) -> None:
        self._state = _PROSE
        self._frames: list[_Frame] = []
        self._carry = ""  # the end of the last piece, undecided: scanned again in front of the next one
        self._at_line_start = True
        self._in_json_fence = False
        self._fence_from = _PROSE  # the state a fence line was met in
        self._fence_info: list[str] = []
        self._fence_info_chars = 0
        self._quote = '"'
        self._key: list[str] | None = None  # the key being read, when the string is an object's key
        self._key_chars = 0
        self._capture: list[str] | None = None  # the text of the task object being read
        self._captured = 0
        self._cap_from: int | None = None
        self._task_depth: int | None = None  # how many frames deep the task object being read is
        self._oversize = False
        self._dead = False

    # ---- the scan ------------------------------------------------------------------------------------

    def _scan(self, text: str, found: list[Task]) -> None:
        self._carry = ""
        self.scanned += len(text)
        end = len(text)
        if self._task_depth is not None:
            self._cap_from = 0
        position = 0
        while position < end and not self._dead:
            state = self._state
            if state == _JSON:
                position = self._json(text, position, found)
            elif state == _STRING:
                position = self._string(text, position)
            elif state == _PROSE:
                position = self._prose(text, position)
            elif state == _LINE_COMMENT:
                newline = text.find("\n", position)
                position, self._state = (end, _LINE_COMMENT) if newline < 0 else (newline + 1, _JSON)
            elif state == _BLOCK_COMMENT:
                position = self._block_comment(text, position)
            elif state == _SKIP_FENCE:
                position = self._skip_fence(text, position)
            else:
                position = self._fence_line(text, position)
        consumed = end - len(self._carry)
        if self._cap_from is not None:
            self._keep(text[self._cap_from : consumed])
            self._cap_from = None

    def _prose(self, text: str, position: int) -> int:
        if self._at_line_start:
            kind, after = fence_at(text, position)
            if kind == WAIT:
                return self._hold(text, position)
            self._at_line_start = False
            if kind == FENCE:
                self._open_fence_line(_PROSE)
                return after
        match = _PROSE_STOP.search(text, position)
        if match is None:
            return len(text)
        if match.group() == "\n":
            self._at_line_start = True
        else:
            self._open(match.group(), match.start())
        return match.end()

    def _skip_fence(self, text: str, position: int) -> int:
        """Inside a fence labelled with another language: only a closing fence line matters."""
        if self._at_line_start:
            kind, after = fence_at(text, position)
            if kind == WAIT:
                return self._hold(text, position)
            self._at_line_start = False
            if kind == FENCE:
                self._open_fence_line(_SKIP_FENCE)
                return after
        newline = text.find("\n", position)
        if newline < 0:
            return len(text)
        self._at_line_start = True
        return newline + 1

    def _open_fence_line(self, state: int) -> None:
        self._fence_from, self._state = state, _FENCE_LINE
        self._fence_info, self._fence_info_chars = [], 0

    def _fence_line(self, text: str, position: int) -> int:
        """After ``` at a line's start: a label up to the end of the line decides what the fence is (as
        `jsonscan.segments` decides); any other character makes the line content, scanned from there."""
        match = _FENCE_INFO.match(text, position)
        assert match is not None  # the pattern matches the empty string
        if self._fence_info_chars < MAX_KEY_CHARS:
            self._fence_info.append(match.group())
            self._fence_info_chars += len(match.group())
        after = match.end()
        if after == len(text):
            return after
        label = "".join(self._fence_info).strip().lower()
        if text[after] != "\n" or not jsonscan.FENCE_LABEL.fullmatch(label):  # no label: the line is content
            if self._fence_from == _PROSE and not self._in_json_fence:
                self._in_json_fence = True  # ``` with the JSON on its own line: an unlabelled fence
            self._state = self._fence_from
            return after
        self._at_line_start = True
        if self._fence_from == _SKIP_FENCE:
            self._state = _PROSE if not label else _SKIP_FENCE
        elif self._in_json_fence:
            self._in_json_fence = bool(label)  # a bare ``` closes it; ```bash inside it is content
            self._state = _PROSE
        elif label in jsonscan.JSON_FENCE_LABELS:
            self._in_json_fence, self._state = True, _PROSE
        else:
            self._state = _SKIP_FENCE
        return after + 1

    def _json(self, text: str, position: int, found: list[Task]) -> int:
        frame = self._frames[-1]
        keys = frame.opener == "{" and self._task_depth is None
        match = (_JSON_STOP if keys else _VALUE_STOP).search(text, position)
        if match is None:
            return len(text)
        char, at = match.group(), match.start()
        if char in "{[":
            self._open(char, at)
        elif char in "}]":
            self._close(text, at, found)
        elif char in "\"'":
            self._state, self._quote = _STRING, char
            reading_key = frame.opener == "{" and frame.expect_key and self._task_depth is None
            self._key, self._key_chars = ([], 0) if reading_key else (None, 0)
        elif char == "/":
            if at + 1 == len(text):
                return self._hold(text, at)
            follower = text[at + 1]
            if follower in "/*":
                self._state = _LINE_COMMENT if follower == "/" else _BLOCK_COMMENT
                return at + 2
        elif frame.opener == "{":
            frame.expect_key = char == ","
            if char == ",":
                frame.key = None
        return at + 1

    def _string(self, text: str, position: int) -> int:
        match = _STRING_STOP[self._quote].search(text, position)
        stop = len(text) if match is None else match.start()
        if self._key is not None and self._key_chars <= MAX_KEY_CHARS:
            self._key.append(text[position:stop])
            self._key_chars += stop - position
        if match is None:
            return stop
        if match.group() == "\\":
            if stop + 1 == len(text):
                return self._hold(text, stop)
            if self._key is not None:
                self._key.append(text[stop : stop + 2])
                self._key_chars += 2
            return stop + 2
        self._state = _JSON
        if self._key is not None:
            self._frames[-1].key = "".join(self._key) if self._key_chars <= MAX_KEY_CHARS else None
            self._key = None
        return stop + 1

    def _block_comment(self, text: str, position: int) -> int:
        close = text.find("*/", position)
        if close >= 0:
            self._state = _JSON
            return close + 2
        return self._hold(text, len(text) - 1) if text.endswith("*") else len(text)

    def _hold(self, text: str, position: int) -> int:
        """Keeps text[position:] (a few characters) to be scanned again in front of the next piece."""
        self._carry = text[position:]
        return len(text)

    # ---- brackets and task objects ------------------------------------------------------------------

    def _open(self, opener: str, at: int) -> None:
        if len(self._frames) >= jsonscan.MAX_DEPTH:
            self.problems.append(str(jsonscan.too_deep()))
            self._dead = True  # what is left is the whole parse's to reject
            return
        parent = self._frames[-1] if self._frames else None
        role, hint = _OTHER, None
        if self._task_depth is not None:
            pass
        elif parent is None:
            role = _TASK_LIST if opener == "[" else _OTHER
        elif parent.role == _TASK_LIST:
            role = _TASK if opener == "{" else _OTHER
        elif parent.role == _TASKS_BY_ID and opener == "{" and not parent.expect_key:
            role, hint = _TASK, parent.key
        elif parent.opener == "{" and not parent.expect_key and parent.key in TASK_LIST_KEYS:
            role = _TASK_LIST if opener == "[" else _TASKS_BY_ID
        self._frames.append(_Frame(opener, role, expect_key=opener == "{", hint=hint))
        self._state = _JSON
        if role == _TASK:
            self._task_depth = len(self._frames)
            self._capture, self._captured, self._cap_from, self._oversize = [], 0, at, False

    def _close(self, text: str, at: int, found: list[Task]) -> None:
        frame = self._frames.pop()
        if frame.role == _TASK and self._task_depth is not None:
            assert self._cap_from is not None
            self._keep(text[self._cap_from : at + 1])
            span = "".join(self._capture) if self._capture is not None else None
            self._capture, self._cap_from, self._task_depth = None, None, None
            self._objects += 1
            task = self._read(span, frame.hint)
            if task is not None:
                found.append(task)
        if not self._frames:
            self._state, self._at_line_start = _PROSE, False

    def _keep(self, chunk: str) -> None:
        if self._capture is None:
            return
        self._captured += len(chunk)
        if self._captured > self.max_task_chars:
            self._capture, self._oversize = None, True  # its text is dropped as it comes: bounded memory
        else:
            self._capture.append(chunk)

    def _read(self, span: str | None, hint: str | None) -> Task | None:
        number = self._objects
        if number >= OBJECTS_PER_TASK * self.max_tasks:  # a plan has at most max_tasks tasks
            self.problems.append(f"{number:,} task objects: the preview stops here")
            self._dead = True
        if span is None:
            self.problems.append(f"task #{number} is over {self.max_task_chars:,} characters: not previewed")
            return None
        if hint is None and not any(key in span for key in _ID_KEYS):
            return None  # no id: not a task to show (and `{}` ten thousand times costs nothing)
        try:
            value = jsonscan.load(span, self._budget)
        except PlanError as error:
            self.problems.append(str(error))
            return None
        if not isinstance(value, dict) or is_plan_object(value):
            return None
        if hint is not None and "id" not in value:
            value = {"id": hint, **value}
        problems: list[str] = []
        task = read_task(value, number, self._known, problems, round=self.round)
        if task is None or problems:
            self.problems.extend(problems)
            return None
        earlier = self._specs.get(task.id)
        if earlier is not None:
            if earlier.spec() != task.spec():
                self.repeated.append(task.id)
                self.problems.append(f'task id "{task.id}" is used again, for another task')
            return None
        if len(self.tasks) >= self.max_tasks:
            return None
        self._specs[task.id] = task
        self._known.add(task.id)
        self.tasks.append(task)
        return task
