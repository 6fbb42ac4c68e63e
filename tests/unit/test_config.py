import re
from dataclasses import FrozenInstanceError, replace

import pytest

from agent_cli.config import DEFAULT_MODEL, KEYS, ConfigError, load_config, with_model
from tests.conftest import REPO


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("AGENT_HOME", str(home))
    return home


def project(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".agent").mkdir()
    return repo


def test_defaults(home, tmp_path):
    config = load_config(tmp_path)
    assert config.model == "gpt-5"
    assert config.provider.id == "openai"
    assert config.context_window > 0
    assert config.auto_compact_percent == 85


def test_layers_apply_in_order(home, tmp_path):
    repo = project(tmp_path)
    (home / "config.toml").write_text('model = "gpt-4.1"\ntool_output_token_limit = 111\nshell_timeout_ms = 500\n')
    (repo / ".agent" / "config.toml").write_text("tool_output_token_limit = 222\n")
    sub = repo / "src"
    sub.mkdir()
    config = load_config(sub, ["shell_timeout_ms=700"], {"model": "claude-sonnet-4-5"})
    assert config.model == "claude-sonnet-4-5"
    assert config.provider.id == "anthropic"
    assert config.tool_output_token_limit == 222
    assert config.shell_timeout_ms == 700
    assert config.sources == (home / "config.toml", repo / ".agent" / "config.toml")


def test_custom_provider_table(home, tmp_path):
    overrides = [
        'model_providers.local.base_url="http://127.0.0.1:9/v1"',
        'model_providers.local.wire_api="chat"',
        'model_provider="local"',
        "model_context_window=16000",
    ]
    config = load_config(tmp_path, overrides)
    assert config.provider.id == "local"
    assert config.provider.base_url == "http://127.0.0.1:9/v1"
    assert config.provider.wire_api == "chat"
    assert config.provider.requires_key is False
    assert config.context_window == 16000


def test_override_values_are_toml_and_bare_words_are_strings(home, tmp_path):
    config = load_config(tmp_path, ["model=o3", "auto_compact=false"])
    assert config.model == "o3"
    assert config.auto_compact is False


@pytest.mark.parametrize(
    "text, message",
    [
        ('tool_output_token_limit = "big"\n', "`tool_output_token_limit` must be an integer"),
        ('approval_policy = "sometimes"\n', "must be one of untrusted"),
        ("model = [\n", "invalid TOML"),
        ('[model_providers.x]\nwire_api = "grpc"\n', "wire_api must be one of"),
    ],
)
def test_bad_config_names_file_key_and_type(home, tmp_path, text, message):
    (home / "config.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(home / "config.toml") in str(info.value)
    assert message in str(info.value)


def test_bad_override_is_named(home, tmp_path):
    with pytest.raises(ConfigError, match="-c auto_compact=maybe"):
        load_config(tmp_path, ["auto_compact=maybe"])


def test_unknown_provider(home, tmp_path):
    with pytest.raises(ConfigError, match="unknown model provider 'nope'"):
        load_config(tmp_path, ["model_provider=nope"])


@pytest.mark.parametrize(
    "override, message",
    [
        ("tool_output_token_limit=-5", "`tool_output_token_limit` must be at least 100"),
        ("shell_timeout_ms=0", "`shell_timeout_ms` must be at least 100"),
        ("model_context_window=0", "`model_context_window` must be at least 1000"),
        ("retry_max_attempts=0", "`retry_max_attempts` must be at least 1"),
        ("writable_roots=[1]", "`writable_roots` must be an array of strings"),
    ],
)
def test_values_out_of_range_are_errors(home, tmp_path, override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path, [override])


def test_non_utf8_config_file_is_a_clear_error(home, tmp_path):
    (home / "config.toml").write_bytes(b"model = '\xff'\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(tmp_path)


def test_unknown_keys_are_kept_as_warnings(home, tmp_path):
    (home / "config.toml").write_text("modle = 'typo'\n")
    config = load_config(tmp_path, ["colour=1"])
    assert any("unknown config key `modle`" in w and "config.toml" in w for w in config.warnings)
    assert any("-c colour=1: unknown config key `colour`" in w for w in config.warnings)


def test_cd_to_a_file_says_so(home, tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(ConfigError, match="is not a directory"):
        load_config(tmp_path / "f")


def test_withholding_a_repositorys_settings_keeps_the_users_own_and_what_the_front_end_added(tmp_path, monkeypatch):
    from agent_cli.config import without_repository_settings

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("AGENT_HOME", str(home))
    (home / "config.toml").write_text('approval_policy = "untrusted"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text(
        'approval_policy = "never"\nsandbox_mode = "danger-full-access"\nwritable_roots = ["/"]\nmodel = "repo-model"\n'
    )
    config = load_config(repo, ["shell_timeout_ms=5000"], {"mode": "plan"})
    config = replace(config, writable_roots=(*config.writable_roots, tmp_path / "added"))  # agent exec --add-dir
    assert config.sandbox_mode == "danger-full-access" and config.approval_policy == "never"
    withheld = without_repository_settings(config)
    assert (withheld.sandbox_mode, withheld.approval_policy) == ("workspace-write", "untrusted")
    assert withheld.writable_roots == (tmp_path / "added",)
    # The repository's model waits for trust too (issue 33): only what makes the agent more careful applies.
    assert (withheld.model, withheld.shell_timeout_ms, withheld.mode) == (DEFAULT_MODEL, 5000, "plan")


def test_a_config_is_read_only_lists_included(tmp_path, isolated_home):
    config = load_config(tmp_path, ["colour=1"])
    with pytest.raises(FrozenInstanceError):
        config.model = "o3"  # type: ignore[misc]
    assert isinstance(config.warnings, tuple) and isinstance(config.layers, tuple)  # no append either
    assert isinstance(config.writable_roots, tuple) and isinstance(config.plugin_dirs, tuple)


def test_with_model_takes_the_models_window_unless_one_is_configured(tmp_path, isolated_home):
    looked_up = with_model(load_config(tmp_path, ["model=gpt-5"]), "gpt-4")
    assert (looked_up.model, looked_up.context_window) == ("gpt-4", 8192)
    configured = with_model(load_config(tmp_path, ["model=gpt-5", "model_context_window=20000"]), "gpt-4")
    assert (configured.model, configured.context_window) == ("gpt-4", 20000)


def test_every_key_is_in_the_configuration_docs():
    doc = (REPO / "docs" / "configuration.md").read_text()
    assert [name for name in KEYS if not re.search(rf"[`\[.]{name}\b", doc)] == []
