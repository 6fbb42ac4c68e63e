"""The ``list_dir`` tool: a .gitignore-aware tree of a directory, shallow levels first."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.context.truncate import truncate_text
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import int_arg, output_policy, str_arg
from agent_cli.tools.daemon_thread import in_thread
from agent_cli.tools.ignore import IgnoreRules, sorted_entries

DEFAULT_DEPTH = 2
DEFAULT_LIMIT = 200
MAX_DEPTH = 50  # deeper asks are clamped (and the output says so)
MAX_LIMIT = 10_000
MAX_COUNTED = 100_000  # stop counting omitted entries past this many

SPEC = ToolSpec(
    name="list_dir",
    description=(
        "List a directory as an indented tree (directories end with `/`, symlinks with `@`; "
        "directories first, then files, by name). Respects .gitignore; hides .git. Shallow "
        "levels are listed before deeper ones when the limit cuts."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to list ('.' for the cwd)."},
            "depth": {"type": "integer", "description": f"Levels to descend (default {DEFAULT_DEPTH})."},
            "limit": {"type": "integer", "description": f"Max entries shown (default {DEFAULT_LIMIT})."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)


@dataclass
class _Node:
    name: str
    kind: str  # "dir", "file" or "link"
    children: list[_Node] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name + {"dir": "/", "link": "@", "file": ""}[self.kind]


def _kind(entry: Any) -> str:
    try:
        if entry.is_symlink():
            return "link"
        return "dir" if entry.is_dir(follow_symlinks=False) else "file"
    except OSError:
        return "file"


def build_tree(root: Path, depth: int, limit: int, hidden: Callable[[Path], Any] | None = None) -> tuple[_Node, int]:
    """Breadth first up to ``depth``; returns the tree of the first ``limit`` entries and how many were left out."""
    rules = IgnoreRules(root)
    tree = _Node(root.name, "dir")
    level: list[tuple[Path, _Node]] = [(root, tree)]
    shown = omitted = 0
    for _ in range(depth):
        if not level:  # nothing deeper: a depth beyond the tree costs nothing
            break
        next_level: list[tuple[Path, _Node]] = []
        for directory, node in level:
            entries = [(_kind(entry), entry) for entry in sorted_entries(directory)]
            entries.sort(key=lambda pair: pair[0] != "dir")  # stable: dirs first, each by name
            for kind, entry in entries:
                path = Path(entry.path)
                if rules.is_ignored(path, kind == "dir") or (hidden is not None and hidden(path)):
                    continue
                if shown >= limit:
                    omitted += 1
                    if omitted >= MAX_COUNTED:
                        return tree, omitted
                    if kind == "dir":
                        next_level.append((path, _Node(entry.name, kind)))  # counted, never shown
                    continue
                child = _Node(entry.name, kind)
                node.children.append(child)
                shown += 1
                if kind == "dir":
                    next_level.append((path, child))
        level = next_level
    return tree, omitted


def render_tree(root_label: str, tree: _Node) -> str:
    lines = [root_label]

    def walk(node: _Node, indent: str) -> None:
        for child in sorted(node.children, key=lambda n: (n.kind != "dir", n.name)):
            lines.append(indent + child.label)
            walk(child, indent + "  ")

    walk(tree, "  ")
    return "\n".join(lines)


class ListDirTool(Tool):
    spec = SPEC
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = str_arg(args, "path")
        root = ctx.resolve(raw)
        if not root.exists():
            raise ToolError(f"directory not found: {raw}")
        if not root.is_dir():
            raise ToolError(f"{raw} is a file, not a directory; use read_file to read it")
        notes: list[str] = []
        depth = int_arg(args, "depth", DEFAULT_DEPTH, maximum=MAX_DEPTH, notes=notes)
        limit = int_arg(args, "limit", DEFAULT_LIMIT, maximum=MAX_LIMIT, notes=notes)
        tree, omitted = await in_thread(build_tree, root, depth, limit, ctx.read_denied)
        text = render_tree(str(root).rstrip("/") + "/", tree)
        if not tree.children:
            text += "\n  (empty)"
        if omitted:
            more = f"{omitted}+" if omitted >= MAX_COUNTED else str(omitted)
            text += f"\n[{more} more entries not shown; raise limit or list a subdirectory]"
        if notes:
            text += "\n" + "\n".join(notes)
        return ToolResult(truncate_text(text, output_policy(ctx)))
