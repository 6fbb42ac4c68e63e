"""Code planted from inside the sandbox for the user's git or shell to run later (issue 33, items
1 to 3), end to end under each sandbox mechanism: `agent exec` runs what an attacker would, then
the test looks at the files and runs the user's git itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_cli.sandbox.policy import landlock_mounts_work, working_mechanisms
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall

MECHANISMS = list(working_mechanisms())


def exec_in(server, cwd: Path, mechanism: str, *commands: str) -> str:
    """Run ``commands`` as shell calls of one turn; the agent's stderr."""
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": c}) for c in commands]), Reply(text="done"))
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": mechanism}
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "go"], cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    return result.stderr


def users_git(*args: str, cwd: Path) -> None:
    """The user's own git, later, outside any sandbox."""
    subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=30)


@pytest.fixture(params=MECHANISMS or [pytest.param("none", marks=pytest.mark.skip("no sandbox mechanism here"))])
def mechanism(request):
    if request.param == "landlock" and not landlock_mounts_work():
        pytest.skip("the Landlock launcher cannot make a mount namespace here")
    return request.param


def test_hooks_path_and_included_config_stay_read_only(server, tmp_path, mechanism):
    repo = git_init(tmp_path / "repo")
    marker = tmp_path / "ran"
    (repo / ".husky").mkdir()
    (repo / ".husky" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (repo / ".gitconfig-shared").write_text("[user]\n\tname = someone\n")
    users_git("config", "core.hooksPath", ".husky", cwd=repo)
    users_git("config", "include.path", "../.gitconfig-shared", cwd=repo)
    other = git_init(tmp_path / "repo" / "tools" / "other")  # its hooksPath names a folder that is missing
    users_git("config", "core.hooksPath", "../../.hooks", cwd=other)
    exec_in(
        server,
        repo,
        mechanism,
        f"printf '#!/bin/sh\\ntouch {marker}\\n' > .husky/pre-commit; chmod +x .husky/pre-commit; "
        f"rm -f .husky/pre-commit; mv .husky .husky2; "
        f"printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> .gitconfig-shared; "
        f"mkdir -p .hooks && printf '#!/bin/sh\\ntouch {marker}\\n' > .hooks/pre-commit && chmod +x .hooks/pre-commit; "
        "echo ok",
    )
    assert (repo / ".husky" / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"
    assert not (repo / ".husky2").exists()
    assert (repo / ".gitconfig-shared").read_text() == "[user]\n\tname = someone\n"
    assert not (repo / ".hooks").exists()  # appeared during the command: moved away
    (repo / "f").write_text("x")
    users_git("add", "f", cwd=repo)
    users_git("commit", "-qm", "x", cwd=repo)
    users_git("status", cwd=repo)
    assert not marker.exists()


def test_nested_repositories_at_any_depth_and_new_ones(server, tmp_path, mechanism):
    repo = git_init(tmp_path / "repo")
    marker = tmp_path / "ran"
    deep = git_init(repo / "a" / "b" / "c" / "d" / "e" / "f")
    vendored = git_init(repo / "node_modules" / "pkg")
    built = git_init(repo / "build" / "out")
    plant = f"printf '#!/bin/sh\\ntouch {marker}\\n'"
    stderr = exec_in(
        server,
        repo,
        mechanism,
        *(
            f"{plant} > {folder.relative_to(repo)}/.git/hooks/pre-commit; "
            f"chmod +x {folder.relative_to(repo)}/.git/hooks/pre-commit; echo ok"
            for folder in (deep, vendored, built)
        ),
        f"git init -q sub/new && git -C sub/new config core.fsmonitor 'touch {marker}' && "
        f"git -C sub/new config alias.st '!touch {marker}' && "
        f"{plant} > sub/new/.git/hooks/pre-commit && chmod +x sub/new/.git/hooks/pre-commit; echo ok",
    )
    for folder in (deep, vendored, built):
        assert not (folder / ".git" / "hooks" / "pre-commit").exists()
    new = repo / "sub" / "new"
    assert (new / ".git" / "HEAD").exists()  # the repository itself is kept...
    assert not (new / ".git" / "hooks" / "pre-commit").exists()  # ...without what runs programs
    for folder in (deep, vendored, built, new):
        (folder / "f").write_text("x")
        users_git("add", "f", cwd=folder)
        users_git("commit", "-qm", "x", cwd=folder)
        users_git("status", cwd=folder)
        users_git("st", cwd=folder)
    assert not marker.exists()
    assert "new repository" in stderr


def test_started_in_home_dotfiles_stay_read_only(server, tmp_path, mechanism):
    home = Path(os.environ["HOME"])
    marker = tmp_path / "ran"
    (home / ".bashrc").write_text("# mine\n")
    (home / ".ssh").mkdir()
    (home / ".config" / "git").mkdir(parents=True)
    stderr = exec_in(
        server,
        home,
        mechanism,
        f"echo 'touch {marker}' >> .bashrc; echo 'touch {marker}' > .profile; "
        f"git config --global core.fsmonitor 'touch {marker}'; echo key >> .ssh/authorized_keys; "
        f"echo '[core] pager = touch {marker}' > .config/git/config; mkdir -p .config/fish; "
        "echo ok > project.txt",
    )
    assert (home / "project.txt").read_text() == "ok\n"  # the rest of the home folder is writable
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert not (home / ".profile").exists() and not (home / ".gitconfig").exists()
    assert not (home / ".config" / "fish").exists()
    assert list((home / ".ssh").iterdir()) == [] and list((home / ".config" / "git").iterdir()) == []
    subprocess.run(["bash", "-lic", "true"], cwd=home, env={**os.environ}, capture_output=True, timeout=30)
    git_init(tmp_path / "elsewhere")
    users_git("status", cwd=tmp_path / "elsewhere")
    assert not marker.exists()
    assert stderr.count("started in your home folder") == 1
