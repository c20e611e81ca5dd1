"""The fake model server (tests/fakellm.py) in a process of its own.

The scheduler benchmarks time paicli, not the fake: in the same process the server's threads would
compete with the event loop for the GIL and add their own milliseconds to every round trip. A real
model server is another machine; another process is the closest we get on one box.

    with ServerProcess({"task_1": 0.25}, default_latency=0.0) as server:
        ...  # point an LLMClient at server.base_url
        log = server.requests()  # [ServedRequest(task_id, started, finished, status), ...]

Every request gets a short final text; a request whose task brief says `id: X` waits `latencies[X]`
seconds first (others `default_latency`). `routes` (a list of `Route`) come first: a request whose system
prompt starts with a route's `system` gets that route's reply, streamed `chunk` characters every
`chunk_delay` seconds (a planner's reply at a given rate, bench/streamplan.py). `ServedRequest.system`
is the first line of each request's system prompt. `started` / `finished` are `time.monotonic()` in the server
process; on Linux that clock is system-wide, so they compare with the benchmark's own readings.

Protocol (internal): the parent writes a JSON spec line to stdin; the child answers with a JSON line
holding its base URL, then serves. Each further stdin line "requests" is answered with one JSON line,
the log of the requests finished so far; end of input stops the server.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import IO, Any

from bench.common import REPO

_TASK_LINE = re.compile(r"^id: (.+)$", re.MULTILINE)  # the task brief's "id: task_1" line
_CACHE_KEY = "_bench_task_id"  # the task id, cached on the request body so each rule does not search again


@dataclass(frozen=True)
class ServedRequest:
    task_id: str | None
    started: float
    finished: float
    status: int | None
    system: str = ""


@dataclass(frozen=True)
class Route:
    system: str  # the beginning of the system prompt (its first line, say "# Mode: planning")
    content: str
    latency: float = 0.0
    chunk: int = 7
    chunk_delay: float = 0.0


def system_line(body: dict[str, Any] | None) -> str:
    """The first line of a request's system prompt ("" when it has none)."""
    messages = (body or {}).get("messages") or [{}]
    content = messages[0].get("content") if messages[0].get("role") == "system" else ""
    return content.split("\n", 1)[0] if isinstance(content, str) else ""


def task_id_of(body: dict[str, Any] | None) -> str | None:
    """The id of the plan task a request belongs to (from its first user message), or None."""
    for message in (body or {}).get("messages", []):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            found = _TASK_LINE.search(message["content"])
            return found.group(1) if found else None
    return None


class ServerProcess:
    def __init__(
        self,
        latencies: Mapping[str, float] | None = None,
        *,
        default_latency: float = 0.0,
        routes: Sequence[Route] = (),
    ) -> None:
        self.spec = {
            "latencies": dict(latencies or {}),
            "default_latency": default_latency,
            "routes": [asdict(route) for route in routes],
        }
        self._process: subprocess.Popen[str] | None = None
        self.base_url = ""

    def __enter__(self) -> ServerProcess:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bench.fakeserver"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._send(json.dumps(self.spec))
        self.base_url = json.loads(self._receive())["base_url"]
        return self

    def __exit__(self, *exc: object) -> None:
        process = self._process
        if process is None:
            return
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self._process = None

    def requests(self) -> list[ServedRequest]:
        """Every request the server has finished answering, in arrival order."""
        self._send("requests")
        return [ServedRequest(*row) for row in json.loads(self._receive())]

    def _send(self, line: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()

    def _receive(self) -> str:
        assert self._process is not None and self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("the fake server process exited early")
        return line


def _serve(stdin: IO[str], stdout: IO[str]) -> None:
    from tests.fakellm import FakeLLM, Reply, any_request

    spec: dict[str, Any] = json.loads(stdin.readline())

    def cached_task_id(body: dict[str, Any]) -> str | None:
        if _CACHE_KEY not in body:
            body[_CACHE_KEY] = task_id_of(body)
        return body[_CACHE_KEY]  # type: ignore[no-any-return]

    def for_task(task_id: str) -> Any:
        return lambda body: cached_task_id(body) == task_id

    def starts_with(prefix: str) -> Any:
        return lambda body: system_line(body).startswith(prefix)

    with FakeLLM() as fake:
        for route in spec.get("routes", []):
            reply = Reply.text(
                route["content"], latency=route["latency"], chunk=route["chunk"], chunk_delay=route["chunk_delay"]
            )
            fake.on(starts_with(route["system"]), reply, repeat=True)
        for task_id, latency in spec["latencies"].items():
            fake.on(for_task(task_id), Reply.text(f"finished {task_id}", latency=latency), repeat=True)
        fake.on(any_request, Reply.text("finished", latency=spec["default_latency"]), repeat=True)
        stdout.write(json.dumps({"base_url": fake.base_url}) + "\n")
        stdout.flush()
        for command in stdin:
            if command.strip() == "requests":
                rows = [
                    (task_id_of(r.body), r.started, r.finished, r.status, system_line(r.body))
                    for r in fake.requests
                    if r.finished is not None
                ]
                stdout.write(json.dumps(rows) + "\n")
                stdout.flush()


if __name__ == "__main__":
    _serve(sys.stdin, sys.stdout)
