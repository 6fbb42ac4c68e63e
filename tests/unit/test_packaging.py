"""The wheel ships every package, the prompts and the skills."""

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_python_package_is_listed_in_pyproject():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(path.parent.relative_to(REPO).parts)
        for path in (REPO / "agent_cli").rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert found - listed == set(), "add these packages to [tool.setuptools] packages"
    assert config["package-dir"] == {"agent_cli.bundled.prompts": "prompts", "agent_cli.bundled.skills": "skills"}


def test_bundled_prompts_and_skills_exist_at_the_top_level():
    assert (REPO / "prompts" / "system.md").is_file()
    assert list((REPO / "skills").glob("*/SKILL.md"))
