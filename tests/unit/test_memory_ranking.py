"""Ranking: similarity * 0.5 + confidence * 0.3 + scope priority * 0.2, on a table of examples."""

from __future__ import annotations

import pytest

from agent_cli.memory.model import Memory
from agent_cli.memory.ranking import DEFAULT_MIN_SCORE, rank, score, select, similarity
from agent_cli.memory.terms import query_words, text_terms


def memory(
    text: str, scope: str = "project", confidence: float = 1.0, number: int = 1, updated: str = "2026-01-01T00:00:00Z"
) -> Memory:
    return Memory(number, scope, text, confidence=confidence, updated=updated, terms=text_terms(text))


@pytest.mark.parametrize(
    ("query", "text", "scope", "confidence", "expected", "recalled"),
    [
        # same words, stemmed: deploy/deploys/deploying and staging/stage
        (
            "How do I deploy to staging?",
            "Deploys to staging go through make ship",
            "project",
            1.0,
            0.5 * 2 / (2 * 5) ** 0.5 + 0.3 + 0.16,
            True,
        ),
        ("deploying staging", "staging deploy", "session", 1.0, 0.5 + 0.3 + 0.2, True),
        # the same match scores less in a lower-priority scope and with less confidence
        ("deploying staging", "staging deploy", "user", 0.5, 0.5 + 0.15 + 0.12, True),
        # one shared word in a long memory: below the default threshold
        (
            "what does the release checklist say",
            "the release notes are written by hand from the changelog and the milestone list",
            "project",
            0.8,
            None,
            False,
        ),
        # no shared word at all
        ("capital of France", "Use pnpm, never npm", "session", 1.0, 0.3 + 0.2, False),
    ],
)
def test_scored_examples(query, text, scope, confidence, expected, recalled):
    _, stems = query_words(query)
    [scored] = rank(stems, [memory(text, scope, confidence)])
    if expected is not None:
        assert scored.score == pytest.approx(expected, abs=1e-9)
    assert (scored.score >= DEFAULT_MIN_SCORE and scored.similarity > 0) is recalled


def test_similarity_is_the_cosine_of_the_stem_sets():
    assert similarity(frozenset("ab"), frozenset("ab")) == 1.0
    assert similarity(frozenset("ab"), frozenset("cd")) == 0.0
    assert similarity(frozenset("a"), frozenset("abcd")) == pytest.approx(0.5)
    assert similarity(frozenset(), frozenset("a")) == 0.0


def test_scope_breaks_ties_and_then_the_newer_memory_wins():
    _, stems = query_words("lint config")
    ranked = rank(
        stems,
        [
            memory("lint config", "user", number=1),
            memory("lint config", "session", number=2),
            memory("lint config", "project", number=3, updated="2026-01-01T00:00:00Z"),
            memory("lint config", "project", number=4, updated="2026-02-01T00:00:00Z"),
        ],
    )
    assert [s.memory.ref for s in ranked] == ["s2", "p4", "p3", "u1"]
    assert score(1.0, 1.0, "session") == pytest.approx(1.0)


def test_select_keeps_top_k_above_the_minimum_within_the_character_budget():
    _, stems = query_words("docker compose")
    long_text = "docker compose " + "x" * 300
    ranked = rank(
        stems,
        [
            memory("docker compose", "session", number=1),
            memory(long_text, "session", number=2),
            memory("docker compose up", "project", number=3),
            memory("docker", "user", 0.1, number=4),
        ],
    )
    assert [s.memory.ref for s in select(ranked, top_k=5, max_chars=100, min_score=0.6)] == ["s1", "p3"]  # s2 too long
    assert [s.memory.ref for s in select(ranked, top_k=1, max_chars=2000, min_score=0.6)] == ["s1"]
    assert select(ranked, top_k=5, max_chars=2000, min_score=1.01) == []


def test_query_words_drop_stopwords_and_repeat_stems():
    words, stems = query_words("How do I DEPLOY the deploys to the Staging server?")
    assert words == [("deploy", "deploi"), ("staging", "stage"), ("server", "server")]
    assert stems == {"deploi", "stage", "server"}
