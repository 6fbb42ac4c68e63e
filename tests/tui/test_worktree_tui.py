"""`/worktree` and `/rename` in the app, and the question when a session in a changed worktree ends."""

from __future__ import annotations

import io

from agent_cli.headless.worktree_cmd import leave_after_tui
from agent_cli.store.names import session_names
from agent_cli.tui.widgets.notice_cell import NoticeCell
from agent_cli.worktrees import store
from agent_cli.worktrees.entering import open_worktree
from tests.tui.conftest import SIZE
from tests.tui.helpers import wait_idle, wait_until
from tests.worktree_helpers import agent_branches, checkout_state, git


def notices(app) -> list[str]:
    return [cell.text for cell in app.transcript.query(NoticeCell)]


async def approve_the_write(app, pilot) -> str:
    """A new worktree writes the repository's .git: asked as a patch writing it would be (issue 45)."""
    from agent_cli.tui.screens.approval import ApprovalScreen

    await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the question")
    await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
    summary = app.screen.request.summary
    await pilot.press("y")
    return summary


async def test_worktree_shows_switches_and_sets_up_and_rename_names_the_session(
    make_app, repo, isolated_home, monkeypatch
):
    monkeypatch.setattr(store, "_held", {})  # only this test's worktrees are this "process's"
    git(repo, "commit", "-qm", "first")
    before = checkout_state(repo)
    app = make_app('worktree.setup="echo set > up.txt"', 'worktree.copy=["ignored.txt"]')
    async with app.run_test(size=SIZE) as pilot:
        app.send("/worktree")
        await wait_idle(pilot)
        assert any("runs in the checkout itself" in text for text in notices(app))
        old = app.session
        app.send("/worktree feat")
        assert "git worktree add -b agent/feat" in await approve_the_write(app, pilot)
        await wait_until(pilot, lambda: app.session is not old, what="the switch")
        await wait_idle(pilot)
        path = isolated_home / "worktrees"
        folder = app.config.cwd
        assert folder.is_relative_to(path) and folder.name == "feat"
        assert app.session.config.cwd == folder and app.composer.cwd == folder
        await wait_until(pilot, lambda: (folder / "up.txt").exists(), what="the set-up command")
        assert (folder / "up.txt").read_text() == "set\n"
        assert (folder / "ignored.txt").read_text() == "not for completion\n"  # copied: git ignores it
        app.send("/worktree")
        await wait_idle(pilot)
        assert any("runs in worktree feat: branch agent/feat" in text for text in notices(app))
        app.send("/rename parallel work")
        await wait_idle(pilot)
        assert session_names(isolated_home)[app.session.id] == "parallel work"
    assert checkout_state(repo) == before and not (repo / "up.txt").exists()
    out = io.StringIO()
    leave_after_tui(None, Terminal("r\n"), out)  # the app quit: a worktree /worktree made is asked about too
    assert "Worktree feat has 2 uncommitted changes" in out.getvalue()  # up.txt, ignored.txt
    assert "removed worktree feat" in out.getvalue() and not folder.exists()


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_leaving_asks_about_a_changed_worktree_and_removes_a_clean_one(repo, isolated_home, monkeypatch):
    monkeypatch.setattr(store, "_held", {})
    git(repo, "commit", "-qm", "first")
    clean = open_worktree("clean", cwd=repo, agent_home=isolated_home)
    out = io.StringIO()
    leave_after_tui(clean, Terminal(""), out)
    assert "removed worktree clean" in out.getvalue() and not clean.worktree.path.exists()

    changed = open_worktree("changed", cwd=repo, agent_home=isolated_home)
    (changed.worktree.path / "README.md").write_text("edited\n")
    out = io.StringIO()
    leave_after_tui(changed, Terminal("\n"), out)  # Enter keeps it
    assert "Keep it? [K]eep / [r]emove" in out.getvalue() and "kept worktree changed" in out.getvalue()
    assert changed.worktree.path.is_dir()
    out = io.StringIO()
    leave_after_tui(changed, Terminal("r\n"), out)
    assert "removed worktree changed" in out.getvalue() and not changed.worktree.path.exists()
    assert agent_branches(repo) == []


async def test_worktree_carries_the_trust_answer_over(make_app, repo, isolated_home, monkeypatch):
    from agent_cli.trust.gate import record_answer

    monkeypatch.setattr(store, "_held", {})
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[[hooks.Stop]]\ncommand = "true"\n')
    git(repo, "add", ".agent/config.toml")
    git(repo, "commit", "-qm", "first")
    app = make_app()
    record_answer(app.config, True)  # as the trust question's yes does
    async with app.run_test(size=SIZE) as pilot:
        old = app.session
        app.send("/worktree trusted")
        await approve_the_write(app, pilot)
        await wait_until(pilot, lambda: app.session is not old, what="the switch")
        await wait_idle(pilot)
        assert app.config.cwd.name == "trusted"
        assert app.session.trust.trusted and not app.session.trust.needs_question
        assert app.session.config.sources[-1] == app.config.cwd / ".agent" / "config.toml"  # read there


async def test_resume_follows_the_session_into_its_worktree(make_app, make_config, repo, server, monkeypatch):
    from agent_cli.commands.conversation import submit
    from agent_cli.commands.worktree_commands import config_in
    from agent_cli.runtime import open_session
    from tests.fake_server import Reply

    monkeypatch.setattr(store, "_held", {})
    git(repo, "commit", "-qm", "first")
    entered = open_worktree("away", cwd=repo)
    server.script(Reply(text="worked away"))
    session = open_session(config_in(make_config(), entered.cwd), interactive=True)
    async for _ in submit(session, "work in the worktree"):
        pass
    await session.aclose()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send(f"/resume {session.id}")
        await wait_until(pilot, lambda: app.session.id == session.id, what="the resume")
        await wait_idle(pilot)
        assert app.config.cwd == entered.cwd == app.session.config.cwd and app.composer.cwd == entered.cwd
