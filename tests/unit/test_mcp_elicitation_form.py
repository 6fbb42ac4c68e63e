"""The elicitation form's fields from a server's schema, and the checks before an answer is sent."""

from __future__ import annotations

from agent_cli.mcp.elicitation import form_fields, validate

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "email": {"type": "string", "format": "email"},
        "count": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
        "ratio": {"type": "number"},
        "ok": {"type": "boolean", "default": True},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        "tier": {"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}, {"const": "b"}]},
    },
    "required": ["name", "count"],
}


def test_fields_keep_the_schema_order_kinds_defaults_and_choices():
    fields = form_fields(SCHEMA)
    assert [(f.name, f.kind, f.required) for f in fields] == [
        ("name", "string", True),
        ("email", "string", False),
        ("count", "integer", True),
        ("ratio", "number", False),
        ("ok", "boolean", False),
        ("size", "enum", False),
        ("tier", "enum", False),
    ]
    assert fields[0].title == "Name" and fields[2].default == 1
    assert fields[5].labels == ("Small", "Medium") and fields[6].labels == ("Alpha", "b")


def test_values_are_converted_and_checked():
    fields = form_fields(SCHEMA)
    content, errors = validate(fields, {"name": "Al", "count": "3", "ratio": "0.5", "ok": False, "size": "m"})
    assert errors == {} and content == {"name": "Al", "count": 3, "ratio": 0.5, "ok": False, "size": "m"}
    _, errors = validate(fields, {"name": "A", "email": "nope", "count": "9", "ratio": "x", "size": "xl"})
    assert errors == {
        "name": "at least 2 characters",
        "email": "an email address",
        "count": "at most 5",
        "ratio": "a number",
        "size": "one of: s, m",
    }
    assert validate(fields, {})[1] == {"name": "required", "count": "required"}
