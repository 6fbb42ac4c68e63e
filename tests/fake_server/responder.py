"""Default rule-based responder for demos (`python -m tests.fake_server`).

Rules, applied to the last item of the conversation:
  1. a tool output        -> text "Done. The tool said:" + its first 200 chars
  2. a user message with a line starting with `run:` -> call the `shell` tool
     with the rest of that line as `command`
  3. anything else        -> a short markdown echo (heading + bullet list)
"""

from __future__ import annotations

from typing import Any, Optional

from .script import Reply, ToolCall


def _text_of(content: Any) -> str:
    """Flatten a message/tool-output content (str or list of parts) to text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    out.append(part["text"])
                elif "content" in part:
                    out.append(_text_of(part["content"]))
        return "\n".join(out)
    if isinstance(content, dict):
        return _text_of(content.get("text") or content.get("content") or content.get("output"))
    return ""


def last_turn(protocol: str, body: dict) -> tuple[str, str]:
    """Return ("tool", output) or ("user", text) for the conversation's last item."""
    if protocol == "responses":
        items = body.get("input")
        if isinstance(items, str):
            return "user", items
        last = items[-1] if isinstance(items, list) and items else {}
        if isinstance(last, dict) and last.get("type", "").endswith("_call_output"):
            return "tool", _text_of(last.get("output"))
        return "user", _text_of(last.get("content")) if isinstance(last, dict) else ""
    messages = body.get("messages") or []
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    if protocol == "chat":
        return ("tool" if last.get("role") == "tool" else "user"), _text_of(last.get("content"))
    content = last.get("content")
    if isinstance(content, list):
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            return "tool", _text_of(results[-1].get("content"))
    return "user", _text_of(content)


def _run_command(text: str) -> Optional[str]:
    for line in text.splitlines():
        if line.strip().startswith("run:"):
            return line.strip()[len("run:") :].strip()
    return None


def default_responder(request: Any) -> Reply:
    """Fallback `Reply` for a RecordedRequest, per the module rules."""
    body = request.body if isinstance(request.body, dict) else {}
    kind, text = last_turn(request.protocol, body)
    if kind == "tool":
        return Reply(text="Done. The tool said:\n\n```\n" + text[:200] + "\n```")
    command = _run_command(text)
    if command:
        return Reply(text=f"Running `{command}`.", tool_calls=[ToolCall("shell", {"command": command})])
    quoted = text.strip() or "(nothing)"
    return Reply(
        text=(
            "## Echo\n\n"
            f"You said: {quoted}\n\n"
            "- this is a **fake** model\n"
            "- start a line with `run: <command>` to call the `shell` tool\n"
        )
    )
