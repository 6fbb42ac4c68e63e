"""What the app's parts (background work, session switching, command actions) reach in the app:
its session and config, the widgets they update, and Textual's ways to run work. A Protocol, so
those modules need not import ``tui/app.py`` (which imports them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from textual.screen import Screen
from textual.worker import Worker

from agent_cli import events as ev
from agent_cli.commands.conversation import Driven
from agent_cli.config import Config
from agent_cli.session import Session
from agent_cli.tui.event_renderer import EventRenderer
from agent_cli.tui.hosted import Hosted
from agent_cli.tui.prompt_queue import PromptQueue
from agent_cli.tui.widgets.activity_indicator import ActivityIndicator
from agent_cli.tui.widgets.composer import Composer
from agent_cli.tui.widgets.status_bar import StatusBar
from agent_cli.tui.widgets.transcript import Transcript

ResultType = TypeVar("ResultType")


class AppHost(Protocol):
    config: Config
    remote: Hosted | None  # a session in a host (agent --remote, agent attach); None: in this process
    renderer: EventRenderer
    transcript: Transcript
    composer: Composer
    status: StatusBar
    activity: ActivityIndicator
    queue: PromptQueue

    @property
    def session(self) -> Session:
        """The session in this process (none when ``remote`` is set)."""
        ...

    @property
    def conversation(self) -> Driven:
        """The session as it is driven: operations in, events out, wherever it runs."""
        ...

    def run_worker(
        self,
        work: Any,
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[Any]: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...

    async def push_screen_wait(self, screen: Screen[ResultType]) -> ResultType:
        """The dialog's answer (only from inside a worker)."""
        ...

    def switch_to(self, session: Session, config: Config | None = None) -> None:
        """Carry on with ``session`` (and ``config``, when it changed: another folder, another provider)."""

    async def handle_event(self, event: ev.Event) -> None:
        """Show an event (made terminal-safe there) as the app shows a turn's."""

    def next_config(self) -> Config:
        """The config a new or resumed session opens with."""
        ...
