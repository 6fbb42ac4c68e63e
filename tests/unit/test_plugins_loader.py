"""Finding Claude Code plugins and reading what each contributes; nothing broken is fatal."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.commands.plugins_info import format_plugins
from agent_cli.commands.registry import CommandTable
from agent_cli.plugins.loader import load_plugins
from tests.conftest import git_init
from tests.plugin_fixtures import hooks_json, write_plugin

GREET = (
    "---\ndescription: Greet someone\nargument-hint: [name]\nallowed-tools: Bash(echo:*), Read\nmodel: haiku\n---\n"
    "Greet $ARGUMENTS using ${CLAUDE_PLUGIN_ROOT}/greet.txt\n"
)
SKILL = "---\nname: pdf\ndescription: Work with PDF files\n---\nRun ${CLAUDE_PLUGIN_ROOT}/tools/pdf.py\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_init(tmp_path / "repo")


def commands_of(repo: Path, home: Path, found) -> dict:
    """The plugins' commands as the command table parses them."""
    table = CommandTable.load(repo, home, found)
    return {name: command for name, command in table.custom.items() if command.source.startswith("plugin ")}


def full_plugin(parent: Path, name: str = "kit") -> Path:
    return write_plugin(
        parent,
        name,
        {
            "commands/greet.md": GREET,
            "commands/git/tidy.md": "Tidy the history.",
            "skills/pdf/SKILL.md": SKILL,
            "agents/reviewer.md": "---\nname: reviewer\ndescription: reviews\ntools: Read, Grep\n---\nReview.",
            "hooks/hooks.json": hooks_json("PreToolUse", "${CLAUDE_PLUGIN_ROOT}/check.sh", "Bash", timeout=5),
            ".mcp.json": {"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/db-server"}}},
        },
    )


def test_a_plugin_contributes_namespaced_commands_skills_hooks_agents_and_mcp_servers(repo, isolated_home):
    root = full_plugin(repo / ".agent" / "plugins")
    found = load_plugins(repo, isolated_home)
    assert found.warnings == ()
    [plugin] = found.plugins
    assert (plugin.name, plugin.version, plugin.source, plugin.root) == ("kit", "1.0.0", "repo", root.resolve())
    commands = commands_of(repo, isolated_home, found)
    assert sorted(commands) == ["kit:git:tidy", "kit:greet"]
    greet = commands["kit:greet"]
    assert greet.description == "Greet someone" and greet.argument_hint == "[name]"
    assert greet.allowed_tools == ("Bash(echo:*)", "Read")
    assert greet.model == "haiku" and greet.source == "plugin kit"  # the alias is resolved when the command runs
    assert f"{root.resolve()}/greet.txt" in greet.body  # ${CLAUDE_PLUGIN_ROOT} expanded
    [skill] = plugin.skills
    assert skill.name == "kit:pdf" and skill.source == "plugin kit" and str(root.resolve()) in skill.body
    [hook] = plugin.hooks
    assert (hook.event, hook.matcher, hook.timeout, hook.claude_names) == ("PreToolUse", "Bash", 5.0, True)
    assert hook.command == f"{root.resolve()}/check.sh"
    assert ("CLAUDE_PLUGIN_ROOT", str(root.resolve())) in hook.env and (
        "AGENT_PLUGIN_ROOT",
        str(root.resolve()),
    ) in hook.env
    assert found.agent_sources() == [("kit", root.resolve() / "agents" / "reviewer.md")]
    assert plugin.mcp_server_names == ["db"] and plugin.mcp[0].origin == root.resolve() / ".mcp.json"
    assert found.mcp_sources() == [(plugin, plugin.mcp[0])]
    assert plugin.variables["CLAUDE_PLUGIN_ROOT"] == str(root.resolve())


def test_manifest_paths_add_to_the_default_places(repo, isolated_home):
    manifest = {
        "name": "extra",
        "author": {"name": "Ada", "email": "ada@example.com"},
        "commands": ["./more/deploy.md"],
        "agents": "./more/agents/",
        "skills": "./more/skills",
        "hooks": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}},
        "mcpServers": {"inline-server": {"command": "srv"}},
    }
    write_plugin(
        repo / ".agent" / "plugins",
        "extra",
        {
            "commands/build.md": "Build.",
            "more/deploy.md": "Deploy $ARGUMENTS.",
            "more/agents/ops.md": "---\nname: ops\ndescription: ops\n---\nOps.",
            "more/skills/charts/SKILL.md": "---\nname: charts\ndescription: Draw charts\n---\nDraw.",
        },
        manifest,
    )
    found = load_plugins(repo, isolated_home)
    [plugin] = found.plugins
    assert found.warnings == ()
    assert plugin.author == "Ada <ada@example.com>"
    assert sorted(commands_of(repo, isolated_home, found)) == ["extra:build", "extra:deploy"]
    assert [s.name for s in plugin.skills] == ["extra:charts"]
    assert [h.event for h in plugin.hooks] == ["Stop"]
    assert [p.name for p in plugin.agent_files] == ["ops.md"]
    assert plugin.mcp_server_names == ["inline-server"] and plugin.mcp[0].inline


