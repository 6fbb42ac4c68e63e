"""The session core: history, the turn loop, tools and compaction, behind one object."""

from agent_cli.session.session import Session

__all__ = ["Session"]
