"""The pieces of agent_cli/lsp/ that need no server: which server speaks for a file, the text
before an edit, what the model reads of diagnostics, and the checks a repository suggests."""

from __future__ import annotations

import json
import random

import pytest

from agent_cli.lsp.diagnostics import Diagnostic, ordered, render
from agent_cli.lsp.documents import text_before
from agent_cli.lsp.servers import check_lsp_table, configured_specs, find_root, servers_for
from agent_cli.lsp.suggest import suggested_checks, suggestion_note
from agent_cli.lsp.tool import bounded, hover_text
from agent_cli.tools.apply_patch import unified_diff


def test_the_first_known_server_found_speaks_unless_the_config_names_some():
    on_path = {"pylsp", "ruff"}.__contains__
    specs = configured_specs(True)
    assert [s.name for s in servers_for("python", specs, lambda c: c if on_path(c) else None)] == ["pylsp"]
    specs = configured_specs({"ruff": {}, "mine": {"command": ["my-ls"], "languages": ["python"]}})
    assert [s.name for s in servers_for("python", specs, lambda c: c)] == ["ruff", "mine"]
    specs = configured_specs({"basedpyright": {"disabled": True}, "pyright": {"disabled": True}})
    assert [s.name for s in servers_for("python", specs, lambda c: c)] == ["pylsp"]


@pytest.mark.parametrize("table", [{"x": 1}, {"x": {"command": "ls"}}, {"x": {"bogus": 1}}, {"x": {"languages": [1]}}])
def test_a_bad_lsp_table_is_an_error_naming_the_key(table):
    with pytest.raises(ValueError, match="lsp.x"):
        check_lsp_table(table, "config.toml")


def test_the_root_is_the_nearest_folder_with_a_marker_inside_the_project(tmp_path):
    (tmp_path / "sub" / "pkg").mkdir(parents=True)
    (tmp_path / "sub" / "go.mod").write_text("")
    assert find_root(tmp_path / "sub" / "pkg" / "a.go", ("go.mod",), tmp_path) == tmp_path / "sub"
    assert find_root(tmp_path / "sub" / "pkg" / "a.go", ("Cargo.toml",), tmp_path) == tmp_path


def test_the_text_before_an_edit_comes_back_from_its_diff():
    rng = random.Random(7)
    for _ in range(500):
        old = [f"line {rng.randint(0, 6)}" for _ in range(rng.randint(0, 25))]
        new = list(old)
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(new))
            if rng.random() < 0.5 or not new or at == len(new):
                new.insert(at, f"new {rng.randint(0, 9)}")
            else:
                del new[at]
        before, after = "\n".join(old) + "\n", "\n".join(new) + "\n"
        diff = unified_diff("f", "f", before.encode(), after.encode())
        assert text_before(after, diff) == before
    assert text_before("other\n", unified_diff("f", "f", b"a\n", b"b\n")) is None  # a diff that does not fit


def diagnostic(severity: int, line: int, message: str) -> Diagnostic:
    return Diagnostic("a.py", line, 1, severity, message, "E1", "srv", "x = y")


def test_errors_come_first_deduplicated_and_within_the_budget():
    found = ordered([diagnostic(2, 1, "warn"), diagnostic(1, 9, "bad"), diagnostic(1, 9, "bad")])
    assert [d.message for d in found] == ["bad", "warn"]
    text = render(found, ["srv"], 1_000)
    assert "(1 error, 1 warning)" in text and text.index("error: bad") < text.index("warning: warn")
    many = [diagnostic(1, n, f"problem number {n} " * 5) for n in range(200)]
    small = render(many, ["srv"], 300)
    assert len(small) < 300 * 4 + 200 and "more not shown (diagnostics budget)" in small


def test_a_repository_suggests_its_checks(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n[tool.pytest.ini_options]\n")
    assert suggested_checks(tmp_path) == {"lint": "ruff check", "test": "python -m pytest -q"}
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "vitest", "lint": "eslint ."}}))
    (tmp_path / "Makefile").write_text("all:\n\ttrue\ntest: all\n\tpytest\n")
    assert suggested_checks(tmp_path) == {"test": "make test", "lint": "npm run lint"}
    note = suggestion_note(tmp_path, {"lint": "custom", "test": None})
    assert note is not None and 'test_command = "make test"' in note and "lint_command" not in note
    assert suggestion_note(tmp_path / "nothing", {}) is None


def test_the_lsp_tool_s_output_is_bounded():
    assert bounded([f"a.py:{n}:1: x" for n in range(120)], "none").endswith("…70 more not shown")
    assert bounded([], "no results") == "no results"
    long = hover_text({"contents": {"kind": "markdown", "value": "doc " * 2_000}})
    assert len(long) < 3_100 and long.endswith("…(cut)")
    assert hover_text({"contents": ["a", {"language": "python", "value": "b"}]}) == "a\n\nb"
    assert hover_text(None) == "no hover information"
