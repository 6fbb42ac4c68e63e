"""The ``read_file`` tool: a file shown by its type (agent_cli/files), within the output budget."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_cli.context.truncate import truncate_text
from agent_cli.files.detect import IMAGE, TEXT
from agent_cli.files.reading import read_view, sniff, special_kind
from agent_cli.files.text import text_view
from agent_cli.files.view import FileReadError, Reading
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import int_arg, output_policy, str_arg
from agent_cli.tools.daemon_thread import in_thread
from agent_cli.tools.failures import check_path_text
from agent_cli.tools.image_result import read_image_file

OPEN_TIMEOUT_S = 10.0
MAX_LINE = 1 << 40  # offset and limit above this are clamped (and the output says so)

SPEC = ToolSpec(
    name="read_file",
    description=(
        "Read a file. Text: lines as `N<TAB>text` (N = 1-based line number, not part of the file), long "
        "lines cut with a marker, partial reads end with the total and the offset to continue. CSV/TSV, "
        "JSON/YAML/XML, notebooks, PDF/Office documents and archives are shown by their shape, images as "
        "images; notes in [brackets] say what was left out."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, absolute or relative to the cwd."},
            "offset": {"type": "integer", "description": "First line (CSV row) to show, 1-based."},
            "limit": {"type": "integer", "description": "Max lines (rows)."},
            "pages": {"type": "string", "description": 'PDF pages: "3", "2-5".'},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)


class ReadFileTool(Tool):
    spec = SPEC
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = str_arg(args, "path")
        check_path_text(raw)
        path = ctx.resolve(raw)
        notes: list[str] = []
        offset = int_arg(args, "offset", 0, maximum=MAX_LINE, notes=notes) or None
        limit = int_arg(args, "limit", 0, maximum=MAX_LINE, notes=notes) or None
        pages = str_arg(args, "pages") if args.get("pages") is not None else None
        if path.is_dir():
            raise ToolError(f"{raw} is a directory; use list_dir to see its contents")
        if not path.exists():
            raise ToolError(f"file not found: {raw} (resolved to {path})")
        if (kind := special_kind(path)) is not None:
            raise ToolError(f"{raw} is {kind}, not a file: read_file does not open it (it could block forever)")
        policy = output_policy(ctx)
        try:
            try:  # off the event loop, with a limit: a path on a hung mount must not stop the session
                sample, detected = await asyncio.wait_for(in_thread(sniff, path), OPEN_TIMEOUT_S)
            except TimeoutError:
                raise ToolError(f"cannot read {raw}: opening it took more than {OPEN_TIMEOUT_S:g} s") from None
            size = path.stat().st_size
            if detected.kind == IMAGE:  # the model gets the picture itself
                return await in_thread(read_image_file, path, ctx)
            reading = Reading(
                path,
                detected.label,
                sample,
                size,
                policy.byte_budget,
                ctx.read_limits,
                offset,
                limit,
                pages,
                ctx.data_dir / "cache",
            )
            if (
                ctx.editor is not None
                and detected.kind == TEXT
                and (text := await ctx.editor.read_text(path)) is not None
            ):
                view = text_view(text, reading, path.name)  # what the user sees in the editor, saved or not
            else:
                view = await in_thread(read_view, reading, detected)
        except FileReadError as exc:
            raise ToolError(str(exc)) from None
        except OSError as exc:
            raise ToolError(f"cannot read {raw}: {exc.strerror or exc}") from None
        return ToolResult(truncate_text("\n".join([view.render(), *notes]), policy))
