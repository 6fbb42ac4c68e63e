"""Captured output as a tool's text: a header, where the full output went, and the body within
the output budget. ``shell``, its background processes and ``web_fetch`` answer the same way."""

from __future__ import annotations

from agent_cli.context.truncate import truncate_head_tail, truncate_middle
from agent_cli.tools.base import ToolContext
from agent_cli.tools.capture import (
    SPILL_HEAD_CAP,
    SPILL_TAIL_CAP,
    CapturedOutput,
    decode_head,
    decode_tail,
    new_spill_path,
    save_complete_output,
)
from agent_cli.tools.common import output_policy


def format_captured(ctx: ToolContext, captured: CapturedOutput, header: list[str], note: str = "") -> str:
    """``header``, [``Total output lines``, spill file], ``Output:`` and the body within the budget."""
    policy = output_policy(ctx)
    if captured.complete:
        full = captured.text()
        if policy.fits(full):
            return "\n".join([*header, "Output:"]) + "\n" + note + full
        body = truncate_middle(full, policy)
        captured = save_complete_output(captured, new_spill_path(ctx.data_dir, ctx.call_id))
    else:
        body = truncate_head_tail(
            decode_head(captured.head),
            decode_tail(captured.tail),
            total_bytes=captured.total_bytes,
            total_chars=captured.total_chars,
            policy=policy,
        )
    header = [*header, f"Total output lines: {captured.total_lines}"]
    if captured.spill_path is not None:
        if captured.total_bytes > SPILL_HEAD_CAP + SPILL_TAIL_CAP:  # capture.py capped the file
            header.append(
                f"Output ({captured.total_bytes} bytes) too large to keep whole: its first {SPILL_HEAD_CAP} and "
                f"last {SPILL_TAIL_CAP} bytes, around a marker line, saved to {captured.spill_path}; "
                "page it with read_file offset/limit"
            )
        else:
            header.append(
                f"Full output ({captured.total_bytes} bytes) saved to {captured.spill_path}; "
                "page it with read_file offset/limit"
            )
    elif captured.spill_error:
        header.append(f"Full output could not be saved: {captured.spill_error}")
    header.append("Output:")
    return "\n".join(header) + "\n" + note + body
