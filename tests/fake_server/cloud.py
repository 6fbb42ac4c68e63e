"""The cloud endpoints the fake server also stands in for: Azure OpenAI, Amazon Bedrock and Google
Vertex AI, each at its own paths, with Bedrock's binary AWS event stream instead of SSE."""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from typing import Any, Optional
from urllib.parse import unquote

# path -> (API path it stands for, cloud); the model a path names replaces the body's
_AZURE = re.compile(r"^/openai(?:/v1|/deployments/(?P<model>[^/]+))?(?P<api>/responses|/chat/completions)$")
_VERTEX = re.compile(
    r"^/v1/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/(?P<model>[^/:]+)"
    r":(?:streamRawPredict|rawPredict)$"
)
_BEDROCK = re.compile(r"^/model/(?P<model>[^/]+)/invoke(?:-with-response-stream)?$")


def cloud_route(path: str) -> tuple[Optional[str], Optional[str], Optional[str]]:
    """(API path, cloud, model named by the path) for a cloud endpoint's path, else Nones."""
    for cloud, pattern in (("azure", _AZURE), ("vertex", _VERTEX), ("bedrock", _BEDROCK)):
        match = pattern.match(path)
        if match:
            api = match.groupdict().get("api") or "/messages"
            model = match.group("model")
            return api, cloud, unquote(model) if model else None
    return None, None, None


def streams(path: str, body: Any) -> bool:
    """Whether a cloud request asked for a stream (Bedrock and Vertex say so in the path)."""
    return path.endswith(("invoke-with-response-stream", ":streamRawPredict")) or (
        isinstance(body, dict) and body.get("stream") is True
    )


# --- Bedrock's AWS event stream (application/vnd.amazon.eventstream) ------------------------------


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack("!B", len(raw_name)) + raw_name + b"\x07" + struct.pack("!H", len(raw_value)) + raw_value


def eventstream_frame(payload: dict[str, Any], event_type: str = "chunk", message_type: str = "event") -> bytes:
    """One AWS event stream message: prelude with CRC, string headers, payload, message CRC."""
    headers = (
        _header(":event-type", event_type)
        + _header(":content-type", "application/json")
        + _header(":message-type", message_type)
    )
    body = json.dumps(payload).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack("!II", total, len(headers))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack("!I", zlib.crc32(message))


def bedrock_chunk(event: dict[str, Any]) -> bytes:
    """An Anthropic stream event as Bedrock sends it: base64 JSON inside a `chunk` frame."""
    return eventstream_frame({"bytes": base64.b64encode(json.dumps(event).encode()).decode()})
