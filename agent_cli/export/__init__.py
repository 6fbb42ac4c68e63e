"""A conversation written out for people: Markdown for ``/export`` and ``agent sessions export``."""
