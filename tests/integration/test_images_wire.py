"""Images end to end through the fake server: what each provider receives on the wire, the note for
a model without vision, resume, compaction, and `agent exec -i`."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image as PILImage

from agent_cli import events as ev
from agent_cli.context.tokens import anthropic_image_tokens, openai_image_tokens
from agent_cli.runtime import open_session
from agent_cli.session import Session
from agent_cli.session.resume import restore
from tests import session_helpers
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events

WIRE_PROVIDERS = {"responses": "openai", "chat": "openai-chat", "anthropic": "anthropic"}


def png(width: int, height: int, color: str = "red") -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (width, height), color).save(out, "PNG")
    return out.getvalue()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "photo.png").write_bytes(png(40, 30, "blue"))
    (root / "shot.png").write_bytes(png(2200, 1100))  # resized to 2048 x 1024 on the way
    return root


def make_session(server, repo: Path, monkeypatch, provider: str, *overrides: str) -> Session:
    # "test-model" has no tokenizer to load; the override gives it vision unless a test says otherwise.
    overrides = overrides or ("model_supports_images=true",)
    return session_helpers.make_session(server, repo, monkeypatch, *overrides, provider=provider)


def decoded_size(b64: str) -> tuple[int, int]:
    return PILImage.open(io.BytesIO(base64.b64decode(b64))).size


def data_url_size(url: str) -> tuple[int, int]:
    assert url.startswith("data:image/png;base64,")
    return decoded_size(url.split(",", 1)[1])


def sent_images(body: dict, wire: str) -> dict[str, list[tuple[int, int]]]:
    """The sizes of the images in the request, by where they travel: "user" or "tool"."""
    found: dict[str, list[tuple[int, int]]] = {"user": [], "tool": []}
    if wire == "responses":
        for entry in body["input"]:
            if entry.get("type") == "message":
                found["user"] += [data_url_size(p["image_url"]) for p in entry["content"] if p["type"] == "input_image"]
            elif entry.get("type") == "function_call_output" and isinstance(entry["output"], list):
                found["tool"] += [data_url_size(p["image_url"]) for p in entry["output"] if p["type"] == "input_image"]
    elif wire == "chat":
        after_tool = False
        for message in body["messages"]:
            content = message.get("content")
            if message["role"] == "tool":
                assert isinstance(content, str), "tool messages carry text only"
                after_tool = True
                continue
            if isinstance(content, list):
                where = "tool" if after_tool else "user"
                found[where] += [data_url_size(p["image_url"]["url"]) for p in content if p["type"] == "image_url"]
            after_tool = False
    else:
        for turn in body["messages"]:
            for block in turn["content"] if isinstance(turn["content"], list) else []:
                if block["type"] == "image":
                    assert block["source"]["type"] == "base64"
                    found["user"].append(decoded_size(block["source"]["data"]))
                elif block["type"] == "tool_result" and isinstance(block["content"], list):
                    found["tool"] += [
                        decoded_size(b["source"]["data"]) for b in block["content"] if b["type"] == "image"
                    ]
    return found


@pytest.mark.parametrize("wire", list(WIRE_PROVIDERS))
async def test_each_provider_receives_attached_and_tool_images_as_base64(server, repo, monkeypatch, wire):
    session = make_session(server, repo, monkeypatch, WIRE_PROVIDERS[wire])
    server.script(Reply(tool_calls=[ToolCall("read_file", {"path": "shot.png"})]), Reply(text="a red rectangle"))
    events = await collect_events(session, "compare @photo.png with shot.png")
    assert events[-1] == ev.TurnComplete("a red rectangle")
    first, second = server.requests
    assert sent_images(first.body, wire) == {"user": [(40, 30)], "tool": []}
    assert sent_images(second.body, wire) == {"user": [(40, 30)], "tool": [(2048, 1024)]}
    output = next(e for e in events if isinstance(e, ev.ToolCallEnd)).output
    assert output == "[image: shot.png, 2048 x 1024, resized from 2200 x 1100]"
    assert "photo.png" in str(second.raw) and "attached_file" not in str(second.raw)  # not inlined as text
    images = sorted(p.suffix for p in (session.config.agent_home / "images").iterdir())
    assert images == [".png", ".png"]
    usage = next(e for e in await collect_events(session, "/context") if isinstance(e, ev.ContextUsage))
    parts = {part.name: part.tokens for part in usage.parts}
    formula = anthropic_image_tokens if wire == "anthropic" else openai_image_tokens  # each provider's own
    assert parts["images"] == formula(40, 30) + formula(2048, 1024)


async def test_a_model_without_vision_gets_a_note_and_the_user_is_told_once(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch, "openai-chat", "model_supports_images=false")
    server.script(Reply(text="I cannot see it"), Reply(text="still blind"))
    first = await collect_events(session, "what is in @photo.png")
    second = await collect_events(session, "and now?")
    warnings = [e.message for e in first + second if isinstance(e, ev.Warning)]
    assert len([w for w in warnings if "cannot see images" in w]) == 1
    for request in server.requests:
        assert sent_images(request.body, "chat") == {"user": [], "tool": []}
        user = next(m for m in request.body["messages"] if m["role"] == "user" and "photo.png" in str(m["content"]))
        assert user["content"].endswith("[image: photo.png, 40 x 30] (not shown: test-model cannot see images)")


async def test_resume_restores_the_image_from_the_store(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch, "openai-chat")
    server.script(Reply(text="blue"), Reply(text="still blue"))
    await collect_events(session, "colour of @photo.png?")
    path = session.rollout.path
    await session.aclose()
    assert b"base64" not in path.read_bytes()  # the session file refers to the stored image
    (repo / "photo.png").unlink()  # the original is gone; the stored copy remains

    restored = restore(open_session(session.config, interactive=False), path)
    await collect_events(restored, "sure?")
    await restored.aclose()
    assert sent_images(server.requests[-1].body, "chat") == {"user": [(40, 30)], "tool": []}


async def test_compaction_replaces_older_images_with_placeholders(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch, "openai-chat")
    server.script(
        Reply(tool_calls=[ToolCall("read_file", {"path": "shot.png"})]),
        Reply(text="red"),
        Reply(text="## Summary\nThe user showed a red screenshot."),
        Reply(text="ok"),
    )
    await collect_events(session, "what colour is shot.png?")
    compacted = [event async for event in session.compact()]
    assert any(isinstance(e, ev.CompactionFinished) and e.applied for e in compacted)
    await collect_events(session, "thanks")
    await session.aclose()
    last = server.requests[-1].body
    assert sent_images(last, "chat") == {"user": [], "tool": []}
    assert "[image: shot.png, 2048 x 1024]" in str(last["messages"])


def test_exec_attaches_images_with_dash_i(server, repo):
    server.script(Reply(text="two pictures"))
    result = run_agent(
        [
            "exec",
            "--provider",
            "openai-chat",
            "-m",
            "test-model",
            "-c",
            "model_supports_images=true",
            "-i",
            "photo.png",
            "--image",
            str(repo / "shot.png"),
            "describe them",
        ],
        cwd=repo,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "two pictures"
    assert sent_images(server.requests[0].body, "chat") == {"user": [(40, 30), (2048, 1024)], "tool": []}
    missing = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "test-model", "-i", "nope.png", "hi"],
        cwd=repo,
        env=provider_env(server, "openai-chat"),
    )
    assert missing.returncode == 2 and "-i nope.png: no such file" in missing.stderr


async def test_an_unreadable_attached_image_rejects_the_input_and_sends_nothing(server, repo, monkeypatch):
    (repo / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 50)
    session = make_session(server, repo, monkeypatch, "openai-chat")
    events = await collect_events(session, "what is in @broken.png")
    rejected = [e for e in events if isinstance(e, ev.InputRejected)]
    assert (
        len(rejected) == 1 and "cannot attach" in rejected[0].message and "not a readable image" in rejected[0].message
    )
    assert not server.requests and len(session.history) == 0
