"""fetch_url: a web page's readable content for the model, as Markdown, a page of text at a time.

paicli itself makes the request (httpx2, in process: never from inside the sandbox, which has no network),
through the proxy the environment names (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY), as the model client
does, with the same CA certificates (SSL_CERT_FILE, SSL_CERT_DIR). Only http and https. Redirects are
followed on the same host; one to another host is not followed: the model is told where it leads and may
call fetch_url again, which the approval policy then judges for that host. At most MAX_BYTES are read; an
HTML page becomes Markdown (paicli/tools/readable.py), other text comes as it is, anything else is refused.
Long content comes a page at a time: the last line says which `offset` continues.

Its effect is NETWORK: it asks in `ask` and is refused in `auto` unless an allow rule names the host
(`fetch_url(docs.python.org)`, `fetch_url(*.python.org)`), and a plan task may call it only where its type
allows it (ANALYSIS). Its output is untrusted data, marked so for the model.
"""

from __future__ import annotations

import codecs
from urllib.parse import urljoin, urlsplit

import httpx2
from pydantic import BaseModel, ConfigDict, Field, field_validator

from paicli.tools.base import Effect, Tool, ToolContext, ToolFailure
from paicli.tools.readable import readable

MAX_BYTES = 5 * 1024 * 1024  # read of one response at most
MAX_REDIRECTS = 5
TIMEOUT = 30.0
_FOOTER_ROOM = 200
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml", "application/javascript")
HTML_TYPES = ("text/html", "application/xhtml+xml")
USER_AGENT = "paicli (fetch_url; a coding agent reading a page for its user)"


class FetchUrlArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=4000, description="The http or https URL of the page.")
    offset: int = Field(default=0, ge=0, description="Character of the page's text to start at. Default 0.")

    @field_validator("url")
    @classmethod
    def _web(cls, url: str) -> str:
        parts = urlsplit(url.strip())
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise ValueError("only http:// and https:// URLs with a host can be fetched")
        return url.strip()


class FetchUrl(Tool):
    name = "fetch_url"
    description = (
        "Read a web page (http or https) and return its readable content as Markdown (other text as it is). "
        "Long pages come a page at a time: the last line says which `offset` to read next. A redirect to "
        "another host is reported, not followed. Binary content (images, archives) is refused."
    )
    Args = FetchUrlArgs
    effect = Effect.NETWORK
    summary_argument = "url"
    path_argument = "url"  # what allow and deny rules match: for a URL, its host (paicli/policy/rules.py)
    untrusted_output = True
    data_source = "the web"

    async def run(self, args: FetchUrlArgs, ctx: ToolContext) -> str:
        url = args.url
        headers = {"user-agent": USER_AGENT}
        async with httpx2.AsyncClient(timeout=TIMEOUT, follow_redirects=False, headers=headers) as http:
            for _ in range(MAX_REDIRECTS + 1):
                try:
                    async with http.stream("GET", url) as response:
                        if response.is_redirect and (location := response.headers.get("location")):
                            target = urljoin(url, location)
                            if _host(target) != _host(url) or urlsplit(target).scheme not in ("http", "https"):
                                return (
                                    f"{url} redirects to another host: {target}\n"
                                    "Call fetch_url with that URL to read it (it is judged for its own host)."
                                )
                            url = target
                            continue
                        if response.status_code >= 400:
                            raise ToolFailure(f"{url}: HTTP {response.status_code} {response.reason_phrase}".rstrip())
                        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                        body, cut = await _read(response)
                        charset = response.charset_encoding or "utf-8"
                except httpx2.HTTPError as error:
                    raise ToolFailure(f"cannot fetch {url}: {type(error).__name__}: {error}") from None
                return _page(url, kind, body, cut, charset, args.offset, ctx)
        raise ToolFailure(f"{args.url}: more than {MAX_REDIRECTS} redirects")


async def _read(response: httpx2.Response) -> tuple[bytes, bool]:
    """At most MAX_BYTES of the body, and whether there was more."""
    kept = bytearray()
    async for chunk in response.aiter_bytes():
        kept += chunk
        if len(kept) > MAX_BYTES:
            return bytes(kept[:MAX_BYTES]), True
    return bytes(kept), False


def _page(url: str, kind: str, body: bytes, cut: bool, charset: str, offset: int, ctx: ToolContext) -> str:
    textual = not kind or kind.startswith(TEXT_TYPES) or kind.endswith(("+json", "+xml"))
    if not textual or b"\x00" in body[:8192]:
        size = f"{len(body):,} bytes{' or more' if cut else ''}"
        raise ToolFailure(f"{url} is {kind or 'binary content'} ({size}): fetch_url reads text, not binary content")
    try:
        text = codecs.decode(body, charset, errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    title = ""
    if kind in HTML_TYPES or (not kind and "<html" in text[:2000].lower()):
        title, text = readable(text, url)
    text = text.rstrip()
    heading = f"# {title}\n\n" if title and not offset else ""
    if cut:
        text += f"\n\n[the page is longer than {MAX_BYTES // (1024 * 1024)} MB: the rest was not read]"
    budget = max(1000, ctx.output_limit - _FOOTER_ROOM - len(heading) - len(url) - 20)
    page = text[offset : offset + budget]
    if offset and offset >= len(text):
        raise ToolFailure(f"{url}: offset {offset} is past the end of its text ({len(text):,} characters)")
    lines = [f"{url}", heading + page]
    if offset + budget < len(text):
        shown = f"characters {offset:,}–{offset + budget:,} of {len(text):,}"
        lines.append(f"[{shown}: call again with offset={offset + budget} for more]")
    return "\n".join(lines)


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def url_host(arguments: object) -> str | None:
    """The host a call's `url` names (what allow and deny rules match), or None."""
    url = arguments.get("url") if isinstance(arguments, dict) else None
    return _host(url) or None if isinstance(url, str) else None
