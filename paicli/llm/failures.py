"""What a failed model request says: the one place the client (paicli/llm/client.py) words its failures.

An HTTP error reply becomes a `ModelHTTPError` with the server's own words and a hint for the statuses a
user can act on (`RetryLater` when it may be retried, carrying the server's `Retry-After`); a transport
failure becomes a `ModelError` (retryable or not) that says whether the reply had started; a field the
server does not support that the caller asked for becomes `UnsupportedRequest`. The error that leaves the
client (`final_error`) starts with "model request failed:", says how many attempts it took, carries the
request's retry tally, and never holds the API key (`redact`).
"""

from __future__ import annotations

import httpx2

from paicli.common.errors import ModelError, ModelHTTPError, ModelProtocolError, UnsupportedRequest
from paicli.llm.attempts import RequestState, RetryLater
from paicli.llm.replies import HTML_REPLY, server_message
from paicli.llm.retry import is_retryable_status, parse_retry_after, quota_spent
from paicli.llm.tls import not_trusted, untrusted_certificate

KEY_HINT = "check PAICLI_API_KEY (or OPENAI_API_KEY)"

_UNSUPPORTED = {
    "response_format.json_schema": "the server does not support response_format json_schema",
    "response_format.json_object": "the server does not support response_format json_object",
    "tools": "the model (or its server) does not support tool calls; choose one that does (`paicli doctor` checks)",
}


def http_error(response: httpx2.Response, url: str, model: str) -> ModelHTTPError:
    """An error reply (4xx or 5xx) to `POST url` for `model`, its body already read."""
    status = response.status_code
    explanation = server_message(response)
    message = f"HTTP {status}: {explanation}"
    if explanation == HTML_REPLY:
        message += f" (POST {url})"
    elif status == 401:
        message += f" — the server rejected the API key; {KEY_HINT}"
    elif status == 403:
        message += " — the API key is not allowed to do this (model access, region or quota)"
    elif status == 404:
        message += f" — check the base URL (POST {url}) and the model name ({model!r})"
    elif status == 429 and quota_spent(response.text):
        return ModelHTTPError(
            message + " — the account's quota or balance is spent (check its plan and billing)", status
        )
    if is_retryable_status(status):
        return RetryLater(message, status, parse_retry_after(response.headers))
    return ModelHTTPError(message, status)


def transport_error(exc: httpx2.HTTPError, *, started: bool, base_url: str, read_timeout: float) -> ModelError:
    """A request to `base_url` that failed below HTTP; `started`: its reply had begun to stream."""
    detail = str(exc) or type(exc).__name__
    if started and isinstance(exc, httpx2.ReadTimeout):
        error = ModelError(f"the stream hung: no data for {read_timeout:g} s after the reply had started")
        error.retryable = True
        return error
    if started:  # no tool of a reply runs before the whole reply arrived: asking again is safe
        return ModelProtocolError(f"the stream broke off after the reply had started ({detail})", retryable=True)
    if isinstance(exc, httpx2.UnsupportedProtocol):
        return ModelError(f"the base URL {base_url!r} is not an http(s) URL")
    if isinstance(exc, httpx2.ConnectError) and (reason := untrusted_certificate(exc)) is not None:
        # not retried: asking again meets the same certificate
        return ModelError(f"could not connect to {base_url}: {not_trusted(reason)}")
    if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
        error = ModelError(f"could not connect to {base_url} ({detail})")
    elif isinstance(exc, httpx2.ReadTimeout):
        error = ModelError(f"no answer within {read_timeout:g} s (read timeout)")
    else:
        error = ModelError(f"the stream broke off before the reply started ({detail})")
    error.retryable = isinstance(exc, httpx2.TransportError)
    return error


def unsupported(error: ModelHTTPError, field: str) -> UnsupportedRequest:
    """The server rejected `field`, which the caller asked for (the caller picks another way)."""
    return UnsupportedRequest(f"{error} — {_UNSUPPORTED.get(field, field)}", error.status, field)


def budget_spent(
    request: RequestState, reopens_in: float | None, rate_limit_wait: float, api_key: str
) -> ModelHTTPError:
    """The request spent its `rate_limit_wait` rate limited (or would, by the server's own time)."""
    last = request.last_limit
    cause = str(last) if last is not None else "the endpoint is rate limited (HTTP 429 to other requests)"
    budget = f"rate_limit_wait ({rate_limit_wait:g} s)"
    # the server's own time (not a backoff of ours) beyond the whole budget: said as such, at once
    asked = last.retry_after if last is not None else reopens_in
    if asked is not None and asked > rate_limit_wait:
        cause += f" — rate limited: the server asks for {asked:.0f} s more, which would pass {budget}"
    else:
        cause += f" — rate limited for {rate_limit_wait:g} s (rate_limit_wait); try again later"
    error = final_error(ModelHTTPError(cause, last.status if last is not None else 429), request, api_key)
    assert isinstance(error, ModelHTTPError)
    return error


def final_error(error: ModelError, request: RequestState, api_key: str) -> ModelError:
    """The error the request ends with: of the same kind as `error`, worded for the user, key scrubbed."""
    message = f"model request failed: {error}"
    if request.attempt > 1:
        message += f" (gave up after {request.attempt} attempts)"
    message = redact(message, api_key)
    final: ModelError
    if isinstance(error, UnsupportedRequest):
        final = UnsupportedRequest(message, error.status, error.field)
    elif isinstance(error, ModelHTTPError):
        final = ModelHTTPError(message, error.status, retryable=error.retryable)
    elif isinstance(error, ModelProtocolError):
        final = ModelProtocolError(message, retryable=error.retryable)
    else:
        final = ModelError(message)
        final.retryable = error.retryable
    final.retries = request.tally().model_dump()
    return final


def redact(text: str, api_key: str) -> str:
    """`text` without the API key (a key shorter than 4 characters is not looked for)."""
    return text.replace(api_key, "***") if len(api_key) >= 4 else text
