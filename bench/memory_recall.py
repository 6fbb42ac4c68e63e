"""Recall latency with 100, 10,000 and 100,000 memories (target: < 20 ms at 100,000, sub-linear).

Run: python bench/memory_recall.py [--sizes 100,10000,100000] [--runs 30]

Each size gets a fresh user-scope database filled with synthetic one-sentence memories (a mix of
common developer words and rarer ones, so queries match many rows the way real ones do), plus a
small project scope. What is timed is :meth:`MemoryBook.recall` for a set of user messages:
stemming the query, the FTS5 search of every scope, ranking, and recording the use of what was
recalled. The median is printed with the database size and the ratio to the smallest size.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli.memory.book import MemoryBook  # noqa: E402
from agent_cli.memory.terms import texts_terms  # noqa: E402

COMMON = (
    "deploy staging production server build test lint format docker compose python node pnpm npm release "
    "branch commit review database migration cache config logging retry timeout api client auth token "
    "session queue worker cron backup monitor alert metric dashboard schema index query"
).split()
QUERIES = (
    "How do I deploy the staging server with docker compose?",
    "the database migration failed again, what do we usually do about the schema index?",
    "Run the tests and fix the lint errors before the release branch is cut",
    "why is the api client timing out on retry?",
    "What is the capital of France?",
)
BATCH = 2_000


def sentence(rng: random.Random, rare: list[str]) -> str:
    words = rng.sample(COMMON, 3) + rng.sample(rare, 5)
    rng.shuffle(words)
    return "Remember: " + " ".join(words) + "."


def fill(book: MemoryBook, count: int, rng: random.Random) -> None:
    rare = [f"term{n}" for n in range(20_000)]
    store = book.store("user")
    db = store._db  # bulk load: the save path (gate, duplicate check) is not what is measured
    for start in range(0, count, BATCH):
        texts = [sentence(rng, rare) for _ in range(min(BATCH, count - start))]
        batch_terms = texts_terms(texts)
        rows = [
            (text, "[]", 0.8, "import", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", " ".join(sorted(terms)))
            for text, terms in zip(texts, batch_terms)
        ]
        counts = Counter(term for terms in batch_terms for term in terms)
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO memories(text, tags, confidence, source, created, updated, terms) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.executemany(
            "INSERT INTO term_docs(term, docs) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs",
            counts.items(),
        )
        db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for fact in ("Deploy staging with make ship-staging", "Schema migrations run with make migrate"):
        book.save(fact, "project")


def measure(book: MemoryBook, runs: int) -> tuple[float, float, float]:
    recalled = [len(book.recall(query)) for query in QUERIES]  # also warms the page cache
    timings = []
    for _ in range(runs):
        for query in QUERIES:
            started = time.perf_counter()
            book.recall(query)
            timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000, max(timings) * 1000, statistics.mean(recalled)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,10000,100000")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    rng = random.Random(13)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            home = Path(tmp) / f"home-{size}"
            cwd = Path(tmp) / f"repo-{size}"
            cwd.mkdir()
            book = MemoryBook(home, cwd)
            started = time.perf_counter()
            fill(book, size, rng)
            load = time.perf_counter() - started
            median, worst, recalled = measure(book, args.runs)
            db_size = (home / "memory" / "user.db").stat().st_size
            book.close()
            results.append(
                {
                    "memories": size,
                    "median_ms": round(median, 2),
                    "max_ms": round(worst, 2),
                    "db_bytes": db_size,
                    "load_s": round(load, 1),
                    "recalled": recalled,
                }
            )
    base = results[0]["median_ms"]
    print(f"{'memories':>10} {'median':>9} {'max':>9} {'db size':>10} {'vs smallest':>12} {'recalled/query':>15}")
    for row in results:
        print(
            f"{row['memories']:>10,} {row['median_ms']:>7.2f}ms {row['max_ms']:>7.2f}ms "
            f"{row['db_bytes'] / 1e6:>8.1f}MB {row['median_ms'] / base:>11.1f}x {row['recalled']:>15.1f}"
        )
    largest = results[-1]
    growth = (largest["median_ms"] / base) / (largest["memories"] / results[0]["memories"])
    print(
        f"target: < 20 ms at {largest['memories']:,}: {'met' if largest['median_ms'] < 20 else 'MISSED'}; "
        f"growth {growth:.4f} of linear"
    )
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
