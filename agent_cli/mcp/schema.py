"""Adapt an MCP tool's input schema to what the model provider accepts.

Every provider wants a top-level ``{"type": "object", "properties": ...}`` without combinators
at the top. OpenAI-compatible Chat Completions servers (vLLM, llama.cpp, Ollama…) often turn
schemas into grammars and choke on references and annotation keywords, so for them ``$ref`` is
inlined and those keywords are dropped. A schema that cannot be adapted raises
:class:`SchemaError`, and only that tool is left out.
"""

from __future__ import annotations

import copy
import json
from typing import Any

MAX_DEPTH = 32
TOP_LEVEL_COMBINATORS = ("anyOf", "oneOf", "allOf", "not", "enum", "const", "if", "then", "else")
ALWAYS_DROPPED = ("$schema", "$id", "$comment")
# Keywords local servers' grammar converters reject or ignore; they only describe, never constrain.
CHAT_DROPPED = (
    "examples",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentMediaType",
    "contentEncoding",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependentRequired",
    "unevaluatedProperties",
    "unevaluatedItems",
    "patternProperties",
    "propertyNames",
    "format",
)


class SchemaError(ValueError):
    """The schema cannot be offered to this provider."""


def adapt_schema(schema: Any, wire_api: str = "responses") -> dict[str, Any]:
    """A copy of ``schema`` the provider behind ``wire_api`` accepts (raises SchemaError)."""
    if schema is None:
        schema = {}
    if not isinstance(schema, dict):
        raise SchemaError(f"the input schema is a {type(schema).__name__}, not an object")
    try:
        json.dumps(schema)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"the input schema is not JSON: {exc}") from None
    schema = copy.deepcopy(schema)
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    if wire_api == "chat":
        schema = _inline(schema, definitions, 0, ())
        schema.pop("$defs", None)
        schema.pop("definitions", None)
    elif "$ref" in schema:
        schema = {
            **_inline(schema, definitions, 0, ()),
            **{k: schema[k] for k in ("$defs", "definitions") if k in schema},
        }
    schema = _object_at_top(schema)
    return _clean(schema, CHAT_DROPPED if wire_api == "chat" else (), 0)


def _object_at_top(schema: dict[str, Any]) -> dict[str, Any]:
    """Merge top-level ``allOf``/``anyOf``/``oneOf`` object branches into one object."""
    branches = [b for key in ("allOf", "anyOf", "oneOf") for b in schema.get(key, []) if isinstance(b, dict)]
    properties = dict(schema.get("properties") or {})
    required = list(schema.get("required") or [])
    for branch in branches:
        properties.update(branch.get("properties") or {})
        if branch in schema.get("allOf", []):
            required += [name for name in branch.get("required") or [] if name not in required]
    kind = schema.get("type", "object")
    if kind != "object" and not (isinstance(kind, list) and "object" in kind):
        raise SchemaError(f"the input schema's type is {kind!r}; tools take an object of arguments")
    if not isinstance(properties, dict):
        raise SchemaError("`properties` is not an object")
    top = {k: v for k, v in schema.items() if k not in TOP_LEVEL_COMBINATORS}
    top.update(type="object", properties=properties)
    if required:
        top["required"] = [name for name in required if isinstance(name, str)]
    return top


def _inline(node: Any, definitions: dict[str, Any], depth: int, seen: tuple[str, ...]) -> Any:
    if depth > MAX_DEPTH:
        raise SchemaError("the input schema is nested too deeply")
    if isinstance(node, list):
        return [_inline(item, definitions, depth + 1, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith(("#/$defs/", "#/definitions/")) or name not in definitions:
            raise SchemaError(f"the input schema refers to {ref!r}, which it does not define")
        if name in seen:
            return {"type": "object", "description": f"(recursive {name})"}  # cut the cycle, loosely
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {**_inline(definitions[name], definitions, depth + 1, (*seen, name)), **rest}
    return {key: _inline(value, definitions, depth + 1, seen) for key, value in node.items()}


def _clean(node: Any, dropped: tuple[str, ...], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise SchemaError("the input schema is nested too deeply")
    if isinstance(node, list):
        return [_clean(item, dropped, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ALWAYS_DROPPED or key in dropped:
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _clean(sub, dropped, depth + 1) for name, sub in value.items()}  # names, not keywords
        else:
            out[key] = _clean(value, dropped, depth + 1)
    return out
