"""The words a text is searched by: FTS5's own tokenizer (``porter unicode61``), minus stopwords.

Stems come from SQLite itself (a scratch in-memory FTS5 table read back through ``fts5vocab``),
so the words Python compares are exactly the ones the index matched: "deploys" and "deploy"
are both ``deploi``. About 0.2 ms per call.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache

TOKENIZER = "porter unicode61 remove_diacritics 2"
MAX_QUERY_WORDS = 32  # a long message (or a pasted log) must not make recall slow
# Words that say nothing about what a message is about (English function words and chat filler).
STOPWORDS = """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each else ever every few
for from further get got had has have having he her here hers him his how i if in into is it its
itself just let like me more most my myself no nor not now of off on once only or other our ours
out over own please same she should so some such than thank thanks that the their theirs them
then there these they this those through to too under until up us very via want was we were what
when where which while who whom why will with would yes yet you your yours
""".split()
_WORD = re.compile(r"[^\W_]+")


class _Analyzer:
    def __init__(self) -> None:
        import sqlite3  # on first use (memory/__init__.py)

        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(f"CREATE VIRTUAL TABLE scratch USING fts5(text, tokenize='{TOKENIZER}')")
        self._db.execute("CREATE VIRTUAL TABLE scratch_terms USING fts5vocab(scratch, 'instance')")

    def stems(self, texts: Sequence[str]) -> list[set[str]]:
        """The stems of each text, in order."""
        result: list[set[str]] = [set() for _ in texts]
        with self._lock:
            self._db.execute("DELETE FROM scratch")
            self._db.executemany("INSERT INTO scratch(rowid, text) VALUES (?, ?)", enumerate(texts))
            for term, doc in self._db.execute("SELECT term, doc FROM scratch_terms"):
                result[doc].add(term)
        return result


@lru_cache(maxsize=1)
def _analyzer() -> _Analyzer:
    return _Analyzer()


@lru_cache(maxsize=1)
def stop_stems() -> frozenset[str]:
    return frozenset(_analyzer().stems([" ".join(STOPWORDS)])[0])


def text_terms(text: str) -> frozenset[str]:
    """The stems a stored text is matched by (stopwords and one-letter words left out)."""
    return texts_terms([text])[0]


def texts_terms(texts: Sequence[str]) -> list[frozenset[str]]:
    stops = stop_stems()
    return [frozenset(s for s in stems if len(s) > 1 and s not in stops) for stems in _analyzer().stems(texts)]


def query_words(text: str) -> tuple[list[tuple[str, str]], frozenset[str]]:
    """The words of ``text`` worth searching for (at most MAX_QUERY_WORDS), each with its stem,
    and all their stems."""
    words = list(dict.fromkeys(word.lower() for word in _WORD.findall(text)))
    if not words:
        return [], frozenset()
    stops = stop_stems()
    kept: list[tuple[str, str]] = []
    stems: set[str] = set()
    for word, word_stems in zip(words, _analyzer().stems(words)):
        useful = {stem for stem in word_stems if len(stem) > 1 and stem not in stops}
        if useful and not useful <= stems:
            kept.append((word, min(useful)))
            stems |= useful
        if len(kept) == MAX_QUERY_WORDS:
            break
    return kept, frozenset(stems)


def quoted(word: str) -> str:
    """``word`` as an FTS5 string, so it is never read as an operator."""
    return '"' + word.replace('"', '""') + '"'


def match_expression(words: Sequence[str], docs: Mapping[str, int] | None = None, budget: int = 0) -> str | None:
    """An FTS5 query for ``words`` (word -> its stem's document count in ``docs``).

    Without counts: any of the words. With them, cost stays bounded however large the database
    is: the rarest words, any of them, while their documents add up to at most ``budget``; the
    commoner rest only all together (``a AND b``), since one common word says little. Words no
    memory contains are left out; None when nothing is left to search for.
    """
    if docs is None:
        return " OR ".join(quoted(word) for word in words) or None
    present = sorted((docs[word], word) for word in words if docs.get(word))
    rare: list[str] = []
    spent = 0
    for count, word in present:
        if spent + count > budget:
            break
        rare.append(word)
        spent += count
    common = [word for _, word in present[len(rare) :]]
    clauses = [quoted(word) for word in rare]
    if len(common) >= 2:
        clauses.append("(" + " AND ".join(quoted(word) for word in common) + ")")
    return " OR ".join(clauses) or None
