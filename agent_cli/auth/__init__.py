"""Keys stored by `agent login` and the set-up screen, and which provider a run uses when the
config names none (see docs/tui.md, "First run")."""
