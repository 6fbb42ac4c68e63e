from pathlib import Path

import pytest

from agent_cli.context.prompts import PromptError, PromptLibrary, default_prompt_dirs, render_prompt
from agent_cli.paths import bundled_prompts_dir


def write(directory: Path, name: str, text: str) -> None:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    user, bundled = tmp_path / "user", tmp_path / "bundled"
    user.mkdir()
    bundled.mkdir()
    return user, bundled


def test_includes_are_expanded_relative_to_the_prompts_folder(dirs):
    _, bundled = dirs
    write(bundled, "main.md", "top\n{% include 'parts/a.md' %}\nbottom\n")
    write(bundled, "parts/a.md", 'A {% include "b.md" %}\n')
    write(bundled, "b.md", "B\n")
    assert PromptLibrary([bundled]).render("main.md") == "top\nA B\nbottom\n"


def test_include_cycle_names_the_chain(dirs):
    _, bundled = dirs
    write(bundled, "a.md", "{% include 'b.md' %}")
    write(bundled, "b.md", "{% include 'c.md' %}")
    write(bundled, "c.md", "{% include 'a.md' %}")
    with pytest.raises(PromptError, match=r"cycle: a\.md -> b\.md -> c\.md -> a\.md"):
        PromptLibrary([bundled]).render("a.md")


def test_self_include_is_a_cycle(dirs):
    _, bundled = dirs
    write(bundled, "a.md", "x {% include 'a.md' %}")
    with pytest.raises(PromptError, match="cycle: a.md -> a.md"):
        PromptLibrary([bundled]).expand("a.md")


def test_missing_include_names_the_template(dirs):
    _, bundled = dirs
    write(bundled, "a.md", "{% include 'nope.md' %}")
    with pytest.raises(PromptError, match="'nope.md' not found"):
        PromptLibrary([bundled]).render("a.md")


def test_variables_are_substituted_including_in_included_parts(dirs):
    _, bundled = dirs
    write(bundled, "a.md", "Hello {name}. {% include 'b.md' %}")
    write(bundled, "b.md", "Mode: {mode}; again {name}")
    assert PromptLibrary([bundled]).render("a.md", name="Ada", mode="ask") == "Hello Ada. Mode: ask; again Ada"


def test_substituted_values_are_not_parsed_again(dirs):
    _, bundled = dirs
    write(bundled, "a.md", "[{value}]")
    assert (
        PromptLibrary([bundled]).render("a.md", value="{other} {% include 'x.md' %}")
        == "[{other} {% include 'x.md' %}]"
    )


def test_missing_variable_is_a_clear_error(dirs):
    _, bundled = dirs
    write(bundled, "greet.md", "Hello {name} in {place}")
    with pytest.raises(PromptError, match=r"'greet.md' needs variable\(s\) place"):
        PromptLibrary([bundled]).render("greet.md", name="Ada")


def test_unused_variable_is_a_clear_error(dirs):
    _, bundled = dirs
    write(bundled, "greet.md", "Hello {name}")
    with pytest.raises(PromptError, match=r"'greet.md' does not use variable\(s\) extra.*placeholders are: name"):
        PromptLibrary([bundled]).render("greet.md", name="Ada", extra=1)


def test_literal_braces_survive(dirs):
    _, bundled = dirs
    text = 'JSON {"a": {"b": [1, 2]}}, shell ${HOME} and $ {x}, set {1, 2}, escaped {{name}} and { spaced }'
    write(bundled, "lit.md", text + " {x}")
    rendered = PromptLibrary([bundled]).render("lit.md", x="X")
    assert rendered == 'JSON {"a": {"b": [1, 2]}}, shell ${HOME} and $ X, set {1, 2}, escaped {name} and { spaced } X'


def test_user_override_wins_and_includes_use_the_same_rule(dirs):
    user, bundled = dirs
    write(bundled, "system.md", "bundled system: {% include 'part.md' %}")
    write(bundled, "part.md", "bundled part")
    write(user, "part.md", "user part")
    library = PromptLibrary([user, bundled])
    assert library.render("system.md") == "bundled system: user part"
    assert library.find("part.md") == user / "part.md"
    write(user, "system.md", "user system")
    assert PromptLibrary([user, bundled]).render("system.md") == "user system"


def test_file_reads_are_cached_for_the_library(dirs):
    _, bundled = dirs
    write(bundled, "a.md", "first")
    library = PromptLibrary([bundled])
    assert library.render("a.md") == "first"
    write(bundled, "a.md", "second")
    assert library.render("a.md") == "first"  # stable for the session
    assert PromptLibrary([bundled]).render("a.md") == "second"


@pytest.mark.parametrize("name", ["/etc/passwd", "../secret.md", "a/../../b.md", ""])
def test_names_outside_the_prompts_folder_are_rejected(dirs, name):
    _, bundled = dirs
    with pytest.raises(PromptError, match="relative path"):
        PromptLibrary([bundled]).render(name)


def test_missing_template_lists_searched_folders(dirs):
    user, bundled = dirs
    with pytest.raises(PromptError, match=f"'x.md' not found .*{user.name}.*{bundled.name}"):
        PromptLibrary([user, bundled]).render("x.md")


def test_render_prompt_reads_overrides_from_agent_home(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_HOME", str(tmp_path))
    write(tmp_path / "prompts", "summary_prefix.md", "custom prefix")
    assert default_prompt_dirs()[0] == tmp_path / "prompts"
    assert render_prompt("summary_prefix.md") == "custom prefix"


@pytest.mark.parametrize(
    ("name", "variables"),
    [
        ("system.md", {"mode_guidance": "MODE"}),
        ("compact.md", {}),
        ("summary_prefix.md", {}),
        ("review.md", {}),
        ("init.md", {}),
        ("skills_intro.md", {}),
        ("mode_agent.md", {}),
        ("mode_ask.md", {}),
        ("mode_plan.md", {}),
        ("mode_change.md", {"mode": "ask", "mode_guidance": "G"}),
    ],
)
def test_bundled_prompts_render(name, variables):
    text = PromptLibrary([bundled_prompts_dir()]).render(name, **variables)
    assert text.strip()
    assert "{%" not in text


def test_bundled_prompts_cover_what_they_must():
    library = PromptLibrary([bundled_prompts_dir()])
    compact = library.render("compact.md").lower()
    for section in (
        "active task",
        "progress and decisions",
        "constraints and preferences",
        "next steps",
        "critical data",
    ):
        assert section in compact
    review = library.render("review.md")
    for tag in ("[P0]", "[P1]", "[P2]", "[P3]", "file.py:LINE", "read-only"):
        assert tag in review
    system = library.render("system.md", mode_guidance="MODE")
    for tool in ("read_file", "grep", "list_dir", "apply_patch", "shell", "update_plan"):
        assert f"`{tool}`" in system
