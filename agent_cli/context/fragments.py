"""The envelopes around everything the harness (not the user) puts into the conversation.

Two kinds, as in Codex:

- developer-role instructions (approval and sandbox rules, mode changes);
- contextual user-role fragments (AGENTS.md, the skills list, ``<environment_context>``, an
  injected skill body, recalled ``<memories>``), each wrapped in stable start and end markers.

:func:`is_contextual_fragment` is the one place that recognizes them, and
:func:`is_real_user_message` builds on it so compaction, ``/review`` and history parsing keep
only what the user really typed. A compaction summary is a user-role message too; it starts with
the summary prefix (``prompts/summary_prefix.md``) and is recognized here as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from html import escape  # not xml.sax.saxutils: it imports urllib.request, ~12 ms
from pathlib import Path

from agent_cli.context.prompts import PromptError, PromptLibrary, prompt_library
from agent_cli.items import Item, Message
from agent_cli.paths import bundled_prompts_dir


@dataclass(frozen=True, slots=True)
class FragmentMarker:
    """A fragment starts with ``start`` and ends with ``end`` (surrounding whitespace ignored)."""

    start: str
    end: str

    def wrap(self, body: str) -> str:
        return f"{self.start}\n{body.strip(chr(10))}\n{self.end}"

    def matches(self, text: str) -> bool:
        text = text.strip()
        return text.startswith(self.start) and text.endswith(self.end)


AGENTS_MD = FragmentMarker("# AGENTS.md instructions for ", "</INSTRUCTIONS>")
SKILLS_LIST = FragmentMarker("<skills>", "</skills>")
SKILL_BODY = FragmentMarker('<skill name="', "</skill>")
ENVIRONMENT_CONTEXT = FragmentMarker("<environment_context>", "</environment_context>")
TURN_ABORTED = FragmentMarker("<turn_aborted>", "</turn_aborted>")  # for an interrupted turn's note
MEMORIES = FragmentMarker("<memories>", "</memories>")  # memories recalled for a message (session/memory_recall.py)
# Developer-role envelopes: never mistaken for user input by role alone, recognized anyway in
# case a wire format has to send them as user text.
PERMISSIONS = FragmentMarker("<permissions>", "</permissions>")
MODE = FragmentMarker("<mode>", "</mode>")
BACKGROUND_EXITS = FragmentMarker("<background_processes>", "</background_processes>")  # exits since the last request
HOOK_CONTEXT = FragmentMarker('<hook_context event="', "</hook_context>")  # context a hook added
FILES_RESTORED = FragmentMarker("<files_restored>", "</files_restored>")  # /undo, /rewind of the code
PROJECT_CHECKS = FragmentMarker("<project_checks>", "</project_checks>")  # a failing lint/test command (lsp/checks.py)

CONTEXTUAL_MARKERS: tuple[FragmentMarker, ...] = (
    AGENTS_MD,
    SKILLS_LIST,
    SKILL_BODY,
    ENVIRONMENT_CONTEXT,
    TURN_ABORTED,
    PERMISSIONS,
    MODE,
    HOOK_CONTEXT,
    MEMORIES,
    BACKGROUND_EXITS,
    FILES_RESTORED,
    PROJECT_CHECKS,
)
NO_SUMMARY = "(no summary available)"


def agents_md_text(cwd: str | Path, body: str) -> str:
    """``# AGENTS.md instructions for <cwd>`` then ``body`` inside ``<INSTRUCTIONS>`` tags."""
    return f"{AGENTS_MD.start}{cwd}\n\n<INSTRUCTIONS>\n{body.strip(chr(10))}\n{AGENTS_MD.end}"


def skill_body_text(name: str, path: str | Path, body: str) -> str:
    head = f'<skill name="{_attr(name)}" path="{_attr(str(path))}">'
    return f"{head}\n{body.strip(chr(10))}\n{SKILL_BODY.end}"


def _attr(value: str) -> str:
    return escape(value, quote=False).replace('"', "&quot;")  # single quotes stay as they are


def is_contextual_fragment(text: str) -> bool:
    """True for text the harness wrapped in one of the known markers."""
    return any(marker.matches(text) for marker in CONTEXTUAL_MARKERS)


@lru_cache(maxsize=1)
def _bundled_summary_prefix() -> str:
    try:
        return PromptLibrary([bundled_prompts_dir()]).render("summary_prefix.md").strip()
    except PromptError:
        return ""


def summary_prefix(home: Path | None = None) -> str:
    """The note that starts a compaction summary (``summary_prefix.md``, user override first).

    A broken user override falls back to the bundled note: it must not break compaction or
    history parsing."""
    try:
        return prompt_library(home).render("summary_prefix.md").strip()
    except PromptError:
        return _bundled_summary_prefix()


def summary_text(summary: str, home: Path | None = None) -> str:
    """The user-role text that carries a compaction summary into the rebuilt history."""
    return f"{summary_prefix(home)}\n\n{summary.strip() or NO_SUMMARY}"


def is_summary_message(text: str, prefix: str | None = None) -> bool:
    """True when ``text`` starts with the given, the current or the bundled summary prefix."""
    candidates = [prefix] if prefix is not None else []
    candidates += [summary_prefix(), _bundled_summary_prefix()]
    text = text.lstrip()
    return any(candidate and text.startswith(candidate.strip()) for candidate in candidates)


def is_real_user_message(item: Item, prefix: str | None = None) -> bool:
    """True only for a user-role message the user typed (not a fragment, not a summary)."""
    if not isinstance(item, Message) or item.role != "user":
        return False
    return not is_contextual_fragment(item.text) and not is_summary_message(item.text, prefix)
