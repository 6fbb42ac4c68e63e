"""Images: preparing them for providers, the store, items, tokens and the stand-ins (pure parts)."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys

import pytest
from PIL import Image as PILImage

from agent_cli.context.compact import rebuild_history, transcript
from agent_cli.context.image_items import OLD_IMAGES_HEADING, without_images
from agent_cli.context.tokens import TokenCounter, anthropic_image_tokens, openai_image_tokens
from agent_cli.files.detect import IMAGE, TEXT, detect, image_mime_type
from agent_cli.files.images import MAX_BASE64_BYTES, ImageError, load_image, prepare_image, restore_images, stored_path
from agent_cli.items import Image, Message, ToolCall, ToolOutput, item_from_dict, item_to_dict, user
from agent_cli.models.anthropic_messages import anthropic_messages
from agent_cli.models.model_info import image_token_formula, supports_images
from agent_cli.models.openai_chat import chat_messages
from agent_cli.models.openai_responses import input_items
from agent_cli.tools.base import ToolContext, ToolError
from agent_cli.tools.image_result import image_tool_result
from agent_cli.tools.read_file import ReadFileTool
from tests.conftest import REPO


def picture(width: int, height: int, fmt: str = "PNG", mode: str = "RGB", noise: bool = False) -> bytes:
    image = (
        PILImage.frombytes(mode, (width, height), os.urandom(width * height * len(mode)))
        if noise
        else PILImage.new(mode, (width, height), "red")
    )
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def size_of(data: bytes) -> tuple[int, int]:
    return PILImage.open(io.BytesIO(data)).size


# --- preparing -----------------------------------------------------------------------------------


def test_a_small_png_is_sent_as_it_is():
    data = picture(40, 30)
    prepared = prepare_image(data)
    assert (prepared.data, prepared.mime_type, prepared.width, prepared.height) == (data, "image/png", 40, 30)
    assert not prepared.resized


def test_a_large_image_is_resized_to_2048_on_the_long_side_keeping_jpeg():
    prepared = prepare_image(picture(4000, 1000, "JPEG"))
    assert (prepared.width, prepared.height) == (2048, 512) and prepared.mime_type == "image/jpeg"
    assert size_of(prepared.data) == (2048, 512) and prepared.original_size == (4000, 1000)


def test_an_image_over_5_mb_is_reencoded_until_its_base64_fits():
    data = picture(1400, 1400, noise=True)  # random pixels: PNG cannot compress them
    assert len(data) * 4 / 3 > MAX_BASE64_BYTES
    prepared = prepare_image(data)
    assert prepared.mime_type == "image/jpeg" and len(base64.b64encode(prepared.data)) <= MAX_BASE64_BYTES


def test_formats_providers_do_not_take_become_png_and_transparency_survives():
    prepared = prepare_image(picture(10, 10, "BMP"))
    assert prepared.mime_type == "image/png" and size_of(prepared.data) == (10, 10)
    big = prepare_image(picture(3000, 10, "PNG", mode="RGBA"))
    assert big.mime_type == "image/png" and PILImage.open(io.BytesIO(big.data)).mode == "RGBA"


def test_unreadable_data_is_an_image_error():
    with pytest.raises(ImageError, match="not a readable image"):
        prepare_image(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    with pytest.raises(ImageError) as caught:
        prepare_image(b"not an image at all")
    assert str(caught.value) == "not a readable image (Pillow does not recognize its format)"  # no object reprs


# --- the store and items -------------------------------------------------------------------------


def test_an_image_is_stored_once_under_its_hash_and_items_refer_to_it(tmp_path):
    data = picture(12, 8)
    first = load_image(data, tmp_path, "shot.png")
    second = load_image(data, tmp_path, "again.png")
    assert first.sha256 == second.sha256 and list((tmp_path / "images").iterdir()) == [stored_path(tmp_path, first)]
    assert stored_path(tmp_path, first).name == f"{first.sha256}.png"
    message = Message("user", "look", images=(first,))
    line = json.dumps(item_to_dict(message))
    assert "data" not in line and first.sha256 in line  # the file holds the reference only
    assert item_from_dict(json.loads(line)) == message
    assert item_to_dict(user("x")) == {"type": "message", "role": "user", "text": "x"}  # no images key


def test_malformed_image_references_are_value_errors():
    with pytest.raises(ValueError, match="images"):
        item_from_dict({"type": "message", "role": "user", "text": "x", "images": "nope"})
    with pytest.raises(ValueError, match="width"):
        item_from_dict(
            {
                "type": "tool_output",
                "call_id": "c",
                "output": "",
                "images": [{"sha256": "a", "mime_type": "image/png", "width": "wide", "height": 1}],
            }
        )


def test_restore_reads_the_bytes_back_and_warns_about_missing_ones(tmp_path):
    kept = load_image(picture(5, 5), tmp_path, "kept.png")
    lost = load_image(picture(6, 6), tmp_path, "lost.png")
    stored_path(tmp_path, lost).unlink()
    saved = [item_from_dict(item_to_dict(ToolOutput("c", "", images=(kept, lost))))]
    assert saved[0].images[0].data is None
    restored, warnings = restore_images(saved, tmp_path)
    assert restored[0].images[0].data == kept.data and restored[0].images[1].data is None
    assert len(warnings) == 1 and "lost.png" in warnings[0]


# --- tokens --------------------------------------------------------------------------------------


def test_token_formulas_follow_each_provider():
    assert openai_image_tokens(512, 512) == 85 + 170  # one tile
    assert openai_image_tokens(1024, 1024) == 85 + 170 * 4  # 768 x 768: four tiles
    assert openai_image_tokens(4096, 2048) == 85 + 170 * 6  # 2048 x 1024 -> 1536 x 768
    assert anthropic_image_tokens(750, 100) == 100
    assert anthropic_image_tokens(1000, 1000) == 1334
    assert anthropic_image_tokens(4000, 4000) == pytest.approx(1_150_000 / 750, abs=2)  # scaled down first


def test_the_counter_adds_images_by_the_models_formula_or_a_note_without_vision():
    image = Image("h", "image/png", 1000, 1000)
    message = Message("user", "", images=(image,))
    plain = TokenCounter().item_tokens(Message("user", ""))
    assert TokenCounter(None, "openai").item_tokens(message) - plain == openai_image_tokens(1000, 1000)
    assert TokenCounter(None, "anthropic").item_tokens(message) - plain == 1334
    assert image_token_formula("claude-sonnet-4-5") == "anthropic" and image_token_formula("gpt-4o") == "openai"
    blind = TokenCounter()
    blind.vision = False
    assert blind.item_tokens(message) - plain < 50


def test_vision_comes_from_the_model_table():
    assert supports_images("gpt-4o-2024-08-06") and supports_images("claude-sonnet-4-5")
    assert supports_images("openai/gpt-5") and supports_images("qwen2.5vl:7b")
    assert not supports_images("gpt-3.5-turbo") and not supports_images("o1-mini")
    assert not supports_images("qwen3:8b") and not supports_images("some-unknown-model")


# --- stand-ins -----------------------------------------------------------------------------------


def test_a_model_without_vision_gets_a_note_in_place_of_each_image():
    image = Image("h", "image/png", 30, 20, "shot.png", data=b"x")
    described = "[image: shot.png, 30 x 20, resized from 60 x 40]"  # what read_file says beside it
    items, replaced = without_images(
        [
            Message("user", "see", images=(image,)),
            ToolOutput("c", "", images=(image,)),
            ToolOutput("d", described, images=(image,)),
        ],
        "tiny-model",
    )
    assert replaced == 3
    assert items[0] == Message("user", "see\n[image: shot.png, 30 x 20] (not shown: tiny-model cannot see images)")
    assert items[1].output == "[image: shot.png, 30 x 20] (not shown: tiny-model cannot see images)"
    assert items[2].output == f"{described}\n(shot.png is not shown: tiny-model cannot see images)"
    assert not items[1].images and not items[2].images


def test_compaction_names_the_images_it_drops_and_keeps_those_of_kept_messages():
    old = Image("o", "image/png", 800, 600, "old.png", data=b"o")
    tool = Image("t", "image/png", 64, 64, "icon.png", data=b"t")
    new = Image("n", "image/png", 10, 10, "new.png", data=b"n")
    old_message = Message("user", "x " * 5000, images=(old,))  # too long to be kept
    history = [old_message, ToolOutput("c", "read", images=(tool,)), Message("user", "now this", images=(new,))]
    rebuilt = rebuild_history(
        [], history, "summary", budget=100, count=lambda text: len(text) // 4, summary_prefix="PREFIX"
    )
    kept, summary = rebuilt.items[:-1], rebuilt.items[-1]
    assert [image.name for item in kept for image in item.images] == ["new.png"]
    assert not summary.images
    assert summary.text.endswith(f"{OLD_IMAGES_HEADING}\n[image: old.png, 800 x 600]\n[image: icon.png, 64 x 64]")
    assert "[image: icon.png, 64 x 64]" in transcript(history)  # the fallback excerpt names them too


# --- tool outputs --------------------------------------------------------------------------------


async def test_read_file_returns_an_image_and_refuses_a_broken_one(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "home")
    (tmp_path / "pic.webp").write_bytes(picture(30, 20, "WEBP"))
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    result = await ReadFileTool().run({"path": "pic.webp"}, ctx)
    assert result.output == "[image: pic.webp, 30 x 20]"
    assert [(i.mime_type, i.width, i.height) for i in result.images] == [("image/webp", 30, 20)]
    assert stored_path(ctx.data_dir, result.images[0]).read_bytes() == result.images[0].data
    with pytest.raises(ToolError, match=r"broken.png \(image/png\): not a readable image"):
        await ReadFileTool().run({"path": "broken.png"}, ctx)


@pytest.mark.parametrize(
    "fmt, mime",
    [
        ("PNG", "image/png"),
        ("JPEG", "image/jpeg"),
        ("GIF", "image/gif"),
        ("WEBP", "image/webp"),
        ("BMP", "image/bmp"),
        ("TIFF", "image/tiff"),
    ],
)
def test_image_bytes_are_named_by_their_magic_number(tmp_path, fmt, mime):
    data = picture(4, 4, fmt)
    assert image_mime_type(data[:16]) == mime
    if fmt != "BMP":  # "BM" alone does not make a file an image: it may start a line of text
        assert detect(tmp_path / "unnamed", data[:16]).kind == IMAGE
    assert detect(tmp_path / "notes", b"BMW parts list\n").kind == TEXT
    assert image_mime_type(b"%PDF-1.7") is None and image_mime_type(b"RIFF\0\0\0\0WAVE") is None


def test_the_tool_output_helper_builds_an_image_result_from_bytes(tmp_path):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path)
    result = image_tool_result(picture(3000, 300), "image/png", ctx, name="screenshot", text="Captured.")
    assert result.output == "Captured.\n[image: screenshot, 2048 x 205, resized from 3000 x 300]"
    assert result.images[0].name == "screenshot" and result.success
    with pytest.raises(ToolError, match="not a readable image"):
        image_tool_result(b"nope", "image/png", ctx, name="x")


def test_sessions_that_attach_no_image_never_import_pillow():
    code = (
        "import sys; import agent_cli.session, agent_cli.commands.conversation, agent_cli.tools.read_file; "
        "from agent_cli.session import Session; print('PIL' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.stdout.strip() == "False", done.stderr


# --- wire details --------------------------------------------------------------------------------


def test_chat_sends_a_batchs_tool_images_after_all_of_its_tool_messages():
    image = Image("h", "image/png", 2, 2, "a.png", data=b"\x89PNG")
    history = [
        user("go"),
        ToolCall("c1", "read_file", "{}"),
        ToolCall("c2", "read_file", "{}"),
        ToolOutput("c1", "[image: a.png, 2 x 2]", images=(image,)),
        ToolOutput("c2", "text"),
    ]
    messages = chat_messages("", history)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[-1]["content"] == [
        {"type": "text", "text": "Images returned by tool call c1:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(b"\x89PNG").decode()}},
    ]


def test_an_image_whose_file_is_gone_is_sent_as_its_placeholder_on_every_wire():
    lost = Image("h", "image/png", 3, 4, "gone.png")  # restored without data
    message = Message("user", "see", images=(lost,))
    note = "[image: gone.png, 3 x 4] (the image file is no longer available)"
    assert input_items([message])[0]["content"][1] == {"type": "input_text", "text": note}
    assert chat_messages("", [message])[0]["content"][1] == {"type": "text", "text": note}
    assert anthropic_messages([message])[0]["content"][1]["text"] == note


def test_a_rotated_photo_is_turned_upright_when_resized_and_huge_pictures_are_refused():
    photo = PILImage.new("RGB", (3000, 1000), "red")
    exif = photo.getexif()
    exif[0x0112] = 6  # EXIF orientation: rotate 90 degrees to display
    out = io.BytesIO()
    photo.save(out, "JPEG", exif=exif)
    prepared = prepare_image(out.getvalue())
    assert (prepared.width, prepared.height) == (683, 2048) == size_of(prepared.data)
    header_only = io.BytesIO()
    PILImage.new("1", (8_000, 8_000)).save(header_only, "PNG")  # a small file of 64 M pixels
    with pytest.raises(ImageError, match="8000 x 8000 pixels"):
        prepare_image(header_only.getvalue())
