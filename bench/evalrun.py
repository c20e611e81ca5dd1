"""evalrun. The harness of `paicli eval run` (issue 34): what it costs per run beyond the agent and the check.

A suite of small tasks (each: write the answer into a file; the hidden check greps it) runs in chat mode
against the fake server, whose scripted "oracle" writes the right answer, one run at a time (`--jobs 1`, so
runs do not slow each other down). Every record carries `harness_s`: the run's time but the agent's process
(`wall_s`), the check (`check_s`) and the setup (none here), that is making the copy, the snapshots before and
after, copying the hidden files in (moving the copy first when TMPDIR is outside /tmp), and the bookkeeping.
Target: at most 1 s per run (the median; the largest is shown too). The agent's and the check's times are
shown beside it for scale: each is a `paicli` process / a sandboxed `bash`. With bubblewrap missing the suite
runs `--unsandboxed` (and says so in the details).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bench.common import Result, median, rounded
from tests.fakellm import FakeLLM, Reply, has_tool_result

NAME = "evalrun"
TITLE = "eval run: the harness's time per run"


def write_suite(root: Path, count: int) -> Path:
    lines = ['name = "bench"']
    for number in range(count):
        task = f"task{number}"
        for part, name, text in (("start", "README", "the answer goes in answer.txt\n"), ("hidden", "want", "42\n")):
            (root / task / part).mkdir(parents=True)
            (root / task / part / name).write_text(text)
        lines += ["[[tasks]]", f'id = "{task}"', f'goal = "write the answer for {task}"']
        lines += [
            f'start = "{task}/start"',
            f'hidden = "{task}/hidden"',
            "check = 'grep -qx \"$(cat want)\" answer.txt'",
        ]
    (root / "suite.toml").write_text("\n".join(lines) + "\n")
    return root / "suite.toml"


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    for name in [name for name in os.environ if name.startswith(("PAICLI_", "OPENAI_"))]:
        del os.environ[name]
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run(*, quick: bool = False) -> Result:
    from paicli.cli import main
    from paicli.sandbox import choose_sandbox

    count = 2 if quick else 20
    result = Result(NAME, TITLE)
    with tempfile.TemporaryDirectory() as folder, FakeLLM() as fake:
        root = Path(os.path.realpath(folder))
        home = root / "home"
        (home / ".paicli").mkdir(parents=True)
        (home / ".paicli" / "config.toml").write_text("retry_backoff = 0.01\n")
        suite = write_suite(root / "suite", count)
        fake.on(has_tool_result("write_file"), Reply.text("Done."), repeat=True)
        for number in range(count):
            write = Reply.tool_calls([("write_file", {"path": "answer.txt", "content": "42\n"})])
            fake.on(f"for task{number}", write)
        sandboxed = choose_sandbox("auto", workspace=root, home=home).sandbox is not None
        env = {"HOME": str(home), "PAICLI_BASE_URL": fake.base_url, "PAICLI_MODEL": "fake-model"}
        args = ["eval", "run", str(suite), "--mode", "chat", "--jobs", "1", "--out", str(root / "out")]
        with environment(env), open(os.devnull, "w") as quiet, contextlib.redirect_stderr(quiet):
            code = main([*args, *([] if sandboxed else ["--unsandboxed"])])
        lines = (root / "out" / "results.jsonl").read_text().splitlines() if code == 0 else []
        records = [json.loads(line) for line in lines]
    harness = [float(r["harness_s"]) for r in records]
    result.add("runs passed", sum(r["outcome"] == "pass" for r in records), f"of {count}")
    result.add("harness per run (median)", rounded(median(harness)), "s", at_most=1.0)
    result.add("harness per run (largest)", rounded(max(harness, default=float("nan"))), "s")
    result.add("agent per run (median)", rounded(median([float(r["wall_s"]) for r in records])), "s")
    result.add("check per run (median)", rounded(median([float(r["check_s"]) for r in records])), "s")
    result.details = {"sandboxed": sandboxed, "exit_code": code, "records": records}
    return result
