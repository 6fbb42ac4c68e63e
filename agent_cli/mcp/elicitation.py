"""MCP elicitation: a server asks the user for input in the middle of a call (``elicitation/create``).

The request reaches the front end of the call in progress as an :class:`~agent_cli.events.ElicitationRequest`
(the TUI shows a form; see ``tui/screens/elicitation.py``). Where nobody can be asked (``agent exec``,
a front end that does not show forms, a request outside any call) the server is told "decline",
and the user sees one line saying so. URL mode: the browser opens only after the user accepted.

The form's schema is the spec's restricted one: a flat object of strings (with ``format``,
lengths, ``enum``), numbers, integers (with bounds) and booleans. :func:`form_fields` reads it,
:func:`validate` turns what was typed into the values the server gets, or says what is wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import webbrowser
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agent_cli import events as ev

Emit = Callable[[ev.Event], None]

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
ELICITATION_TIMEOUT = 600.0  # a form left open this long is cancelled


@dataclass(frozen=True, slots=True)
class FormField:
    name: str
    kind: str  # string | number | integer | boolean | enum
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()  # enumNames / oneOf titles, same order as choices
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None


def form_fields(schema: dict[str, Any]) -> list[FormField]:
    """The fields of a requested schema, in the order the server listed them."""
    required = set(schema.get("required") or ())
    fields = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        choices, labels = _choices(prop)
        kind = "enum" if choices else str(prop.get("type", "string"))
        if kind not in ("string", "number", "integer", "boolean", "enum"):
            kind = "string"
        fields.append(
            FormField(
                name,
                kind,
                str(prop.get("title") or name),
                str(prop.get("description") or ""),
                name in required,
                prop.get("default"),
                choices,
                labels,
                prop.get("minimum"),
                prop.get("maximum"),
                prop.get("minLength"),
                prop.get("maxLength"),
                prop.get("format"),
            )
        )
    return fields


def _choices(prop: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if isinstance(prop.get("enum"), list):
        values = tuple(str(value) for value in prop["enum"])
        names = prop.get("enumNames")
        labels = tuple(str(n) for n in names) if isinstance(names, list) and len(names) == len(values) else values
        return values, labels
    options = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
        return tuple(str(o["const"]) for o in options), tuple(str(o.get("title", o["const"])) for o in options)
    return (), ()


def validate(fields: list[FormField], values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``values``: text per field (a bool for booleans). The content to send, and an error per bad field."""
    content: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for field in fields:
        raw = values.get(field.name)
        if field.kind == "boolean":
            raw = field.default if raw is None else raw
            content[field.name] = raw.strip().lower() in ("true", "yes", "1") if isinstance(raw, str) else bool(raw)
            continue
        text = "" if raw is None else str(raw).strip()
        if not text:
            if field.required:
                errors[field.name] = "required"
            continue
        try:
            content[field.name] = _convert(field, text)
        except ValueError as exc:
            errors[field.name] = str(exc)
    return content, errors


def _convert(field: FormField, text: str) -> Any:
    if field.kind == "enum":
        if text not in field.choices:
            raise ValueError(f"one of: {', '.join(field.choices)}")
        return text
    if field.kind in ("number", "integer"):
        try:
            number: float | int = int(text) if field.kind == "integer" else float(text)
        except ValueError:
            raise ValueError("a whole number" if field.kind == "integer" else "a number") from None
        if field.minimum is not None and number < field.minimum:
            raise ValueError(f"at least {field.minimum:g}")
        if field.maximum is not None and number > field.maximum:
            raise ValueError(f"at most {field.maximum:g}")
        return number
    if field.min_length is not None and len(text) < field.min_length:
        raise ValueError(f"at least {field.min_length} characters")
    if field.max_length is not None and len(text) > field.max_length:
        raise ValueError(f"at most {field.max_length} characters")
    if field.format == "email" and not EMAIL.match(text):
        raise ValueError("an email address")
    if field.format == "uri" and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", text):
        raise ValueError("a URI")
    return text


def preset_answer(params: Any, preset: Mapping[str, str]) -> dict[str, Any] | None:
    """The server's ``elicitation_values`` as an answer to this form, when they fill it validly."""
    if not preset:
        return None
    fields = form_fields(dict(getattr(params, "requested_schema", None) or {}))
    content, errors = validate(fields, {field.name: preset.get(field.name) for field in fields})
    return None if errors or not fields else content


async def ask(
    server: str, params: Any, emit: Emit | None, can_ask: bool, preset: Mapping[str, str] | None = None
) -> Any:
    """Answer one ``elicitation/create`` from ``server`` (an ``mcp_types.ElicitResult``)."""
    from mcp_types import ElicitResult

    mode = "url" if getattr(params, "mode", "form") == "url" else "form"
    message = str(getattr(params, "message", "") or "")
    if emit is None or not can_ask:
        content = preset_answer(params, preset or {}) if mode == "form" else None
        if emit is not None:
            how = "answered from elicitation_values" if content is not None else "declined: this session cannot ask"
            emit(ev.Warning(f"MCP server '{server}' asked for input ({message!r}); {how}"))
        if content is not None:
            return ElicitResult(action="accept", content=content)
        return ElicitResult(action="decline")
    future: asyncio.Future[ev.ElicitationAnswer] = asyncio.get_running_loop().create_future()
    requested: Any = getattr(params, "requested_schema", None) or {}  # the SDK's model, or a plain dict
    schema = (
        requested.model_dump(by_alias=True, exclude_none=True) if hasattr(requested, "model_dump") else dict(requested)
    )
    url = getattr(params, "url", None)
    emit(ev.ElicitationRequest(server, message, mode, schema, url, future=future))
    try:
        answer = await asyncio.wait_for(future, ELICITATION_TIMEOUT)
    except TimeoutError:
        return ElicitResult(action="cancel")
    if mode == "url":
        if answer.action == "accept" and url and answer.open_url:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(webbrowser.open, url)
        return ElicitResult(action=answer.action)
    return ElicitResult(action=answer.action, content=answer.content if answer.action == "accept" else None)
