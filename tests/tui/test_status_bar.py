"""The status bar drops whole parts by priority at narrow widths; it never cuts a figure (issue 28)."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.tui.widgets.status_bar import StatusBar
from tests.fake_server import Usage

FULL = (
    "test-model · openai-chat · agent   68% context left (31k / 95k)   session ↑123k ↓4.3k (81% cached)"
    "   compacted 182k → 24k"
)


def bar() -> StatusBar:
    status = StatusBar("test-model", "openai-chat", "agent")
    status.count = ev.TokenCount(
        Usage(), Usage(input_tokens=123_456, cached_input_tokens=100_000, output_tokens=4_321), 31_000, 95_000
    )
    status.context_event = "compacted 182k → 24k"
    return status


def test_every_width_shows_whole_parts_in_order():
    status = bar()
    assert str(status.build_content(200)) == FULL
    pieces = [
        "test-model",
        "openai-chat · agent",
        "68% context left",
        "(31k / 95k)",
        "session ↑123k ↓4.3k",
        "(81% cached)",
        "compacted 182k → 24k",
    ]
    for width in range(8, 130):
        line = str(status.build_content(width))
        assert len(line) <= width or line == "test-model", (width, line)
        rest = line
        for piece in pieces:  # what is shown is a sequence of whole pieces, in their order
            if piece in rest:
                rest = rest.split(piece, 1)[1]
        assert rest.strip(" ·") == "", (width, line)
    assert str(status.build_content(40)) == "test-model   68% context left"


def test_a_named_part_from_another_feature_and_a_hint():
    status = bar()
    status.set_part("background", "2 background processes", priority=60)
    assert str(status.build_content(200)).endswith("   2 background processes")
    status.hint = "press ctrl+c again to quit"
    assert str(status.build_content(60)).startswith("press ctrl+c again to quit   test-model")
    status.set_part("background", None)
    assert "background" not in str(status.build_content(200))