def test_manifest_paths_naming_the_default_places_load_each_component_once(repo, isolated_home):
    manifest = {"name": "same", "commands": "./commands/", "hooks": "./hooks/hooks.json", "agents": ["./agents/a.md"]}
    write_plugin(
        repo / ".agent" / "plugins",
        "same",
        {"commands/one.md": "One.", "hooks/hooks.json": hooks_json("Stop", "true"), "agents/a.md": "A"},
        manifest,
    )
    found = load_plugins(repo, isolated_home)
    [plugin] = found.plugins
    assert plugin.command_files == (("same:one", plugin.root / "commands" / "one.md"),)
    assert len(plugin.hooks) == 1 and len(plugin.agent_files) == 1


def test_an_unreadable_plugin_folder_is_a_warning(repo, isolated_home):
    root = write_plugin(repo / ".agent" / "plugins", "locked", {"skills/s/SKILL.md": "x"})
    (root / "skills").chmod(0)
    try:
        found = load_plugins(repo, isolated_home)
    finally:
        (root / "skills").chmod(0o755)
    if found.plugins:  # root ignores permissions: nothing to see
        pytest.skip("permissions are not enforced for this user")
    assert "plugin 'locked' in" in found.warnings[0] and "cannot read" in found.warnings[0]


def test_broken_manifests_and_components_are_warnings_naming_the_file(repo, isolated_home):
    plugins = repo / ".agent" / "plugins"
    bad = write_plugin(plugins, "bad", {"commands/x.md": "X"}, manifest="{not json")
    nameless = write_plugin(plugins, "nameless", {}, manifest={"version": "1"})
    write_plugin(
        plugins,
        "good",
        {
            "commands/ok.md": "OK",
            "commands/broken.md": "---\ndescription: [unclosed\n",
            "skills/noname/SKILL.md": "no front matter",
            "hooks/hooks.json": "{oops",
            ".mcp.json": "[]",
        },
        {"name": "good", "commands": ["../outside.md"]},
    )
    (plugins / "not-a-plugin").mkdir()
    found = load_plugins(repo, isolated_home)
    assert [p.name for p in found.plugins] == ["good"]
    table = CommandTable.load(repo, isolated_home, found)
    assert [name for name in table.custom if name.startswith("good:")] == ["good:ok"]
    text = "\n".join([*found.warnings, *table.warnings])
    assert f"{bad}/.claude-plugin/plugin.json: invalid JSON" in text
    assert f"{nameless}/.claude-plugin/plugin.json: `name` must be" in text
    for fragment in (
        "commands/broken.md",
        "skills/noname/SKILL.md",
        "hooks/hooks.json: invalid JSON",
        ".mcp.json: expected",
        "'../outside.md' points outside",
        "not-a-plugin: no .claude-plugin",
    ):
        assert fragment in text, fragment


def test_hook_entries_we_cannot_run_are_skipped_with_one_warning_each(repo, isolated_home):
    document = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": "ok.sh"}, {"type": "agent", "prompt": "?"}],
                },
                {"matcher": "Write", "hooks": [{"type": "command", "command": "x", "shell": "zsh"}]},
                {"matcher": "(", "hooks": [{"type": "command", "command": "y"}]},
            ],
            "TeammateIdle": [{"hooks": [{"type": "command", "command": "notify"}]}],
        }
    }
    write_plugin(repo / ".agent" / "plugins", "mixed", {"hooks/hooks.json": document})
    found = load_plugins(repo, isolated_home)
    assert [h.command for h in found.hooks] == ["ok.sh"]
    assert len(found.warnings) == 4
    assert all("hooks/hooks.json" in w for w in found.warnings)
    assert any("`TeammateIdle` is not an event" in w for w in found.warnings)
    assert any("must be one of command, http, prompt, got 'agent'" in w for w in found.warnings)
    assert any("`shell` is not a setting of a command hook" in w for w in found.warnings)
    assert any("not a valid regular expression" in w for w in found.warnings)


def test_precedence_disabling_and_plugin_dir(repo, isolated_home, tmp_path):
    write_plugin(isolated_home / "plugins", "kit", {"commands/a.md": "user"})
    write_plugin(isolated_home / "plugins", "other", {"commands/b.md": "B", "hooks/hooks.json": "{broken"})
    write_plugin(repo / ".agent" / "plugins", "kit", {"commands/a.md": "repo"})
    explicit = write_plugin(tmp_path / "dev", "kit", {"commands/a.md": "explicit"})
    bundle = tmp_path / "bundle"
    write_plugin(bundle, "one", {})
    write_plugin(bundle, "two", {})
    in_repo = repo / ".agent" / "plugins" / "kit"
    found = load_plugins(repo, isolated_home, [explicit, bundle, tmp_path / "missing", in_repo], disabled=["other"])
    assert [(p.name, p.source) for p in found.plugins] == [
        ("kit", "--plugin-dir"),
        ("one", "--plugin-dir"),
        ("two", "--plugin-dir"),
        ("other", "user"),
    ]
    assert commands_of(repo, isolated_home, found)["kit:a"].body == "explicit"
    assert [p.name for p in found.active] == ["kit", "one", "two"]
    assert list(commands_of(repo, isolated_home, found)) == ["kit:a"]
    assert found.plugins[-1].command_files == () and not any("other" in w for w in found.warnings)  # disabled: not read
    assert sum("a plugin of that name was already found" in w for w in found.warnings) == 2  # not 3: one folder once
    assert any(f"--plugin-dir {tmp_path / 'missing'}: no plugin there" in w for w in found.warnings)


