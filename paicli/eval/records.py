"""The two data shapes `paicli eval` is built on: a suite of tasks (read from TOML) and one run's result
(one JSON line in DIR/results.jsonl). The runner writes records, the report reads them; docs/eval.md
documents both for users who write their own suites or read the results with other programs."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Mode = Literal["plan", "chat"]
# pass/fail: the hidden check ran and exited 0 / not 0. error: the harness could not give the agent a fair
# start (setup failed, the starting state could not be made): not counted against the agent.
# timeout / over_budget: the agent hit the task's time / token limit (counted as failures in pass rates).
Outcome = Literal["pass", "fail", "error", "timeout", "over_budget"]


class TaskSpec(BaseModel):
    """One task: a starting state, the goal, and a hidden check the agent never sees."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
    goal: str = Field(min_length=1)
    # the starting state: a folder (relative to the suite file) or a git repository at a commit
    start: str | None = None
    repo: str | None = None
    commit: str | None = None
    setup: str | None = None  # run with network, outside the timed run; a failure makes the run an `error`
    hidden: str = Field(min_length=1)  # folder relative to the suite file, copied over the result afterwards
    check: str | None = None  # the command that must exit 0; the suite's default when absent
    time_limit: float | None = Field(default=None, gt=0)  # seconds for the agent; the suite's default when absent
    token_limit: int | None = Field(default=None, gt=0)  # prompt + completion tokens for the agent
    tags: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_starting_state(self) -> TaskSpec:
        if (self.start is None) == (self.repo is None):
            raise ValueError(f"task {self.id}: give either `start` (a folder) or `repo` (+ `commit`)")
        if self.commit is not None and self.repo is None:
            raise ValueError(f"task {self.id}: `commit` needs `repo`")
        return self


class SuiteDefaults(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str = "python -m pytest -q"
    time_limit: float = Field(default=600.0, gt=0)
    token_limit: int = Field(default=500_000, gt=0)


class Suite(BaseModel):
    """A suite file: `name`, optional `description`, a `[defaults]` table and `[[tasks]]`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    defaults: SuiteDefaults = SuiteDefaults()
    tasks: tuple[TaskSpec, ...] = Field(min_length=1)
    root: Path = Field(default=Path("."), exclude=True)  # the suite file's folder: task paths are relative to it

    @model_validator(mode="after")
    def _unique_ids(self) -> Suite:
        seen: set[str] = set()
        for task in self.tasks:
            if task.id in seen:
                raise ValueError(f"task id {task.id!r} appears twice")
            seen.add(task.id)
        return self

    def check_of(self, task: TaskSpec) -> str:
        return task.check or self.defaults.check

    def time_limit_of(self, task: TaskSpec) -> float:
        return task.time_limit or self.defaults.time_limit

    def token_limit_of(self, task: TaskSpec) -> int:
        return task.token_limit or self.defaults.token_limit


class RunKey(BaseModel):
    """What makes a run unique in an output folder: a rerun skips keys already recorded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    task: str
    mode: Mode
    model: str
    repeat: int = Field(ge=0)


class RunRecord(RunKey):
    """One line of results.jsonl."""

    outcome: Outcome
    check_exit: int | None = None  # the hidden check's exit status; None when it did not run
    check_tail: str = ""  # the last lines of the check's output
    error: str | None = None  # one line: why the run is `error`, `timeout` or `over_budget`
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # in the `[prices]` currency; None when the model has no price
    wall_s: float = 0.0  # the agent's run, from start to exit
    check_s: float = 0.0
    harness_s: float = 0.0  # copying, setup excluded, hidden files, bookkeeping
    replans: int = 0
    files_changed: tuple[str, ...] = ()
    paicli_version: str = ""
    started_at: str = ""  # ISO 8601, UTC

    def key(self) -> RunKey:
        return RunKey(suite=self.suite, task=self.task, mode=self.mode, model=self.model, repeat=self.repeat)

    @property
    def solved(self) -> bool:
        return self.outcome == "pass"

    @property
    def counted(self) -> bool:
        """An `error` run says nothing about the agent: pass rates leave it out."""
        return self.outcome != "error"
