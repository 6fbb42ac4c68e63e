"""Command output laid out for people: two aligned columns."""

from __future__ import annotations


def table(rows: list[tuple[str, str]], indent: str = "", max_width: int = 24) -> str:
    """Two columns; a name longer than ``max_width`` puts its value on the next line."""
    width = min(max((len(name) for name, _ in rows), default=0), max_width) + 2
    lines = []
    for name, value in rows:
        if len(name) > max_width:
            lines += [f"{indent}{name}", f"{indent}{' ' * width}{value}"]
        else:
            lines.append(f"{indent}{name.ljust(width)}{value}".rstrip())
    return "\n".join(lines)