def test_plain_command_names_only_when_nothing_else_has_them(repo, isolated_home):
    (repo / ".agent" / "commands").mkdir(parents=True)
    (repo / ".agent" / "commands" / "deploy.md").write_text("mine")
    plugins = repo / ".agent" / "plugins"
    write_plugin(
        plugins,
        "a",
        {"commands/greet.md": "A", "commands/deploy.md": "A", "commands/status.md": "A", "commands/dup.md": "A"},
    )
    write_plugin(plugins, "b", {"commands/dup.md": "B"})
    table = CommandTable.load(repo, isolated_home, load_plugins(repo, isolated_home))
    assert table.resolve("greet").custom.name == "a:greet"
    assert table.resolve("a:greet").custom.body == "A"
    assert table.resolve("deploy").custom.body == "mine"  # the repository's own command wins
    assert table.resolve("status").builtin is not None
    assert table.resolve("a:dup").custom.body == "A" and table.resolve("b:dup").custom.body == "B"
    assert sorted(table.aliases) == ["greet"]  # dup is ambiguous, deploy and status are taken
    assert "a:greet" in [info.name for info in table.infos()]


def test_the_listing_shows_each_plugin_and_what_it_contributed(repo, isolated_home):
    full_plugin(repo / ".agent" / "plugins")
    write_plugin(isolated_home / "plugins", "quiet", {})
    found = load_plugins(repo, isolated_home, disabled=["quiet"])
    text = format_plugins(found, CommandTable.load(repo, isolated_home, found))
    assert "kit 1.0.0  (repo: " in text and "the kit plugin" in text
    assert "/kit:greet (also /greet)" in text and "/kit:git:tidy (also /git:tidy)" in text
    assert "skills      kit:pdf" in text
    assert "hooks       PreToolUse[Bash]" in text
    assert "agents      kit:reviewer\n" in text
    assert "MCP servers db\n" in text + "\n"  # they run with the session's own servers
    assert "quiet 1.0.0  (user: " in text and "[disabled in config" in text


def agent(name: str) -> str:
    return f"---\nname: {name}\ndescription: the {name} agent\n---\nYou are {name}."


@pytest.mark.parametrize("listed", [["./agents/reviewer.md", "./custom/helper.md"], "./custom/helper.md"])
def test_agent_files_the_manifest_names_load_beside_the_default_folder(repo, isolated_home, listed):
    from agent_cli.agents.discovery import load_agents

    write_plugin(
        repo / ".agent" / "plugins",
        "crew",
        {
            "agents/reviewer.md": agent("reviewer"),
            "agents/other.md": agent("other"),
            "custom/helper.md": agent("helper"),
            "custom/unlisted.md": agent("unlisted"),
            "extra/deploy.md": "Deploy $ARGUMENTS.",
        },
        {"name": "crew", "agents": listed, "commands": "./extra/deploy.md"},
    )
    found = load_plugins(repo, isolated_home)
    assert found.warnings == ()
    agents = load_agents(repo, isolated_home, found.agent_sources())
    assert agents.warnings == ()
    plugin_agents = [name for name in agents.names if name.startswith("crew:")]
    assert plugin_agents == ["crew:other", "crew:reviewer", "crew:helper"]  # the folder's, then the manifest's
    assert agents.get("crew:helper").source == "plugin crew" and agents.get("crew:helper").prompt == "You are helper."
    assert list(commands_of(repo, isolated_home, found)) == ["crew:deploy"]  # a single command file, as a string
    text = format_plugins(found, CommandTable.load(repo, isolated_home, found))
    assert "agents      crew:other, crew:reviewer, crew:helper" in text


def test_the_listing_names_agents_as_task_knows_them(repo, isolated_home):
    write_plugin(
        repo / ".agent" / "plugins",
        "crew",
        {"agents/deploy.md": agent("deployer"), "agents/broken.md": "no front matter here"},
    )
    found = load_plugins(repo, isolated_home)
    text = format_plugins(found, CommandTable.load(repo, isolated_home, found))
    assert "agents      crew:broken (not loaded: " in text  # the file's name, and why it is not an agent
    assert text.endswith(", crew:deployer")  # its front matter's name, not the file's
