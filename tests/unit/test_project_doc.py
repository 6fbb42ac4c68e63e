from pathlib import Path

import pytest

from agent_cli.context.fragments import is_contextual_fragment
from agent_cli.context.project_doc import discover_project_docs, find_git_root, load_project_docs
from tests.conftest import git_init


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_init(tmp_path / "repo")


def test_files_from_git_root_down_to_cwd_in_order(repo, home):
    write(repo / "AGENTS.md", "root rules")
    write(repo / "a" / "AGENTS.md", "a rules")
    write(repo / "a" / "b" / "c" / "AGENTS.md", "c rules")  # a/b has none
    write(repo / "a" / "b" / "c" / "d" / "AGENTS.md", "below cwd: never read")
    cwd = repo / "a" / "b" / "c"
    docs = load_project_docs(cwd, home)
    assert docs.git_root == repo.resolve()
    assert [f.path for f in docs.files] == [
        repo.resolve() / "AGENTS.md",
        repo.resolve() / "a" / "AGENTS.md",
        repo.resolve() / "a" / "b" / "c" / "AGENTS.md",
    ]
    text = docs.text
    assert text.startswith(f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\n")
    assert text.endswith("\n</INSTRUCTIONS>")
    assert text.index("root rules") < text.index("a rules") < text.index("c rules")
    assert "never read" not in text
    assert f"--- {repo.resolve() / 'a' / 'AGENTS.md'} ---\na rules" in text
    assert is_contextual_fragment(text)
    assert docs.warnings == ()


def test_parent_of_git_root_is_not_searched(tmp_path, home):
    write(tmp_path / "AGENTS.md", "outside the repo")
    repo = git_init(tmp_path / "repo")
    write(repo / "AGENTS.md", "inside")
    docs = load_project_docs(repo, home)
    assert [f.text for f in docs.files] == ["inside"]


def test_override_file_wins_in_its_directory(repo, home):
    write(repo / "AGENTS.md", "plain root")
    write(repo / "AGENTS.override.md", "override root")
    write(repo / "sub" / "AGENTS.md", "plain sub")
    docs = load_project_docs(repo / "sub", home)
    assert [f.text for f in docs.files] == ["override root", "plain sub"]


def test_fallback_names_in_order_and_after_agents_md(repo, home):
    write(repo / "CLAUDE.md", "claude root")
    write(repo / "GEMINI.md", "gemini root")
    write(repo / "sub" / "CLAUDE.md", "claude sub")
    write(repo / "sub" / "AGENTS.md", "agents sub")
    docs = load_project_docs(repo / "sub", home, fallback_filenames=["GEMINI.md", "CLAUDE.md"])
    assert [f.text for f in docs.files] == ["gemini root", "agents sub"]
    assert load_project_docs(repo / "sub", home).files[0].text == "agents sub"  # no fallbacks configured


def test_without_git_root_only_cwd_is_searched(tmp_path, home):
    assert find_git_root(tmp_path) is None, "the temporary folder must not be inside a git repository"
    write(tmp_path / "AGENTS.md", "parent")
    write(tmp_path / "work" / "AGENTS.md", "cwd")
    docs = load_project_docs(tmp_path / "work", home)
    assert docs.git_root is None
    assert [f.text for f in docs.files] == ["cwd"]


def test_git_file_marks_a_worktree_root(tmp_path, home):
    repo = tmp_path / "worktree"
    write(repo / ".git", "gitdir: /somewhere/else\n")
    write(repo / "AGENTS.md", "worktree root")
    write(repo / "x" / "AGENTS.md", "x")
    assert find_git_root((repo / "x").resolve()) == repo.resolve()
    assert [f.text for f in load_project_docs(repo / "x", home).files] == ["worktree root", "x"]


def test_global_file_comes_first_and_override_wins(repo, home):
    write(repo / "AGENTS.md", "project")
    write(home / "AGENTS.md", "global plain")
    docs = load_project_docs(repo, home)
    assert [(f.text, f.is_global) for f in docs.files] == [("global plain", True), ("project", False)]
    assert f"--- {home / 'AGENTS.md'} (global) ---" in docs.text
    write(home / "AGENTS.override.md", "global override")
    assert load_project_docs(repo, home).files[0].text == "global override"


def test_shared_budget_root_first_with_marker_and_warning(repo, home):
    write(repo / "AGENTS.md", "r" * 40)
    write(repo / "sub" / "AGENTS.md", "s" * 100)
    write(repo / "sub" / "deep" / "AGENTS.md", "deep rules")
    docs = load_project_docs(repo / "sub" / "deep", home, max_bytes=100)
    root, sub, *rest = docs.files
    assert (root.text, root.truncated) == ("r" * 40, False)
    assert sub.truncated and sub.size == 100
    assert sub.text.startswith("s" * 60 + "\n\n[... truncated: 40 of 100 bytes")
    assert "project_doc_max_bytes = 100" in sub.text
    assert rest == []
    assert "deep rules" not in docs.text
    sub_path, deep_path = repo.resolve() / "sub" / "AGENTS.md", repo.resolve() / "sub" / "deep" / "AGENTS.md"
    assert any(str(sub_path) in w and "truncated to 60 of 100 bytes" in w for w in docs.warnings)
    assert any(str(deep_path) in w and "not loaded" in w for w in docs.warnings)


def test_budget_counts_the_global_file_and_cuts_on_character_boundaries(repo, home):
    write(home / "AGENTS.md", "g" * 10)
    write(repo / "AGENTS.md", "é" * 10)  # 20 bytes
    docs = load_project_docs(repo, home, max_bytes=15)
    assert docs.files[1].text.startswith("éé\n\n[... truncated")  # 5 bytes left: two whole characters
    assert "\ufffd" not in docs.text


def test_zero_budget_disables(repo, home):
    write(repo / "AGENTS.md", "rules")
    write(home / "AGENTS.md", "global")
    docs = load_project_docs(repo, home, max_bytes=0)
    assert docs.files == () and docs.text is None and docs.warnings == ()


def test_symlinked_files_inside_the_repository_are_followed_and_dangling_links_skipped(repo, home, tmp_path):
    target = write(repo / "docs" / "team-rules.md", "team rules")
    (repo / "AGENTS.md").symlink_to(target)
    (repo / "sub").mkdir()
    (repo / "sub" / "AGENTS.override.md").symlink_to(tmp_path / "missing.md")
    write(repo / "sub" / "AGENTS.md", "sub rules")
    docs = load_project_docs(repo / "sub", home)
    assert [f.text for f in docs.files] == ["team rules", "sub rules"]


def test_a_symlink_leading_outside_the_repository_is_not_read(repo, home, tmp_path):
    (repo / "AGENTS.md").symlink_to(write(tmp_path / "secret.txt", "s3cr3t"))
    docs = load_project_docs(repo, home)
    assert docs.files == () and "outside the repository" in docs.warnings[0]


def test_symlinked_cwd_resolves_to_the_repository(repo, home, tmp_path):
    write(repo / "AGENTS.md", "root")
    write(repo / "sub" / "AGENTS.md", "sub")
    link = tmp_path / "link"
    link.symlink_to(repo / "sub")
    assert [f.text for f in load_project_docs(link, home).files] == ["root", "sub"]


def test_invalid_utf8_is_decoded_lossily_with_a_warning(repo, home):
    path = write(repo / "AGENTS.md", b"caf\xe9 rules \xff")
    docs = load_project_docs(repo, home)
    assert docs.files[0].text == "caf\ufffd rules \ufffd"
    assert len(docs.warnings) == 1 and str(path.resolve()) in docs.warnings[0] and "UTF-8" in docs.warnings[0]


def test_empty_files_and_directories_named_like_docs_are_skipped(repo, home):
    write(repo / "AGENTS.md", "  \n\n")
    (repo / "sub" / "AGENTS.md").mkdir(parents=True)
    docs = load_project_docs(repo / "sub", home)
    assert docs.files == () and docs.text is None


def test_discovery_does_not_read(repo, home):
    write(repo / "AGENTS.md", "x")
    found = discover_project_docs(repo, home)
    assert found.global_doc is None and found.project_docs == (repo.resolve() / "AGENTS.md",)
