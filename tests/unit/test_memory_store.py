"""The memory stores: the write gate, near duplicates, scopes, two writers, a corrupt database."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent_cli.memory.book import MemoryBook, project_db_path, session_memory_path
from agent_cli.memory.gate import MAX_CHARS, check_text
from agent_cli.memory.model import MemoryError, parse_ref
from agent_cli.memory.ranking import rank
from agent_cli.memory.store import MemoryStore
from agent_cli.memory.transfer import export_lines, import_lines
from agent_cli.session.memory_recall import injected_refs, render_fragment


@pytest.fixture
def book(tmp_path) -> MemoryBook:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    session_file = tmp_path / "sessions" / "120000-abc.jsonl"
    book = MemoryBook(tmp_path / "home", repo / "src", lambda: session_file)
    yield book
    book.close()


# --- the gate -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx",
        "the db password is hunter2x9",
        "GITHUB_TOKEN: ghp_abcdefghijklmnopqrstuvwxyz0123",
        "deploy token = 9f8e7d6c5b4a39f8e7d6",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
        "aws key AKIAIOSFODNN7EXAMPLE",
        "use this: Zx9qLm2Vt7Rb4Kp8Wn3Hc6Jd1Fs5Gy0Q",
    ],
)
def test_the_gate_refuses_secrets(text):
    with pytest.raises(MemoryError, match="refused: it looks like it contains"):
        check_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "API keys live in 1Password, never in .env files",
        "The password policy is enforced by the auth service",
        "Release commit was 3f2c1e0d9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e",
        "Run tests with `pytest -x -q tests/unit`",
        "The primary key of orders is id",
    ],
)
def test_the_gate_lets_ordinary_facts_through(text):
    assert check_text(f"  {text} \n") == text


def test_the_gate_refuses_empty_and_oversized_text():
    with pytest.raises(MemoryError, match="empty"):
        check_text("   ")
    with pytest.raises(MemoryError, match="at most 1,000"):
        check_text("word " * MAX_CHARS)


def test_a_refused_save_stores_nothing(book):
    with pytest.raises(MemoryError, match="refused"):
        book.save("STRIPE_SECRET_KEY=sk_live_abcdefghijklmnop1234")
    assert book.counts() == {"session": 0, "project": 0, "user": 0}


# --- duplicates ---------------------------------------------------------------------------------


def test_a_near_duplicate_updates_the_memory_instead_of_adding(book):
    first = book.save("Use pnpm to install dependencies, not npm", tags=["tooling"], confidence=0.6)
    again = book.save("use pnpm to install the dependencies (not npm).", tags=["js"], source="model", confidence=0.9)
    assert not first.updated and again.updated
    assert again.memory.ref == first.memory.ref == "p1"
    assert again.memory.text == "use pnpm to install the dependencies (not npm)."
    assert again.memory.tags == ("tooling", "js") and again.memory.confidence == 0.9
    other = book.save("Use pnpm workspaces for the monorepo packages")
    assert not other.updated and book.counts()["project"] == 2


def test_the_same_text_in_another_scope_is_not_a_duplicate(book):
    book.save("Prefer tabs", "user")
    assert not book.save("Prefer tabs", "project").updated


# --- scopes -------------------------------------------------------------------------------------


def test_scopes_live_where_they_should(book, tmp_path):
    book.save("user fact about editors", "user")
    book.save("project fact about the build", "project")
    book.save("session fact about this bug", "session")
    home = tmp_path / "home"
    assert (home / "memory" / "user.db").is_file()
    project = project_db_path(home, tmp_path / "repo" / "src")
    assert project == project_db_path(home, tmp_path / "repo")  # the git root names the project
    assert project.is_file()
    # the root is recorded inside the project database
    assert MemoryStore("project", project)._db.execute("SELECT value FROM meta WHERE key='root'").fetchone()[0] == str(
        tmp_path / "repo"
    )
    saved = json.loads(session_memory_path(tmp_path / "sessions" / "120000-abc.jsonl").read_text())
    assert [record["text"] for record in saved] == ["session fact about this bug"]


def test_the_session_scope_comes_back_with_the_session_file(book, tmp_path):
    book.save("first session note on the flaky test", "session")
    book.save("second session note about retries", "session")
    book.forget("s1")
    again = MemoryBook(tmp_path / "home", tmp_path / "repo", lambda: tmp_path / "sessions" / "120000-abc.jsonl")
    assert [m.ref for m in again.newest(["session"])["session"]] == ["s2"]  # ids kept: fragments refer to them
    assert again.save("third session note on caching", "session").memory.ref == "s3"
    fresh = MemoryBook(tmp_path / "home", tmp_path / "repo", lambda: tmp_path / "sessions" / "other.jsonl")
    assert fresh.counts()["session"] == 0
    again.close()
    fresh.close()


def test_another_project_does_not_see_this_projects_memories(book, tmp_path):
    book.save("project fact about the build", "project")
    book.save("user fact about the build", "user")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = MemoryBook(tmp_path / "home", elsewhere)
    assert [s.memory.ref for s in other.search("build")] == ["u1"]
    other.close()


def test_recall_ranks_across_scopes_skips_injected_and_counts_use(book):
    book.save("The build cache lives in .cache/build", "user")
    book.save("Clear the build cache with make clean-cache", "project")
    book.save("nothing relevant here at all", "session")
    recalled = book.recall("how do I clear the build cache?")
    assert [s.memory.ref for s in recalled] == ["p1", "u1"]
    assert book.get("p1").use_count == 1 and book.get("p1").last_used
    assert [s.memory.ref for s in book.recall("clear the build cache", exclude={"p1"})] == ["u1"]
    assert book.recall("the weather in Paris") == []
    fragment = render_fragment(recalled)
    assert fragment.startswith("<memories>\n- [p1] Clear the build cache") and fragment.endswith("</memories>")
    from agent_cli.items import user

    assert injected_refs([user("hi"), user(fragment)]) == {"p1", "u1"}


def test_ids_are_checked(book):
    assert parse_ref("P12") == ("project", 12)
    for bad in ("12", "x1", "p", "p1x"):
        with pytest.raises(MemoryError, match="not a memory id"):
            parse_ref(bad)
    with pytest.raises(MemoryError, match="no memory u7"):
        book.forget("u7")


def test_export_then_import_round_trips_and_reports_bad_lines(book, tmp_path):
    book.save("Format with ruff format before committing", "project", tags=["style"])
    book.save("I like short answers", "user")
    lines = list(export_lines(book))
    assert [json.loads(line)["id"] for line in lines] == ["p1", "u1"]
    other = MemoryBook(tmp_path / "home2", tmp_path)
    report = import_lines(other, [*lines, "not json", json.dumps({"text": "token=abcdef123456789"}), "", lines[0]])
    assert (report.added, report.updated) == (2, 1)
    assert [p.split(":")[0] for p in report.problems] == ["line 3", "line 4"]
    assert other.get("p1").tags == ("style",) and other.get("u1").source == "import"
    other.close()


# --- two writers, a damaged file ----------------------------------------------------------------

WRITER = """
import sys
from pathlib import Path
from agent_cli.memory.book import MemoryBook
home, cwd, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
book = MemoryBook(home, cwd)
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
for i in range(40):
    book.save(f"{name}{words[i % 10]} {name}{words[i // 10]} {name}{i}", "user")  # 3 words of 3 differ
    if i == 20:
        book.save("The shared build cache lives in /var/cache/build", "user")
