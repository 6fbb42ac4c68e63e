"""Checkpoints: snapshots of the working tree taken before the agent changes it, and restoring them.

``store.py`` finds where snapshots go (the repository's own object store under ``refs/agent/``, or
a shadow repository for a plain directory); ``snapshot.py`` takes one without touching the user's
index, HEAD, branches or stash; ``restore.py`` plans and applies a restore, refusing to overwrite
hand edits. The session side (``session/checkpointing.py``) decides when to take them and records
them in the session file.
"""
