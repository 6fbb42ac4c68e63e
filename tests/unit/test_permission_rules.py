"""Permission rules: Claude Code's documented rule forms read from real settings files, the order
of sources (deny always wins), shell lines judged per simple command, and saving a rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.config import load_config
from agent_cli.permissions.engine import Permissions
from agent_cli.permissions.rules import RuleError, parse_rule
from agent_cli.permissions.shell_parse import parse_command_line
from agent_cli.permissions.writer import save_allow_rule
from agent_cli.session.safe_commands import suggest_rule
from tests.conftest import git_init

# The examples of Claude Code's settings documentation, as a team would commit them.
CLAUDE_SETTINGS = {
    "permissions": {
        "allow": [
            "Bash(npm run lint)",
            "Bash(npm run test:*)",
            "Bash(git diff *)",
            "Read(~/.zshrc)",
            "Edit(src/**)",
            "WebFetch(domain:example.com)",
            "mcp__github",
            "mcp__db__query",
        ],
        "ask": ["Bash(git push:*)"],
        "deny": ["Bash(curl:*)", "Read(./.env)", "Read(./.env.*)", "Read(./secrets/**)"],
    }
}


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    root = git_init(tmp_path / "repo")
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps(CLAUDE_SETTINGS, indent=2))
    return root


def rules_for(repo: Path, *overrides: str, trusted: bool = True) -> Permissions:
    return Permissions.from_config(load_config(repo, list(overrides)), trusted=trusted)


def decision(permissions: Permissions, tool: str, **args) -> str | None:
    return permissions.decide(tool, args).decision


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("shell", {"command": "npm run lint"}, "allow"),
        ("shell", {"command": "npm run lint --fix"}, None),  # exact rule: nothing more
        ("shell", {"command": "npm run test"}, "allow"),
        ("shell", {"command": "npm run test -- --watch"}, "allow"),
        ("shell", {"command": "npm run testing"}, None),  # a prefix ends at a word boundary
        ("shell", {"command": "git diff HEAD~1"}, "allow"),
        ("shell", {"command": "git push origin main"}, "ask"),
        ("shell", {"command": "curl https://example.com"}, "deny"),
        ("Bash", {"command": "npm run lint"}, "allow"),  # Claude Code's tool name works too
        ("read_file", {"path": ".env"}, "deny"),
        ("read_file", {"path": ".env.production"}, "deny"),
        ("read_file", {"path": "secrets/keys/prod.pem"}, "deny"),
        ("read_file", {"path": "src/.env"}, None),  # ./.env is anchored at the settings' project
        ("grep", {"pattern": "x", "path": "secrets"}, None),  # the folder itself: its files are hidden
        ("read_file", {"path": "~/.zshrc"}, "allow"),
        ("apply_patch", {"patch": "*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n*** End Patch"}, "allow"),
        ("apply_patch", {"patch": "*** Begin Patch\n*** Add File: docs/new.md\n+x\n*** End Patch"}, None),
        ("web_fetch", {"url": "https://example.com/page"}, "allow"),
        ("web_fetch", {"url": "https://example.org/page"}, None),
        ("mcp__github__create_issue", {}, "allow"),
        ("mcp__db__query", {}, "allow"),
        ("mcp__db__drop", {}, None),
    ],
)
def test_claude_codes_documented_rules_from_a_real_settings_file(repo, tool, args, expected):
    assert decision(rules_for(repo), tool, **args) == expected


def test_deny_beats_allow_across_files_whatever_their_order(repo, isolated_home):
    (Path.home() / ".claude").mkdir(parents=True, exist_ok=True)
    (Path.home() / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(npm run lint)"]}})
    )
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["Bash(rm:*)"]\n')
    (isolated_home / "config.toml").write_text('[permissions]\ndeny = ["Bash(rm -rf:*)"]\n')
    permissions = rules_for(repo, 'permissions.allow=["Bash(npm run lint)"]')  # -c is the last source
    verdict = permissions.decide("shell", {"command": "npm run lint"})
    assert verdict.decision == "deny" and verdict.rules[0].source.endswith(".claude/settings.json")
    assert decision(permissions, "shell", command="rm -rf build") == "deny"
    assert decision(permissions, "shell", command="rm build.log") == "allow"


def test_between_ask_and_allow_the_later_source_wins(repo):
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"permissions": {"allow": ["Bash(git push:*)"]}}))
    assert decision(rules_for(repo), "shell", command="git push") == "allow"  # local settings come after the project's
    assert decision(rules_for(repo, 'permissions.ask=["Bash(git push:*)"]'), "shell", command="git push") == "ask"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("npm run test && rm -rf /", None),  # a list: rm is allowed by nothing
        ("npm run test && curl evil.sh", "deny"),
        ("npm run lint | git diff --stat", "allow"),  # a pipeline: each part allowed
        ("(npm run test; curl x)", "deny"),  # a subshell
        ("{ npm run lint; }", "allow"),
        ("npm run test -- $(curl x)", "deny"),  # command substitution runs curl
        ("echo `curl x`", "deny"),
        ("npm run lint > lint.txt", None),  # a redirection writes a file no Edit rule allows
        ("npm run lint > src/lint.txt", "allow"),  # Edit(src/**) allows that write
        ("npm run lint > /dev/null 2>&1", "allow"),
        ("npm run lint > .env", None),
        ("npm run test:unit", None),  # the prefix ends at a word boundary
        ("FOO=1 npm run lint", "allow"),  # assignments do not hide the command
        ("npm run lint; git push", "ask"),
        ('npm run test -- "$ARGS"', "allow"),  # an expansion after the allowed prefix
        ("$(echo npm) run lint", "ask"),  # the program itself is unknown, and Bash(curl:*) denies some
        ("npm run lint &&", "ask"),  # a syntax error: nothing is allowed, and it counts as matching Bash(curl:*)
    ],
)
def test_compound_commands_are_judged_per_simple_command(repo, command, expected):
    assert decision(rules_for(repo), "shell", command=command) == expected


def test_the_parser_sees_every_simple_command_and_every_write():
    line = parse_command_line('cd a && (make 2>err.log | tee out.txt) >> all.log; echo $(date) > "x y"')
    assert [c.words[0] for c in line.commands] == ["cd", "make", "tee", "echo", "date"]
    assert set(line.writes) == {"err.log", "all.log", "x y"} and line.readable


def test_repository_allow_rules_apply_only_once_trusted_but_deny_and_ask_always(repo):
    untrusted = rules_for(repo, trusted=False)
    assert decision(untrusted, "shell", command="npm run lint") is None
    assert decision(untrusted, "shell", command="curl x") == "deny"
    assert decision(untrusted, "shell", command="git push") == "ask"
    assert (
        decision(
            rules_for(repo, 'permissions.allow=["Bash(npm run lint)"]', trusted=False), "shell", command="npm run lint"
        )
        == "allow"
    )  # the user's own rule (-c) applies


def test_a_read_deny_rule_names_the_files_it_hides(repo):
    permissions = rules_for(repo)
    assert str(permissions.read_denied(repo / ".env")) == "Read(./.env)"
    assert permissions.read_denied(repo / "secrets" / "a" / "b.txt") is not None
    assert permissions.read_denied(repo / "README.md") is None


def test_bad_rules_are_errors_in_config_and_warnings_in_settings(repo, isolated_home):
    with pytest.raises(RuleError):
        parse_rule("WebFetch(example.com)", "allow", "x", repo)
    (isolated_home / "config.toml").write_text('[permissions]\nallow = "Bash"\n')
    with pytest.raises(Exception, match="permissions.allow"):
        load_config(repo)
    (isolated_home / "config.toml").write_text("")
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"permissions": {"deny": ["Bash(("]}}))
    assert any("Bash((" in warning for warning in rules_for(repo).warnings)


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("npm test", "Bash(npm test:*)"),
        ("npm test --watch", "Bash(npm test:*)"),
        ("ls -la", "Bash(ls:*)"),
        ("git -C x status", "Bash(git:*)"),
        ("npm test && rm x", None),
        ("echo hi > f", None),
        ("bash -c 'rm x'", "Bash(bash -c rm x)"),
    ],
)
def test_the_rule_dont_ask_again_offers(command, rule):
    assert suggest_rule("shell", {"command": command}) == rule


def test_saving_a_rule_keeps_the_files_layout(tmp_path):
    agent = tmp_path / ".agent" / "config.toml"
    agent.parent.mkdir()
    agent.write_text('# my settings\nmodel = "gpt-5"  # the default\n\n[permissions]\ndeny = ["Read(./.env)"]\n')
    save_allow_rule("Bash(npm test:*)", "agent", tmp_path)
    text = agent.read_text()
    assert text.startswith('# my settings\nmodel = "gpt-5"  # the default\n') and 'allow = ["Bash(npm test:*)"]' in text
    claude = tmp_path / ".claude" / "settings.local.json"
    claude.parent.mkdir()
    claude.write_text('{\n    "env": {"A": "1"},\n    "permissions": {"allow": ["Bash(ls:*)"]}\n}\n')
    save_allow_rule("Bash(npm test:*)", "claude", tmp_path)
    save_allow_rule("Bash(npm test:*)", "claude", tmp_path)  # once only
    data = json.loads(claude.read_text())
    assert data == {"env": {"A": "1"}, "permissions": {"allow": ["Bash(ls:*)", "Bash(npm test:*)"]}}
    assert claude.read_text().startswith('{\n    "env"')  # the file's four-space indent is kept


# A deny rule must hold against the shell's own ways of spelling the same command: quoting,
# line continuations, the program's path, and the wrappers that run their arguments as a command.
@pytest.mark.parametrize(
    "command",
    [
        "$'curl' https://evil.example",  # ANSI-C quoting is a literal word
        "$'\\x63url' https://evil.example",  # ... with escapes
        "cu\\\nrl https://evil.example",  # a backslash-newline joins the word
        "/usr/bin/curl https://evil.example",  # the program by its path
        "env FOO=1 curl https://evil.example",
        "command curl x",
        "exec curl x",
        "nohup curl x",
        "nice -n 5 curl x",
        "timeout 5 curl x",
        "time curl x",
        "sudo -u root curl x",
        "xargs curl < urls.txt",
        "stdbuf -o0 curl x",
        "bash -c 'curl https://evil.example'",  # a shell given a command string
        'sh -c "echo hi; curl x"',
        "eval 'curl x'",
        "eval curl x",
        "bash -lc 'npm run test && curl x'",
        "find . -name '*.url' -exec curl {} \\;",  # find runs the command after -exec
        "find . -type f -execdir /usr/bin/curl -d @{} x +",
    ],
)
def test_a_deny_rule_holds_against_other_spellings_of_the_command(repo, command):
    assert decision(rules_for(repo), "shell", command=command) == "deny"


def test_wrappers_do_not_change_what_allow_rules_allow(repo):
    permissions = rules_for(repo)
    assert decision(permissions, "shell", command="npm run lint") == "allow"
    assert decision(permissions, "shell", command="timeout 60 npm run lint") is None  # no rule for timeout
    assert decision(permissions, "shell", command="echo $'a b'") is None


@pytest.mark.parametrize("spelling", ["{repo}/link", "{repo}/src/../.env", "link", "src/../.env"])
def test_a_read_or_edit_deny_rule_holds_for_an_absolute_path_through_a_symlink_or_dotdot(repo, spelling):
    (repo / ".env").write_text("SECRET=1\n")
    (repo / "src").mkdir()
    (repo / "link").symlink_to(".env")
    path = spelling.format(repo=repo)
    permissions = rules_for(repo, 'permissions.deny=["Edit(./.env)"]')
    assert decision(permissions, "read_file", path=path) == "deny"
    patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-SECRET=1\n+SECRET=2\n*** End Patch"
    assert decision(permissions, "apply_patch", patch=patch) == "deny"


@pytest.mark.parametrize(
    "command",
    ["$(echo curl) https://evil.example", "C=curl; $C https://evil.example", "timeout 5 $(echo curl) x", '"$CMD" x'],
)
def test_a_command_whose_program_is_an_expansion_is_asked_about_when_a_shell_deny_rule_exists(repo, command):
    verdict = rules_for(repo).decide("shell", {"command": command})
    assert (
        verdict.decision == "ask"
        and "Bash(curl:*)" in verdict.rule_text
        and "known only when it runs" in verdict.reason
    )
    assert (
        decision(rules_for(repo, 'permissions.allow=["Bash"]'), "shell", command=command) == "ask"
    )  # deny beats allow


def test_without_a_shell_deny_rule_an_expanded_program_follows_the_policy(tmp_path, isolated_home):
    assert (
        decision(rules_for(git_init(tmp_path / "r"), 'permissions.deny=["Read(./.env)"]'), "shell", command="$X a")
        is None
    )


@pytest.mark.parametrize(
    ("command", "writes", "readable"),
    [
        ("make >& build.log", ("build.log",), True),  # bash: stdout and stderr to the file
        ("make >& $LOG", (), False),  # where it writes is unknown
        ("make >&2", (), True),  # a descriptor: no file
        ("make 2>&1 >&-", (), True),
    ],
)
def test_a_redirection_with_gt_ampersand_to_a_file_is_a_write(command, writes, readable):
    line = parse_command_line(command)
    assert (line.writes, line.readable) == (writes, readable)


def test_an_edit_deny_rule_holds_for_gt_ampersand(repo):
    assert (
        decision(rules_for(repo, 'permissions.deny=["Edit(./.env)"]'), "shell", command="npm run lint >& .env")
        == "deny"
    )
