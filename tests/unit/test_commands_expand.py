"""`@path` attachments and `!`cmd`` output: what is expanded, once, and what is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.commands.custom import substitute
from agent_cli.commands.errors import InputError
from agent_cli.commands.expand import CommandRun, expand, looks_like_file
from agent_cli.commands.shell_runner import run_bash
from agent_cli.commands.text import Piece, Template
from tests.conftest import git_init


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = git_init(tmp_path / "repo")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 42\n", encoding="utf-8")
    (root / "README.md").write_text("# Demo\n", encoding="utf-8")
    return root


class Recorder:
    """A command runner that records what it was asked to run."""

    def __init__(self, output: str = "ran"):
        self.commands: list[str] = []
        self.output = output

    async def __call__(self, command: str) -> CommandRun:
        self.commands.append(command)
        return CommandRun(f"Exit code: 0\nOutput:\n{self.output}", 0)


async def run(text: str | Template, cwd: Path, runner=None, max_bytes: int = 10_000):
    template = Template.typed(text) if isinstance(text, str) else text
    return await expand(template, cwd=cwd, max_bytes=max_bytes, run_command=runner)


# --- @path --------------------------------------------------------------------------------------


async def test_a_file_is_attached_after_the_text_with_numbered_lines(repo):
    result = await run("Explain @src/app.py please.", repo)
    text, attachment = result.text.split("\n\n", 1)
    assert text == "Explain @src/app.py please."  # the mention stays; the sentence's period is not the path
    assert attachment == (
        '<attached_file path="src/app.py" lines="2">\n     1\tdef main():\n     2\t    return 42\n</attached_file>'
    )
    assert result.attachments == ((repo / "src" / "app.py").resolve(),)


async def test_each_file_is_attached_once_in_order_of_mention(repo):
    result = await run("@README.md then @src/app.py then @./README.md again", repo)
    assert result.text.count("<attached_file") == 2
    assert result.text.index('path="README.md"') < result.text.index('path="src/app.py"')


async def test_relative_paths_resolve_from_the_working_directory_inside_the_repository(repo):
    result = await run("see @app.py and @../README.md", repo / "src")
    assert len(result.attachments) == 2


async def test_a_quoted_path_may_contain_spaces(repo):
    (repo / "my notes.txt").write_text("hello\n")
    result = await run('read @"my notes.txt"', repo)
    assert '<attached_file path="my notes.txt" lines="1">' in result.text


async def test_a_directory_gives_its_listing(repo):
    (repo / "src" / "pkg").mkdir()
    result = await run("what is in @src/", repo)
    assert '<attached_directory path="src/">\npkg/\napp.py\n</attached_directory>' in result.text


async def test_a_large_file_is_cut_with_a_marker(repo):
    (repo / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    result = await run("@big.txt", repo, max_bytes=2000)
    body = result.text.split("\n\n", 1)[1]
    assert len(body.encode()) < 2600
    assert "     1\tline 1\n" in body
    assert "line 5000" not in body
    assert "[… truncated: showed lines 1-" in body and "of 5000" in body and "read_file from line" in body


async def test_a_single_huge_line_is_cut_and_says_so(repo):
    (repo / "minified.js").write_text("x" * 50_000 + "\nsecond line\n")
    body = (await run("@minified.js", repo, max_bytes=1000)).text.split("\n\n", 1)[1]
    assert len(body.encode()) < 1400
    assert "showed lines 1-1 (the last one cut) of 2 (50,013 bytes in all" in body
    assert "second line" not in body


async def test_the_line_count_of_a_big_file_is_exact(repo):
    (repo / "big.log").write_text("entry\n" * 300_000 + "no newline at the end")
    body = (await run("@big.log", repo, max_bytes=500)).text
    assert 'lines="300001"' in body and "of 300001" in body


async def test_a_binary_file_is_not_inlined(repo):
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    result = await run("@blob.bin", repo)
    assert "(not shown: blob.bin is a binary file (binary data, 300 bytes)" in result.text


async def test_a_missing_file_is_an_error_naming_it(repo):
    with pytest.raises(InputError, match=r"@src/nope\.py: no such file or directory"):
        await run("fix @src/nope.py", repo)


async def test_words_that_are_not_paths_are_left_alone(repo):
    text = "ask @alice about @dataclass(frozen=True), @types/node and mail me@example.com"
    result = await run(text, repo)
    assert result.text == text and result.attachments == ()


def test_what_looks_like_a_file():
    assert looks_like_file("src/app.py") and looks_like_file("./x") and looks_like_file("dir/")
    assert looks_like_file("notes.md") and looks_like_file("~/x")
    assert not looks_like_file("alice") and not looks_like_file("types/node") and not looks_like_file("pytest.fixture")


async def test_escaped_at_is_a_literal_at(repo):
    result = await run(r"keep \@src/app.py as text", repo)
    assert result.text == "keep @src/app.py as text" and result.attachments == ()


# --- workspace confinement ----------------------------------------------------------------------


async def test_a_path_outside_the_workspace_is_refused(repo):
    with pytest.raises(InputError, match="outside the workspace"):
        await run("@../../../../../../etc/passwd", repo)
    with pytest.raises(InputError, match="outside the workspace"):
        await run("@/etc/passwd", repo)


async def test_a_symlink_that_escapes_the_workspace_is_refused(repo, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET\n")
    os.symlink(secret, repo / "innocent.txt")
    os.symlink(tmp_path, repo / "outside")
    with pytest.raises(InputError, match="outside the workspace"):
        await run("@innocent.txt", repo)
    with pytest.raises(InputError, match="outside the workspace"):
        await run("@outside/secret.txt", repo)


async def test_a_symlink_inside_the_workspace_is_fine(repo):
    os.symlink(repo / "src" / "app.py", repo / "link.py")
    result = await run("@link.py", repo)
    assert "return 42" in result.text


async def test_outside_a_repository_the_working_directory_is_the_workspace(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("inside\n")
    (tmp_path / "y.txt").write_text("outside\n")
    assert "inside" in (await run("@x.txt", tmp_path / "a")).text
    with pytest.raises(InputError, match="outside the workspace"):
        await run("@../y.txt", tmp_path / "a")


# --- !`cmd` -------------------------------------------------------------------------------------


async def test_commands_run_in_order_and_are_replaced_by_their_output(repo):
    runner = Recorder()
    result = await run("Status: !`git status --short` and log: !`git log -1`.", repo, runner)
    assert runner.commands == ["git status --short", "git log -1"]
    assert result.text == (
        'Status: <command_output command="git status --short">\nExit code: 0\nOutput:\nran\n</command_output>'
        ' and log: <command_output command="git log -1">\nExit code: 0\nOutput:\nran\n</command_output>.'
    )
    assert result.commands == ("git status --short", "git log -1")


async def test_an_escaped_command_does_not_run(repo):
    runner = Recorder()
    result = await run(r"literally \!`rm -rf /`", repo, runner)
    assert runner.commands == [] and result.text == "literally !`rm -rf /`"


async def test_without_a_runner_commands_stay_text(repo):
    assert (await run("try !`ls`", repo, None)).text == "try !`ls`"


async def test_command_output_is_never_expanded_again(repo):
    runner = Recorder(output="see @src/app.py and !`touch pwned`")
    result = await run("!`cat notes`", repo, runner)
    assert runner.commands == ["cat notes"]
    assert result.attachments == ()
    assert "see @src/app.py and !`touch pwned`" in result.text


async def test_attached_content_is_never_expanded_again(repo):
    (repo / "tricky.md").write_text("mentions @README.md and !`touch pwned` and $1\n")
    runner = Recorder()
    result = await run("@tricky.md", repo, runner)
    assert runner.commands == [] and len(result.attachments) == 1


async def test_arguments_attach_files_but_never_run_commands(repo):
    runner = Recorder()
    template = substitute("Review $ARGUMENTS. Context: !`git status`", "@src/app.py !`rm -rf /`")
    result = await run(template, repo, runner)
    assert runner.commands == ["git status"]  # the body's command ran, the argument's did not
    assert "!`rm -rf /`" in result.text
    assert result.attachments == ((repo / "src" / "app.py").resolve(),)


async def test_a_command_in_the_body_may_use_an_argument(repo):
    runner = Recorder()
    await run(substitute("History: !`git log --grep=$1`", "fix"), repo, runner)
    assert runner.commands == ["git log --grep=fix"]


async def test_a_file_named_twice_through_arguments_is_attached_once(repo):
    result = await run(substitute("$1 and again $ARGUMENTS", "@README.md"), repo)
    assert result.text.count("<attached_file") == 1


async def test_literal_text_is_never_scanned(repo):
    template = Template((Piece("rubric with @missing.py and !`x`\n", "literal"), Piece("@README.md", "argument")))
    runner = Recorder()
    result = await run(template, repo, runner)
    assert runner.commands == [] and len(result.attachments) == 1


# --- the plain runner ---------------------------------------------------------------------------


async def test_run_bash_reports_output_and_exit_code(tmp_path):
    output, code = await run_bash("echo out; echo err >&2; exit 3", tmp_path, 10_000, 1000)
    assert code == 3
    assert output == "Exit code: 3\nOutput:\nout\nerr\n"


async def test_run_bash_times_out_and_keeps_head_and_tail(tmp_path):
    output, code = await run_bash("sleep 5", tmp_path, 200, 1000)
    assert code == 124 and "timed out after 200 ms" in output
    output, _ = await run_bash("seq 1 100000", tmp_path, 10_000, 200)
    assert output.startswith("Exit code: 0\nOutput:\n1\n2\n") and "chars truncated" in output
    assert output.rstrip().endswith("100000")
