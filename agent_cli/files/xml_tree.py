"""XML: parsed with defusedxml (no entity expansion, no external entities) and cut like data.

Elements deeper than ``max_depth`` are summarized, elements keep their first
``max_array_items`` children and ``max_object_keys`` attributes, text is cut to
``max_string_chars``; XML comments say what was left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from agent_cli.files.prune import Cuts
from agent_cli.files.view import plural


class XmlError(ValueError):
    """Malformed or unsafe XML; the message says where."""


def parse_xml(path: Path) -> Any:
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import ParseError, parse

    try:
        return parse(path).getroot()
    except ParseError as exc:
        raise XmlError(f"invalid XML: {exc}") from None
    except DefusedXmlException as exc:
        raise XmlError(f"refused unsafe XML: {exc}") from None


def _name(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else "?"  # drop the {namespace}


def _text(value: str | None, cuts: Cuts) -> str:
    return escape(cuts.string((value or "").strip()))


def render_xml(element: Any, cuts: Cuts, depth: int = 0) -> list[str]:
    limits = cuts.limits
    pad = "  " * depth
    name = _name(element.tag)
    attributes = list(element.attrib.items())
    shown = "".join(f" {_name(key)}={quoteattr(value)}" for key, value in attributes[: limits.max_object_keys])
    if len(attributes) > limits.max_object_keys:
        cuts.keys += len(attributes) - limits.max_object_keys
        shown += f' …="{len(attributes) - limits.max_object_keys} more attributes"'
    children = list(element)
    text = _text(element.text, cuts)
    if not children:
        return [f"{pad}<{name}{shown}>{text}</{name}>" if text else f"{pad}<{name}{shown}/>"]
    if depth >= limits.max_depth:
        cuts.deep += 1
        return [f"{pad}<{name}{shown}><!-- … {plural(len(children), 'child element')} --></{name}>"]
    lines = [f"{pad}<{name}{shown}>" + text]
    for child in children[: limits.max_array_items]:
        lines += render_xml(child, cuts, depth + 1)
        if tail := _text(child.tail, cuts):
            lines.append(f"{pad}  {tail}")
    if len(children) > limits.max_array_items:
        cuts.items += len(children) - limits.max_array_items
        lines.append(f"{pad}  <!-- … {plural(len(children) - limits.max_array_items, 'more child element')} -->")
    lines.append(f"{pad}</{name}>")
    return lines
