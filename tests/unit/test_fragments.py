from pathlib import Path

import pytest

from agent_cli.context.environment import EnvironmentContext
from agent_cli.context.fragments import (
    NO_SUMMARY,
    agents_md_text,
    is_contextual_fragment,
    is_real_user_message,
    is_summary_message,
    skill_body_text,
    summary_prefix,
    summary_text,
)
from agent_cli.context.initial import permissions_text
from agent_cli.context.modes import mode_change_fragment
from agent_cli.context.prompts import PromptLibrary
from agent_cli.items import Message, ToolOutput
from agent_cli.paths import bundled_prompts_dir


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def harness_texts() -> list[str]:
    env = EnvironmentContext("/r", "bash", "2025-01-01", "UTC", "never", "read-only", False)
    return [
        agents_md_text("/r", "be nice"),
        "<skills>\nintro\n- a: b (/p)\n</skills>",
        skill_body_text('we"ird <name>', "/p/SKILL.md", "body"),
        env.to_xml(),
        "<turn_aborted>\nThe user interrupted the turn.\n</turn_aborted>",
        permissions_text("never", "read-only", False),
        mode_change_fragment("plan").text,
    ]


@pytest.mark.parametrize("index", range(7))
def test_every_harness_fragment_is_recognized(index):
    text = harness_texts()[index]
    assert is_contextual_fragment(text)
    assert is_contextual_fragment(f"\n  {text}\n\n")
    assert not is_real_user_message(Message("user", text))


@pytest.mark.parametrize(
    "text",
    [
        "fix the bug in <environment_context> parsing",
        "<environment_context> is what we send, right?",
        "what does </skills> mean",
        "# AGENTS.md instructions for me: keep it short",
        "<skills>\nbut never closed",
        "",
        "hello",
    ],
)
def test_user_text_is_real(text):
    assert not is_contextual_fragment(text)
    assert is_real_user_message(Message("user", text))


def test_only_user_role_messages_are_real():
    assert not is_real_user_message(Message("assistant", "hi"))
    assert not is_real_user_message(Message("developer", "hi"))
    assert not is_real_user_message(ToolOutput("c1", "hi"))


def test_summary_messages_are_not_real_user_messages():
    text = summary_text("We fixed the parser; next: run tests.")
    assert text.startswith(summary_prefix())
    assert text.endswith("\n\nWe fixed the parser; next: run tests.")
    assert is_summary_message(text)
    assert not is_real_user_message(Message("user", text))
    assert summary_text("  ").endswith(NO_SUMMARY)


def test_summary_with_user_overridden_prefix_and_explicit_prefix(isolated_home: Path):
    (isolated_home / "prompts").mkdir(parents=True)
    (isolated_home / "prompts" / "summary_prefix.md").write_text("MY PREFIX\n")
    custom = summary_text("s")
    assert custom == "MY PREFIX\n\ns"
    assert is_summary_message(custom)
    bundled = PromptLibrary([bundled_prompts_dir()]).render("summary_prefix.md").strip()
    assert is_summary_message(f"{bundled}\n\nolder summary")  # written before the override: still parsed
    assert is_summary_message("OTHER: s", prefix="OTHER:")
    assert not is_real_user_message(Message("user", "OTHER: s"), prefix="OTHER:")
    assert is_real_user_message(Message("user", "my prefix is lowercase"))


def test_skill_fragment_escapes_attributes():
    text = skill_body_text('a"b', "/x&y/SKILL.md", "body")
    assert text.startswith('<skill name="a&quot;b" path="/x&amp;y/SKILL.md">\nbody\n')


def test_a_broken_summary_prefix_override_falls_back_to_the_bundled_one(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "summary_prefix.md").write_text("{% include 'missing.md' %}\n")
    bundled = PromptLibrary([bundled_prompts_dir()]).render("summary_prefix.md").strip()
    assert summary_prefix(tmp_path) == bundled
