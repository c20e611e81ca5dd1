"""The one error tree of paicli. Every user-visible failure message is written where it is raised.

PaicliError
├── ConfigError            bad flags, settings or missing key          → exit 2
├── ModelError             the model could not be reached or answered badly → exit 1
│   ├── ModelHTTPError     the server answered with an HTTP error (status kept)
│   │   └── UnsupportedRequest  …that names a request field or value it does not support (never retried)
│   └── ModelProtocolError dropped stream, HTML body, empty choices, cut-off tool call
├── PlanError              a plan reply that cannot be turned into a valid plan
├── ReviewError            the reviewer's reply could not be read (never taken as a pass)
├── AgentError             a ReAct loop that cannot finish (step budget, malformed calls)
└── BudgetExceeded         the hard token budget is spent

Cancellation is never an exception of ours: it travels as asyncio.CancelledError.
Tool refusals are not exceptions either at the agent level: they go back to the model as tool results.
"""

from __future__ import annotations

# Exit codes of the contract: done · plan FAILED or model unreachable · usage/configuration · cancelled.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


class PaicliError(Exception):
    """Base of every error paicli raises on purpose; str(err) is the one-line user message."""


class ConfigError(PaicliError):
    pass


class ModelError(PaicliError):
    retryable: bool = False
    # the retries made before the request gave up, by kind (the fields of paicli.common.values.Retries)
    retries: dict[str, float] | None = None


class ModelHTTPError(ModelError):
    def __init__(self, message: str, status: int, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class UnsupportedRequest(ModelHTTPError):
    """`field` is the capability name (paicli/llm/rejections.py) the server refused."""

    def __init__(self, message: str, status: int, field: str) -> None:
        super().__init__(message, status, retryable=False)
        self.field = field


class ModelProtocolError(ModelError):
    def __init__(self, message: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class PlanError(PaicliError):
    pass


class ReviewError(PaicliError):
    pass


class AgentError(PaicliError):
    pass


class BudgetExceeded(PaicliError):
    pass
