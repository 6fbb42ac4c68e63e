"""How relevant a memory is to a message: ``similarity * 0.5 + confidence * 0.3 + priority * 0.2``.

Similarity is the cosine of the two sets of stems (``|shared| / sqrt(|query| * |memory|)``), in
0..1 and comparable across databases, unlike raw BM25 whose scale depends on each database's size
(and which FTS5 floors to nothing in a database of one or two memories). BM25 still picks the
candidates. Priority: session > project > user.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from agent_cli.memory.model import Memory

SIMILARITY_WEIGHT, CONFIDENCE_WEIGHT, PRIORITY_WEIGHT = 0.5, 0.3, 0.2
SCOPE_PRIORITY = {"session": 1.0, "project": 0.8, "user": 0.6}
# With these weights, a project memory saved by the user (confidence 1) needs a similarity of
# about 0.28 to pass, a user-scope one 0.36, one the model saved with confidence 0.8 about 0.4.
DEFAULT_MIN_SCORE = 0.6


@dataclass(frozen=True, slots=True)
class Scored:
    memory: Memory
    similarity: float
    score: float


def similarity(query: frozenset[str], memory: frozenset[str]) -> float:
    if not query or not memory:
        return 0.0
    return len(query & memory) / math.sqrt(len(query) * len(memory))


def score(similarity_value: float, confidence: float, scope: str) -> float:
    return (
        SIMILARITY_WEIGHT * similarity_value
        + CONFIDENCE_WEIGHT * min(1.0, max(0.0, confidence))
        + PRIORITY_WEIGHT * SCOPE_PRIORITY[scope]
    )


def rank(query: frozenset[str], candidates: Iterable[Memory]) -> list[Scored]:
    """Candidates scored against the query's stems, best first (newest first on a tie)."""
    scored = []
    for memory in candidates:
        value = similarity(query, memory.terms)
        scored.append(Scored(memory, value, score(value, memory.confidence, memory.scope)))
    scored.sort(key=lambda s: s.memory.updated, reverse=True)
    scored.sort(key=lambda s: (-s.score, -s.similarity))  # stable: the newer wins a tie
    return scored


def select(ranked: Iterable[Scored], *, top_k: int, max_chars: int, min_score: float) -> list[Scored]:
    """The best ``top_k`` above ``min_score`` whose texts fit ``max_chars`` together."""
    chosen: list[Scored] = []
    used = 0
    for item in ranked:
        if len(chosen) == top_k or item.score < min_score:
            break
        if used + len(item.memory.text) > max_chars:
            continue  # a shorter one further down may still fit
        chosen.append(item)
        used += len(item.memory.text)
    return chosen