print("done")
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    home = tmp_path / "home"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), str(tmp_path), name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    results = [proc.communicate(timeout=60) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], results
    book = MemoryBook(home, tmp_path)
    assert book.counts()["user"] == 81  # 40 each, and the shared fact once
    assert book.store("user")._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    book.close()


def test_a_corrupt_database_is_moved_aside_and_a_new_one_started(book, tmp_path):
    path = tmp_path / "home" / "memory" / "user.db"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    saved = book.save("Prefer small commits", "user")
    assert saved.memory.ref == "u1"
    [warning] = book.take_warnings()
    assert "damaged" in warning and "moved to user.db.corrupt-" in warning
    [aside] = path.parent.glob("user.db.corrupt-*")
    assert aside.read_bytes().startswith(b"this is not a database")
    assert book.counts()["user"] == 1


def test_corruption_found_while_working_is_recovered_too(tmp_path):
    path = tmp_path / "user.db"
    store = MemoryStore("user", path)
    store.add("a fact about the release process")
    store.close()
    data = bytearray(path.read_bytes())
    page = data.index(b"release process") // 4096 * 4096  # the page holding the row: the schema stays readable
    data[page : page + 4096] = b"\xff" * 4096
    path.write_bytes(bytes(data))
    book = MemoryBook(tmp_path / "home", tmp_path)
    book._stores["user"] = MemoryStore("user", path)
    assert book.store("user").warning is None  # it opened fine
    assert book.search("release", ["user"]) == []
    assert any("damaged" in w for w in book.take_warnings())
    assert list(tmp_path.glob("user.db.corrupt-*"))
    book.close()


def test_rank_is_importable_without_a_database():
    assert rank(frozenset(), []) == []


def test_a_session_does_not_load_sqlite_until_memory_is_used(tmp_path):
    code = f"""
import sys
from pathlib import Path
from agent_cli.config import load_config
from agent_cli.runtime import open_session
session = open_session(load_config(Path({str(tmp_path)!r}), ['model_provider="openai-chat"', 'model="m"']), interactive=False)
names = [spec.name for spec in session.tool_specs()]
assert "memory_save" in names and "## Memory" in session.instructions
print("sqlite3" in sys.modules)
session.memory.warm()
print("sqlite3" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "AGENT_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
