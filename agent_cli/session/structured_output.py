"""`agent exec --output-schema`: the final answer is JSON that validates against a schema.

Responses and Chat Completions send the schema as their structured-output format on every
request (models/), so the answer arrives as JSON. Messages has no such format: once the model
has answered, one more request forces a tool whose input schema is the user's schema, and its
input is the answer. Either way the answer is validated here (jsonschema); a mismatch gets one
repair request, then the turn fails.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from agent_cli import events as ev
from agent_cli.context.history import History
from agent_cli.context.prompts import render_prompt
from agent_cli.items import Item, Message, ToolCall, ToolOutput, user
from agent_cli.models.base import OUTPUT_SCHEMA_NAME, ToolSpec

Sample = Callable[[ToolSpec | None], Awaitable[list[Item]]]
Emit = Callable[[ev.Event], None]


class StructuredOutputFailed(Exception):
    """The answer did not validate, also after the repair request."""


def load_schema(text: str) -> dict[str, Any]:
    """The schema in ``text``; ValueError with the reason when it is not a usable JSON Schema."""
    from jsonschema import SchemaError, validators

    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise ValueError("a JSON Schema must be a JSON object")
    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
    return schema


def problem_with(answer: str | None, schema: dict[str, Any]) -> str | None:
    """Why ``answer`` is not JSON valid against ``schema``, or None when it is."""
    from jsonschema import exceptions, validators

    if answer is None or not answer.strip():
        return "there is no answer"
    try:
        value = json.loads(answer)
    except json.JSONDecodeError as exc:
        return f"the answer is not JSON ({exc})"
    error = exceptions.best_match(validators.validator_for(schema)(schema).iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "the top level"
    return f"at {where}: {error.message}"


def answer_tool(schema: dict[str, Any]) -> ToolSpec:
    return ToolSpec(OUTPUT_SCHEMA_NAME, "Give the final answer: the input is the answer.", schema)


async def settle(
    schema: dict[str, Any], history: History, answer: str | None, emit: Emit, sample: Sample, forced_tool: bool
) -> str:
    """The final answer as validated JSON text; StructuredOutputFailed after one failed repair.
    A repair request is recorded in ``history``."""
    if forced_tool:
        answer = await _answer_through_tool(
            schema, history, emit, sample, render_prompt("output_schema_tool.md", tool=OUTPUT_SCHEMA_NAME)
        )
    problem = problem_with(answer, schema)
    if problem is None:
        return answer  # type: ignore[return-value]
    emit(ev.Warning(f"the answer does not match --output-schema ({problem}); asking the model to correct it"))
    repair = render_prompt("output_schema_repair.md", problem=problem)
    if forced_tool:
        answer = await _answer_through_tool(schema, history, emit, sample, repair)
    else:
        history.record(user(repair))
        answer = _last_text(await sample(None))
    problem = problem_with(answer, schema)
    if problem is not None:
        raise StructuredOutputFailed(f"the final answer does not match --output-schema: {problem}")
    return answer  # type: ignore[return-value]


async def _answer_through_tool(
    schema: dict[str, Any], history: History, emit: Emit, sample: Sample, request: str
) -> str | None:
    history.record(user(request))
    output = await sample(answer_tool(schema))
    calls = [item for item in output if isinstance(item, ToolCall) and item.name == OUTPUT_SCHEMA_NAME]
    for item in output:  # every call gets its output, so the history stays valid for a resume
        if isinstance(item, ToolCall):
            history.record(ToolOutput(item.call_id, "Answer recorded.", True))
    if not calls:
        return _last_text(output)
    answer = calls[-1].arguments
    emit(ev.AgentMessage(answer))
    return answer


def _last_text(output: list[Item]) -> str | None:
    texts = [item.text for item in output if isinstance(item, Message) and item.role == "assistant"]
    return texts[-1] if texts else None
