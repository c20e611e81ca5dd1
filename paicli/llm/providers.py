"""Provider presets: `--provider NAME` (or `provider = "NAME"`) fills in the base URL, a default model,
where the key comes from and the provider's quirks. Pure data; the settings loader applies it
(paicli/config.py) and the client takes the quirks.

The key: `PAICLI_API_KEY`, else the provider's own variable, else `api_key` from a config file.
`OPENAI_API_KEY` is read only for the openai provider or when no provider is chosen (a custom base URL);
it is never sent to another provider. Local providers, and any base URL on the loopback, need no key.

Quirks: `max_temperature` (Kimi and GLM accept at most 1.0), `max_tokens` (Kimi's default output cap is
small enough that a reasoning model spends it thinking), `headers` (OpenRouter's app name).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Provider:
    name: str
    base_url: str
    model: str | None  # None: the server decides what it serves; --model must name it
    key_variable: str | None = None  # the provider's own environment variable for the key
    local: bool = False  # runs on this machine: no key needed
    max_temperature: float | None = None
    max_tokens: int | None = None  # a default output cap, when the user sets none
    headers: tuple[tuple[str, str], ...] = ()
    about: str = ""


PROVIDERS: dict[str, Provider] = {
    p.name: p
    for p in (
        Provider("openai", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY", about="OpenAI"),
        Provider("deepseek", "https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY", about="DeepSeek"),
        Provider(
            "glm",
            "https://open.bigmodel.cn/api/paas/v4",
            "glm-4.7",
            "ZHIPUAI_API_KEY",
            max_temperature=1.0,
            about="Zhipu GLM, bigmodel.cn (China)",
        ),
        Provider(
            "glm-intl",
            "https://api.z.ai/api/paas/v4",
            "glm-4.7",
            "ZHIPUAI_API_KEY",
            max_temperature=1.0,
            about="GLM on z.ai (international)",
        ),
        Provider(
            "kimi",
            "https://api.moonshot.cn/v1",
            "kimi-k2.6",
            "MOONSHOT_API_KEY",
            max_temperature=1.0,
            max_tokens=32_000,
            about="Moonshot Kimi, moonshot.cn (China)",
        ),
        Provider(
            "kimi-intl",
            "https://api.moonshot.ai/v1",
            "kimi-k2.6",
            "MOONSHOT_API_KEY",
            max_temperature=1.0,
            max_tokens=32_000,
            about="Moonshot Kimi, moonshot.ai (international)",
        ),
        Provider(
            "qwen",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            "DASHSCOPE_API_KEY",
            about="Qwen on DashScope compatible mode (China)",
        ),
        Provider(
            "qwen-intl",
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            "DASHSCOPE_API_KEY",
            about="Qwen on DashScope compatible mode (international)",
        ),
        Provider(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "openai/gpt-4o-mini",
            "OPENROUTER_API_KEY",
            headers=(("X-Title", "paicli"),),
            about="OpenRouter",
        ),
        Provider("ollama", "http://127.0.0.1:11434/v1", "qwen2.5-coder:7b", local=True, about="Ollama, local"),
        Provider("vllm", "http://127.0.0.1:8000/v1", None, local=True, about="vLLM, local (name the served model)"),
        Provider(
            "llamacpp",
            "http://127.0.0.1:8080/v1",
            "local",
            local=True,
            about="llama.cpp server, local (it serves one model whatever the name)",
        ),
    )
}
ALIASES = {
    "zai": "glm-intl",
    "z.ai": "glm-intl",
    "zhipu": "glm",
    "moonshot": "kimi",
    "dashscope": "qwen",
    "llama.cpp": "llamacpp",
    "llama-cpp": "llamacpp",
}
KEY_VARIABLES = ("PAICLI_API_KEY", *sorted({p.key_variable for p in PROVIDERS.values() if p.key_variable}))


def find_provider(name: str) -> Provider | None:
    key = name.strip().lower()
    return PROVIDERS.get(ALIASES.get(key, key))


def on_loopback(base_url: str) -> bool:
    """True for an endpoint on this machine (localhost, 127.0.0.0/8, ::1): it gets no key unless given one."""
    try:
        host = urlsplit(base_url.strip()).hostname or ""
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def presets_help() -> str:
    """The presets, one line each, for `paicli --help` and docs/providers.md."""
    width = max(map(len, PROVIDERS))
    return "\n".join(
        f"  {p.name:<{width}}  {p.about}: {p.base_url}" + (f", model {p.model}" if p.model else "")
        for p in PROVIDERS.values()
    )
