from pathlib import Path

import pytest

from agent_cli.context.fragments import is_contextual_fragment
from agent_cli.context.skills import (
    MAX_DESCRIPTION_CHARS,
    load_skills,
    render_skills_list,
    skill_injections,
    skill_roots,
)
from agent_cli.context.tokens import approx_text_tokens
from agent_cli.paths import bundled_skills_dir
from agent_cli.permissions.engine import Permissions
from agent_cli.permissions.rules import parse_rule
from tests.conftest import git_init


def make_skill(root: Path, folder: str, front_matter: str, body: str = "Do the thing.") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front_matter}\n---\n\n{body}\n", encoding="utf-8")
    return path


def test_parses_name_description_body_and_path(tmp_path):
    path = make_skill(tmp_path, "deploy", "name: deploy\ndescription: |\n  Ship it\n  to prod.", "# Steps\n1. build")
    result = load_skills([("user", tmp_path)])
    (skill,) = result.skills
    assert (skill.name, skill.description, skill.path, skill.body, skill.source) == (
        "deploy",
        "Ship it to prod.",
        path,
        "# Steps\n1. build",
        "user",
    )
    assert result.warnings == ()


def test_first_name_wins_across_roots(tmp_path):
    repo, user = tmp_path / "repo", tmp_path / "user"
    make_skill(repo, "x", "name: commit\ndescription: repo commit")
    make_skill(user, "commit", "name: commit\ndescription: user commit")
    make_skill(user, "other", "name: other\ndescription: user other")
    result = load_skills([("repo", repo), ("user", user), ("bundled", bundled_skills_dir())])
    by_name = {s.name: s for s in result.skills}
    assert by_name["commit"].description == "repo commit"
    assert by_name["other"].source == "user"
    assert by_name["skill-creator"].source == "bundled"
    assert result.warnings == ()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("no front matter at all", "missing YAML front matter"),
        ("---\nname: x\ndescription: never closed\n", "missing YAML front matter"),
        ("---\nname: [unclosed\n---\nbody", "invalid YAML front matter"),
        ("---\n- a list\n---\nbody", "must be a mapping"),
        ("---\ndescription: d\n---\nbody", "needs a `name`"),
        ("---\nname: 12\ndescription: d\n---\nbody", "needs a `name`"),
        ("---\nname: x\n---\nbody", "needs a `description`"),
        ("---\nname: " + "n" * 65 + "\ndescription: d\n---\nbody", "at most 64"),
        ("---\nname: x\ndescription: " + "d" * (MAX_DESCRIPTION_CHARS + 1) + "\n---\n", "limit is 1024"),
    ],
)
def test_invalid_skills_become_warnings(tmp_path, content, problem):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "SKILL.md").write_text(content, encoding="utf-8")
    make_skill(tmp_path, "good", "name: good\ndescription: fine")
    result = load_skills([("repo", tmp_path)])
    assert [s.name for s in result.skills] == ["good"]
    (warning,) = result.warnings
    assert problem in warning and str(tmp_path / "bad" / "SKILL.md") in warning


def test_limits_are_inclusive(tmp_path):
    make_skill(tmp_path, "a", "name: " + "n" * 64 + "\ndescription: " + "d" * MAX_DESCRIPTION_CHARS)
    assert len(load_skills([("repo", tmp_path)]).skills) == 1


def test_duplicate_name_in_one_root_warns(tmp_path):
    make_skill(tmp_path, "a", "name: same\ndescription: first")
    make_skill(tmp_path, "b", "name: same\ndescription: second")
    result = load_skills([("repo", tmp_path)])
    assert [s.description for s in result.skills] == ["first"]
    assert "also named 'same'" in result.warnings[0]


def test_missing_roots_folders_without_skill_md_and_invalid_utf8(tmp_path):
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "file.txt").write_text("x")
    bad = tmp_path / "latin" / "SKILL.md"
    bad.parent.mkdir()
    bad.write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\nbody")
    result = load_skills([("repo", tmp_path), ("user", tmp_path / "nope")])
    assert [s.description for s in result.skills] == ["caf\ufffd"]


def test_roots_use_the_git_root(tmp_path):
    repo = git_init(tmp_path / "repo")
    (repo / "src").mkdir()
    roots = skill_roots(repo / "src", tmp_path / "home")
    assert roots == [
        ("repo", repo.resolve() / ".agent" / "skills"),
        ("user", tmp_path / "home" / "skills"),
        ("bundled", bundled_skills_dir()),
    ]


def test_bundled_skills_are_valid():
    result = load_skills([("bundled", bundled_skills_dir())])
    assert result.warnings == ()
    names = {s.name for s in result.skills}
    assert {"commit", "skill-creator"} <= names
    assert all(len(s.body) > 500 for s in result.skills)


def many_skills(tmp_path: Path, count: int = 20):
    for i in range(count):
        make_skill(tmp_path, f"s{i:02d}", f"name: skill-{i:02d}\ndescription: {'word ' * 60}end {i}")
    return load_skills([("repo", tmp_path)]).skills


