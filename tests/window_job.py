"""The six-step job in a small window, shared by the compaction tests and bench/compaction_cache.py.

A repository of data files whose read_file outputs are about ``tokens_per_file`` tokens each; a
scripted model reads them one per step, then answers, and writes a short summary when asked to
compact. The fake server emulates the window (requests over it are refused as real APIs do).

Prompt caching is emulated from the recorded requests: a request's cached part is the longest
prefix (system prompt, tools, then each message in order) it shares with any earlier request the
server answered; the rest is uncached input, what a provider bills in full.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fake_server import Reply, ToolCall

COMPACT_MARK = "Your context window is about to be reset"
TASK = "TASK-7781: read every data file in order and report the longest line of each."


def conversation(rec) -> list:
    body = rec.body
    return body["input"] if rec.protocol == "responses" else body["messages"]


def texts(message) -> str:
    """Every piece of text in one wire message, whatever the protocol."""
    if isinstance(message, str):
        return message
    if isinstance(message, list):
        return "\n".join(texts(part) for part in message)
    if isinstance(message, dict):
        return "\n".join(texts(message[key]) for key in ("content", "text", "output") if key in message)
    return ""


def is_summary_request(rec) -> bool:
    messages = conversation(rec)
    return bool(messages) and COMPACT_MARK in texts(messages[-1])


def write_data_files(root: Path, count: int, tokens_per_file: int) -> list[str]:
    """``count`` files whose numbered read_file output is about ``tokens_per_file`` tokens (bytes/4)."""
    names = []
    line = "lorem ipsum dolor sit amet consectetur "
    for i in range(count):
        rows = max(1, tokens_per_file * 4 // (len(line) + 30))
        text = "".join(f"record {n:03d} of data{i}: {line}\n" for n in range(rows))
        (root / f"data{i}.txt").write_text(text)
        names.append(f"data{i}.txt")
    return names


class Job:
    """The scripted model: read ``files`` one per step, then answer; summarize when asked."""

    def __init__(self, files: list[str], summary: Reply | None = None):
        self.files = list(files)
        self.step = 0
        self.summary = summary

    def __call__(self, rec) -> Reply:
        if is_summary_request(rec):
            return self.summary or Reply(text=f"## Active task\nRead the data files. Done: {self.step} file(s).")
        if self.step < len(self.files):
            self.step += 1
            return Reply(tool_calls=[ToolCall("read_file", {"path": self.files[self.step - 1]})])
        return Reply(text=f"finished after {self.step} files")

    def add(self, files: list[str]) -> None:
        self.files += files


def without_cache_marks(value):
    """Anthropic's cache_control breakpoints move from request to request; caches ignore them."""
    if isinstance(value, dict):
        return {key: without_cache_marks(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [without_cache_marks(item) for item in value]
    return value


def prompt_blocks(rec) -> list[str]:
    """A request as the blocks a prompt cache matches in order: tools, system, each message."""
    body = without_cache_marks(rec.body)
    system = body.get("system", body.get("instructions", ""))
    blocks = [json.dumps(body.get("tools", []), sort_keys=True), json.dumps(system, sort_keys=True)]
    messages = body["input"] if rec.protocol == "responses" else body["messages"]
    return blocks + [json.dumps(message, sort_keys=True) for message in messages]


def shared_prefix_bytes(a: list[str], b: list[str]) -> int:
    total = 0
    for x, y in zip(a, b):
        if x != y:
            common = 0
            for cx, cy in zip(x, y):
                if cx != cy:
                    break
                common += 1
            return total + common
        total += len(x)
    return total


def cache_report(requests) -> dict[str, int]:
    """Input tokens of the answered requests, how many were cached (shared prefix), and the rest."""
    seen: list[list[str]] = []
    total = cached = 0
    for rec in requests:
        if rec.overflowed or rec.body is None:
            continue
        blocks = prompt_blocks(rec)
        size = sum(len(block) for block in blocks)
        shared = max((shared_prefix_bytes(blocks, earlier) for earlier in seen), default=0)
        total += rec.input_tokens
        cached += max(0, rec.input_tokens - (size - shared + 3) // 4)
        seen.append(blocks)
    return {
        "input": total,
        "cached": cached,
        "uncached": total - cached,
        "refused": sum(1 for rec in requests if rec.overflowed),
    }
