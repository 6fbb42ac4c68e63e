"""Memory: facts and preferences kept across sessions and recalled when relevant.

``sqlite3`` is imported only where a database is opened or searched (:mod:`.store`,
:mod:`.terms`), so a session that does not use memory never pays for it, while the modules
here are imported at the top like the rest of the project's. The parts: :mod:`.model` (a memory, its id and scope),
:mod:`.gate` (what may be written), :mod:`.terms` (the words a text is searched by),
:mod:`.store` (one SQLite + FTS5 database per scope), :mod:`.ranking`, :mod:`.book` (every
scope of one session), :mod:`.tools`
and :mod:`.transfer` (JSON lines export and import). The ``<memories>`` fragment of each turn
is ``session/memory_recall.py``.
"""