def test_list_has_names_descriptions_and_paths_but_no_bodies(tmp_path):
    make_skill(tmp_path, "a", "name: alpha\ndescription: Does alpha things.", "SECRET BODY")
    skills = load_skills([("repo", tmp_path)]).skills
    text, warnings = render_skills_list(skills, context_window=200_000)
    assert text.startswith("<skills>\n") and text.endswith("\n</skills>")
    assert f"- alpha: Does alpha things. ({tmp_path / 'a' / 'SKILL.md'})" in text
    assert "SECRET BODY" not in text
    assert warnings == []
    assert is_contextual_fragment(text)
    assert render_skills_list([], 200_000) == (None, [])


def test_budget_shortens_descriptions_first(tmp_path):
    skills = many_skills(tmp_path)
    full, _ = render_skills_list(skills, 1_000_000)
    window = approx_text_tokens(full) * 50 * 2 // 3  # 2% of it is two thirds of the full list
    text, warnings = render_skills_list(skills, window)
    assert approx_text_tokens(text) <= window * 0.02
    assert "…" in text and "shortened" in text
    assert all(f"skill-{i:02d}:" in text for i in range(20))
    assert len(warnings) == 1 and "descriptions cut to" in warnings[0]


def test_budget_drops_descriptions_then_entries(tmp_path):
    skills = many_skills(tmp_path)
    entry_bytes = sum(len(f"- {s.name} ({s.path})\n") for s in skills)
    # Room for the names, the intro and a note, but not for 40-character descriptions.
    names_only, warnings = render_skills_list(skills, (entry_bytes // 4 + 150) * 50)
    assert "word" not in names_only and "skill-19 (" in names_only and "left out" in names_only
    assert "descriptions left out" in warnings[0]
    budget = entry_bytes // 4 // 2
    cut, warnings = render_skills_list(skills, budget * 50)
    assert approx_text_tokens(cut) <= budget
    assert "skill-00 (" in cut and "skill-19" not in cut
    assert "more skills are not listed" in cut
    assert "not listed:" in warnings[0] and "skill-19" in warnings[0]


def test_dollar_mentions_inject_bodies_in_order_of_mention(tmp_path):
    make_skill(tmp_path, "a", "name: commit\ndescription: c", "Commit body.")
    make_skill(tmp_path, "b", "name: skill-creator\ndescription: s", 'Creator "body".')
    make_skill(tmp_path, "c", "name: unused\ndescription: u", "Unused body.")
    skills = load_skills([("repo", tmp_path)]).skills
    fragments = skill_injections("use $skill-creator, then $commit. Twice: $commit", skills)
    assert fragments == [
        f'<skill name="skill-creator" path="{tmp_path / "b" / "SKILL.md"}">\nCreator "body".\n</skill>',
        f'<skill name="commit" path="{tmp_path / "a" / "SKILL.md"}">\nCommit body.\n</skill>',
    ]
    assert all(is_contextual_fragment(f) for f in fragments)


@pytest.mark.parametrize("text", ["commit now", "$commitment", "price$commit", "$$commit", "$commit-x", "$Commit"])
def test_only_exact_dollar_mentions_count(tmp_path, text):
    make_skill(tmp_path, "a", "name: commit\ndescription: c")
    assert skill_injections(text, load_skills([("repo", tmp_path)]).skills) == []


def test_byte_order_mark_and_crlf_are_accepted(tmp_path):
    path = tmp_path / "win" / "SKILL.md"
    path.parent.mkdir()
    path.write_bytes("\ufeff---\r\nname: win\r\ndescription: from Windows\r\n---\r\nBody\r\n".encode())
    (skill,) = load_skills([("repo", tmp_path)]).skills
    assert (skill.name, skill.description, skill.body) == ("win", "from Windows", "Body")


def test_repository_skills_leading_outside_or_hidden_by_a_read_rule_are_skipped(tmp_path):
    """Issue 33: a skill's text reaches the model, so it passes the same checks as AGENTS.md."""
    outside = tmp_path / "elsewhere"
    (outside / "leak").mkdir(parents=True)
    (outside / "leak" / "SKILL.md").write_text("---\nname: leak\ndescription: d\n---\nouts1de\n")
    skills = tmp_path / "repo" / ".agent" / "skills"
    skills.mkdir(parents=True)
    (skills / "leak").symlink_to(outside / "leak")
    (skills / "secret").mkdir()
    (skills / "secret" / "SKILL.md").write_text("---\nname: secret\ndescription: d\n---\nhidden\n")
    (skills / "plain").mkdir()
    (skills / "plain" / "SKILL.md").write_text("---\nname: plain\ndescription: d\n---\nok\n")

    rule = parse_rule("Read(./.agent/skills/secret/**)", "deny", "-c", tmp_path / "repo")
    permissions = Permissions([rule], tmp_path / "repo")
    loaded = load_skills([("repo", skills)], hidden=permissions.read_denied)
    assert [skill.name for skill in loaded.skills] == ["plain"]
    assert any("outside the repository" in w for w in loaded.warnings)
    assert any("Read(./.agent/skills/secret/**)" in w for w in loaded.warnings)
