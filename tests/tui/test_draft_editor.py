"""Ctrl+G opens $VISUAL/$EDITOR on the draft; what it writes becomes the draft (issue 35, item 12)."""

from __future__ import annotations

import shlex

from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_until


async def test_ctrl_g_edits_the_draft_in_the_editor(make_app, server, monkeypatch, tmp_path):
    seen = tmp_path / "seen.txt"
    script = f'cp "$0" {shlex.quote(str(seen))}; printf "second line from the editor\\n" >> "$0"'
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"sh -c {shlex.quote(script)}")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "first line typed")
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: "second line" in app.composer.text, what="the edited draft")
        assert app.composer.text == "first line typed\nsecond line from the editor"
        assert not app.busy and not server.requests  # edited, not sent
    assert seen.read_text() == "first line typed\n"
