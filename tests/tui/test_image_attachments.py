"""A pasted path to an image becomes an attachment chip that can be removed before sending."""

from __future__ import annotations

import io
import json

from PIL import Image as PILImage
from textual import events
from textual.widgets import Button

from agent_cli.tui.pasted_images import pasted_image_paths
from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle


def write_png(path, size) -> None:
    out = io.BytesIO()
    PILImage.new("RGB", size, "green").save(out, "PNG")
    path.write_bytes(out.getvalue())


def test_pasted_text_names_images_only_when_every_word_is_an_image_file(tmp_path):
    (tmp_path / "a b.png").write_bytes(b"x")
    (tmp_path / "c.jpg").write_bytes(b"x")
    (tmp_path / "notes.txt").write_text("x")
    assert pasted_image_paths("'a b.png' c.jpg", tmp_path) == [tmp_path / "a b.png", tmp_path / "c.jpg"]
    assert pasted_image_paths(f"file://{tmp_path}/a%20b.png", tmp_path) == [tmp_path / "a b.png"]
    assert pasted_image_paths("a\\ b.png", tmp_path) == [tmp_path / "a b.png"]
    for text in ("c.jpg notes.txt", "missing.png", "look at c.jpg please", "'unbalanced", ""):
        assert pasted_image_paths(text, tmp_path) == []


async def test_pasted_image_paths_become_chips_that_can_be_removed_before_sending(make_app, server, repo, tmp_path):
    write_png(tmp_path / "keep.png", (30, 20))
    write_png(tmp_path / "drop.png", (8, 8))
    server.script(Reply(text="a green box"))
    app = make_app("model_supports_images=true")
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste(f"{tmp_path / 'keep.png'} {tmp_path / 'drop.png'}"))  # as a terminal pastes
        await pilot.pause()
        assert app.composer.text == "" and [p.name for p in app.attachments.paths] == ["keep.png", "drop.png"]
        await pilot.click(list(app.attachments.query(Button))[1])
        await pilot.pause()
        assert [p.name for p in app.attachments.paths] == ["keep.png"] and app.focused is app.composer
        app.post_message(events.Paste(str(tmp_path / "drop.png")))
        await pilot.pause()
        await pilot.press("backspace")  # in the empty composer: takes the last chip off again
        assert [p.name for p in app.attachments.paths] == ["keep.png"]
        app.post_message(events.Paste("plain words"))  # ordinary text is still pasted as text
        await pilot.pause()
        assert app.composer.text == "plain words"
        await type_text(pilot, "!")
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.attachments.paths == () and not app.attachments.has_class("-visible")
    content = server.requests[0].body["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "plain words!"}
    assert [part["type"] for part in content] == ["text", "image_url"]
    assert "drop.png" not in json.dumps(server.requests[0].body)
