"""What the composer completes besides commands: the repository's files after ``@`` (listed off
the UI thread, again at most every ``FILES_REFRESH_SECONDS`` while typing; MCP resources too) and
the skills after ``$``."""

from __future__ import annotations

import time

from agent_cli.context.skills import load_skills, skill_roots
from agent_cli.mcp.prompts import resource_mentions
from agent_cli.tui.app_host import AppHost
from agent_cli.tui.repo_files import list_files

FILES_REFRESH_SECONDS = 30.0


class CompletionSources:
    def __init__(self, app: AppHost) -> None:
        self.app = app
        self.files: list[str] = []
        self._files_loaded_at = float("-inf")
        self._files_loading = False

    def skills(self) -> list[tuple[str, str]]:
        """The skills `$name` completes: the session's, or found afresh before its first turn."""
        if self.app.remote is not None:
            return []  # the host's skills: `$name` still reaches the model as typed
        session, config = self.app.session, self.app.config
        if session.initial is not None:
            found = session.initial.skills
        else:
            found = load_skills(skill_roots(config.cwd, config.agent_home), session.plugins.skills).skills
        return [(skill.name, skill.description) for skill in found]

    def repo_files(self) -> list[str]:
        if time.monotonic() - self._files_loaded_at > FILES_REFRESH_SECONDS and not self._files_loading:
            self._files_loading = True
            self.app.run_worker(self.load_files, thread=True, group="files", exit_on_error=False)
        if self.app.remote is None and self.app.session.mcp is not None:  # @server:uri completes MCP resources too
            return self.files + resource_mentions(self.app.session.mcp.manager)
        return self.files

    def forget_files(self) -> None:
        """The folder changed: the next completion lists its files."""
        self._files_loaded_at = float("-inf")

    def load_files(self) -> None:
        """List the files (in a thread) and refresh an open ``@`` menu with them."""
        self._files_loading = True
        try:
            files = list_files(self.app.config.cwd)
        finally:
            self._files_loading = False
        self.app.call_from_thread(self._files_loaded, files)

    def _files_loaded(self, files: list[str]) -> None:
        self.files = files
        self._files_loaded_at = time.monotonic()
        composer = self.app.composer
        if composer.menu.kind == "file" or "@" in composer.text:
            composer.refresh_completion()
