"""Which runs an `eval run` makes: task × mode × model × repeat in a stable order (the suite's task order,
then the modes, the models and the repeats as given), the shard's share of them (`--shard K/N`: every
run whose index in that order is K-1 modulo N), less the runs already recorded in the output folder."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from paicli.common.errors import ConfigError
from paicli.eval.records import Mode, RunKey, Suite, TaskSpec


@dataclass(frozen=True)
class PlannedRun:
    index: int  # in the whole matrix, before sharding
    task: TaskSpec
    key: RunKey

    @property
    def label(self) -> str:
        return f"{self.key.task} {self.key.mode} {self.key.model} #{self.key.repeat + 1}"


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N."""
    found = re.fullmatch(r"\s*(\d{1,6})\s*/\s*(\d{1,6})\s*", text)
    if found is None or not 1 <= int(found[1]) <= int(found[2]):
        raise ConfigError(f"--shard {text[:40]!r}: give K/N with 1 <= K <= N (for example 2/4)")
    return int(found[1]), int(found[2])


def parse_modes(text: str) -> tuple[Mode, ...]:
    modes: list[Mode] = []
    for word in (part.strip() for part in text.split(",")):
        if word == "plan" or word == "chat":
            mode: Mode = "plan" if word == "plan" else "chat"
            if mode not in modes:
                modes.append(mode)
        else:
            raise ConfigError(f"--mode: {word[:40]!r} is not a mode (plan, chat, or both: plan,chat)")
    return tuple(modes)


def parse_models(text: str) -> tuple[str, ...]:
    models = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not models:
        raise ConfigError("--models: name at least one model (A,B)")
    return models


def matrix(suite: Suite, modes: Sequence[Mode], models: Sequence[str], repeat: int) -> list[PlannedRun]:
    runs: list[PlannedRun] = []
    for task in suite.tasks:
        for mode in modes:
            for model in models:
                for number in range(repeat):
                    key = RunKey(suite=suite.name, task=task.id, mode=mode, model=model, repeat=number)
                    runs.append(PlannedRun(len(runs), task, key))
    return runs


def to_run(runs: Sequence[PlannedRun], shard: tuple[int, int], done: Collection[RunKey]) -> list[PlannedRun]:
    k, n = shard
    return [run for run in runs if run.index % n == k - 1 and run.key not in done]
