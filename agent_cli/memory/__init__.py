"""Memory: facts and preferences kept across sessions and recalled when relevant.

Nothing here is imported until memory is used (the first turn, a memory tool or command), so
start-up does not pay for ``sqlite3``. The parts: :mod:`.model` (a memory, its id and scope),
:mod:`.gate` (what may be written), :mod:`.terms` (the words a text is searched by),
:mod:`.store` (one SQLite + FTS5 database per scope), :mod:`.ranking`, :mod:`.book` (every
scope of one session), :mod:`.tools`
and :mod:`.transfer` (JSON lines export and import). The ``<memories>`` fragment of each turn
is ``session/memory_recall.py``.
"""
