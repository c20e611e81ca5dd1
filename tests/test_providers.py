"""Provider presets: base URL, default model, where the key comes from (never OPENAI_API_KEY for another
provider), local servers without a key, quirks, and `provider` as a trusted-only repository key."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.common.errors import ConfigError
from paicli.config import Settings
from paicli.config_sources import load_settings
from paicli.llm.providers import KEY_VARIABLES, PROVIDERS, on_loopback
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply

WARNINGS: list[str] = []


def settings(tmp_path: Path, flags: dict[str, object] | None = None, home_config: str = "", **env: str) -> Settings:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".paicli").mkdir(parents=True, exist_ok=True)
    ws.mkdir(exist_ok=True)
    (home / ".paicli" / "config.toml").write_text(home_config)
    WARNINGS.clear()
    return load_settings(flags, workspace=ws, env=env, home=home, warn=WARNINGS.append)


def test_a_preset_fills_in_base_url_model_and_its_own_key(tmp_path: Path) -> None:
    s = settings(tmp_path, {"provider": "deepseek"}, DEEPSEEK_API_KEY="sk-deepseek")
    assert (s.base_url, s.model, s.require_key()) == ("https://api.deepseek.com/v1", "deepseek-chat", "sk-deepseek")


def test_openai_key_never_goes_to_another_provider(tmp_path: Path) -> None:
    s = settings(tmp_path, {"provider": "kimi"}, OPENAI_API_KEY="sk-openai", OPENAI_BASE_URL="https://proxy/v1")
    assert s.base_url == "https://api.moonshot.cn/v1"  # OPENAI_BASE_URL is not for kimi either
    with pytest.raises(ConfigError, match=r"no API key for kimi: set PAICLI_API_KEY \(or MOONSHOT_API_KEY\)"):
        s.require_key()
    assert settings(tmp_path, {"provider": "openai"}, OPENAI_API_KEY="sk-openai").require_key() == "sk-openai"
    custom = settings(tmp_path, {"base_url": "https://llm.corp/v1"}, OPENAI_API_KEY="sk-openai")
    assert custom.require_key() == "sk-openai"  # no provider: a custom base URL may use it


def test_paicli_api_key_wins_over_the_providers_variable(tmp_path: Path) -> None:
    s = settings(tmp_path, {"provider": "qwen"}, PAICLI_API_KEY="sk-paicli", DASHSCOPE_API_KEY="sk-dash")
    assert s.require_key() == "sk-paicli"


def test_what_is_set_at_the_presets_level_or_above_wins(tmp_path: Path) -> None:
    assert settings(tmp_path, {"provider": "deepseek", "model": "deepseek-reasoner"}).model == "deepseek-reasoner"
    home_model = 'model = "gpt-4o"\n'
    assert settings(tmp_path, {"provider": "deepseek"}, home_config=home_model).model == "deepseek-chat"
    same_file = 'provider = "deepseek"\nmodel = "deepseek-reasoner"\nbase_url = "https://proxy.example/v1"\n'
    s = settings(tmp_path, home_config=same_file)
    assert (s.model, s.base_url) == ("deepseek-reasoner", "https://proxy.example/v1")
    assert settings(tmp_path, home_config='provider = "glm"\n', PAICLI_MODEL="glm-4.5").model == "glm-4.5"
    assert settings(tmp_path, PAICLI_PROVIDER="zai").base_url == "https://api.z.ai/api/paas/v4"  # an alias


def test_local_presets_and_loopback_endpoints_need_no_key(tmp_path: Path) -> None:
    assert settings(tmp_path, {"provider": "ollama"}).require_key() == ""
    assert settings(tmp_path, {"base_url": "http://localhost:1234/v1"}).require_key() == ""
    with pytest.raises(ConfigError, match="needs a model name"):
        settings(tmp_path, {"provider": "vllm"})
    assert settings(tmp_path, {"provider": "vllm", "model": "Qwen/Qwen3-8B"}).require_key() == ""
    assert [on_loopback(u) for u in ("http://127.0.0.2:8/v1", "http://[::1]:8/v1", "http://10.0.0.1/v1")] == [
        True,
        True,
        False,
    ]


def test_an_unknown_provider_is_a_configuration_error_listing_the_presets(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown provider 'deepsek': one of openai, deepseek"):
        settings(tmp_path, {"provider": "deepsek"})


def test_kimi_quirks_cap_the_temperature_and_set_an_output_cap(tmp_path: Path) -> None:
    s = settings(tmp_path, {"provider": "kimi-intl"}, home_config="temperature = 1.5\n")
    assert (s.temperature, s.max_tokens, s.base_url) == (1.0, 32_000, "https://api.moonshot.ai/v1")
    assert any("at most 1" in w for w in WARNINGS)
    assert settings(tmp_path, {"provider": "kimi"}, home_config="max_tokens = 900\n").max_tokens == 900


def test_provider_in_a_repositorys_config_needs_trust(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (ws / ".paicli").mkdir(parents=True)
    (ws / ".paicli" / "config.toml").write_text('provider = "openrouter"\n')
    warnings: list[str] = []
    s = load_settings(workspace=ws, env={}, home=home, warn=warnings.append)
    assert s.provider is None and s.base_url == "https://api.openai.com/v1"
    assert any("provider" in w for w in warnings)


def test_every_providers_key_variable_is_handed_over_as_a_key() -> None:
    assert {
        "PAICLI_API_KEY",
        "OPENAI_API_KEY",
        "DEEPSEEK_API_KEY",
        "MOONSHOT_API_KEY",
        "DASHSCOPE_API_KEY",
        "ZHIPUAI_API_KEY",
        "OPENROUTER_API_KEY",
    } <= set(KEY_VARIABLES)


def test_the_cli_sends_the_providers_key_and_headers(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on("hello", Reply.text("hi"))
    env = paicli_env(fake, home, OPENROUTER_API_KEY="sk-or-test-0042", OPENAI_API_KEY="sk-openai-never")
    del env["PAICLI_API_KEY"], env["PAICLI_MODEL"]
    done = run_paicli(
        ["-C", str(workspace), "--provider", "openrouter", "--base-url", fake.base_url, "run", "hello"], env
    )
    assert done.code == 0, done.stderr
    request = fake.requests[0]
    assert request.headers["authorization"] == "Bearer sk-or-test-0042"
    assert request.headers["x-title"] == "paicli"
    assert request.body is not None and request.body["model"] == "openai/gpt-4o-mini"


def test_help_lists_the_presets(home: Path, fake: FakeLLM) -> None:
    usage = run_paicli(["--help"], paicli_env(fake, home)).stdout
    assert all(name in usage for name in PROVIDERS) and "DEEPSEEK_API_KEY" in usage
