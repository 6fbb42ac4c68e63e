"""A scripted, deterministic fake LLM server over real HTTP, for tests.

It speaks the OpenAI Responses API, OpenAI Chat Completions and Anthropic
Messages with SSE streaming, exactly as the official SDKs parse them::

    from tests.fake_server import FakeModelServer, Reply, ToolCall, Usage

    with FakeModelServer() as server:
        server.script(
            Reply(text="hello", tool_calls=[ToolCall("shell", {"command": "ls"})]),
            lambda request: Reply(text=f"saw {len(request.body['input'])} items"),
            Reply.http_error(429, retry_after=1),
            Reply.cut(text="partial", after_events=3),
            Reply.context_length_exceeded(),
        )
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="x")
        anthropic.Anthropic(base_url=server.base_url, api_key="x")
        ...
        server.assert_done()

Run standalone: ``python -m tests.fake_server --port 8765 [--script FILE.json]``.
"""

from .protocols import encrypted_reasoning
from .script import Reply, ToolCall, Usage, WebSearch, estimate_tokens
from .server import FakeModelServer, RecordedRequest

__all__ = [
    "FakeModelServer",
    "RecordedRequest",
    "Reply",
    "ToolCall",
    "Usage",
    "WebSearch",
    "estimate_tokens",
    "encrypted_reasoning",
]
