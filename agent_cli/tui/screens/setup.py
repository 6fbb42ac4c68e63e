"""The set-up screen, shown instead of an error when no provider can be used (first run, or
``/login``): OpenAI or Anthropic with a pasted key, a local server found on this machine, or any
OpenAI-compatible URL. A key is tried with one cheap request (the models list) before it is
stored (``auth.json``, 0600, under the agent's home); the Input masks it, so it is never shown.
Dismissed with the :class:`Choice` saved (``setup.json``), or None when the user left."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.auth.choice import DEFAULT_MODELS, Choice, write_setup
from agent_cli.auth.keys import store_key
from agent_cli.display import home_relative
from agent_cli.models.key_check import (
    ANTHROPIC_URL,
    LOCAL_SERVERS,
    OPENAI_URL,
    LocalServer,
    check_models,
    find_local_servers,
)
from agent_cli.models.registry import BUILTIN_PROVIDERS, resolve_base_url
from agent_cli.tui.screens.dialog import DialogScreen

CUSTOM_ID = "custom"  # the provider id an OpenAI-compatible URL is saved under
CUSTOM_KEY = "CUSTOM_API_KEY"  # the variable its key is stored under, when it needs one
KEYED = {
    "openai": ("OpenAI", "OPENAI_API_KEY", "responses", OPENAI_URL),
    "anthropic": ("Anthropic", "ANTHROPIC_API_KEY", "anthropic", ANTHROPIC_URL),
}


class SetupScreen(DialogScreen[Choice | None]):
    DEFAULT_CSS = """
    SetupScreen { align: center middle; }
    SetupScreen > #dialog { border: thick $primary; }
    SetupScreen OptionList { height: auto; max-height: 16; margin: 1 0 0 0; }
    SetupScreen #status { margin: 1 0 0 0; color: $text-muted; }
    SetupScreen #status.-error { color: $error; }
    SetupScreen Input { margin: 1 0 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "back", show=False)]

    def __init__(self, home: Path, reason: str = "", servers: tuple[LocalServer, ...] = LOCAL_SERVERS) -> None:
        super().__init__()
        self.home = home
        self.reason = reason
        self.servers = servers
        self.step = "choose"  # choose -> key | url -> model
        self.provider = ""  # what the key or the models are for
        self.base_url = ""
        self.env_key: str | None = None
        self.found: list[tuple[LocalServer, tuple[str, ...]]] = []
        self.entries: list[str] = []  # the option ids shown

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Set up a model", id="title")
            yield Static(self.reason or "Choose where the model runs.", id="intro")
            yield OptionList(id="choices")
            yield Input(id="entry")
            yield Static("", id="status")

    def on_mount(self) -> None:
        self.query_one("#entry", Input).display = False
        self._show_choices()
        self._status("looking for local servers (Ollama, LM Studio, llama.cpp, vLLM)…")
        self._probe()

    # --- steps ---------------------------------------------------------------------------

    def _show_choices(self) -> None:
        self.step = "choose"
        options = [
            ("openai", "OpenAI: paste an API key"),
            ("anthropic", "Anthropic: paste an API key"),
            *((f"local:{s.id}", f"{s.name} at {s.base_url} ({len(models)} models)") for s, models in self.found),
            ("url", "Another OpenAI-compatible server: type its URL"),
        ]
        self._options(options)

    def _options(self, options: list[tuple[str, str]]) -> None:
        self.entries = [key for key, _ in options]
        choices = self.query_one("#choices", OptionList)
        choices.set_options([Option(label) for _, label in options])
        choices.display = True
        choices.highlighted = 0 if options else None
        self.query_one("#entry", Input).display = False
        choices.focus()

    def _ask(self, placeholder: str, *, password: bool) -> None:
        entry = self.query_one("#entry", Input)
        entry.value = ""
        entry.password = password
        entry.placeholder = placeholder
        entry.display = True
        self.query_one("#choices", OptionList).display = False
        entry.focus()

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(text)
        status.set_class(error, "-error")

    @work(exclusive=True, group="probe")
    async def _probe(self) -> None:
        found = await find_local_servers(self.servers)
        self.found = [(server, check.models) for server, check in found if check.models]
        names = ", ".join(f"{s.name} :{s.base_url.split(':')[-1].split('/')[0]}" for s in self.servers)
        self._status(
            f"found {len(self.found)} local server(s)" if self.found else f"no local server answered ({names})"
        )
        if self.step == "choose":
            self._show_choices()

    @on(OptionList.OptionSelected, "#choices")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        picked = self.entries[event.option_index]
        if self.step == "model":
            self._save(Choice(self.provider, picked, None, self._provider_tables()))
        elif picked in KEYED:
            name = KEYED[picked][0]
            self.step, self.provider = "key", picked
            self._ask(f"paste your {name} API key · enter tries it · esc goes back", password=True)
            self._status(f"the key is stored in {home_relative(self.home / 'auth.json')}, readable by you only")
        elif picked == "url":
            self.step, self.provider, self.env_key = "url", CUSTOM_ID, None
            self._ask("the server's URL, e.g. http://localhost:8080/v1 · enter tries it", password=False)
            self._status("")
        else:
            server, models = next((s, m) for s, m in self.found if f"local:{s.id}" == picked)
            self.provider, self.base_url, self.env_key = server.id, server.base_url, None
            self._pick_model(models, f"{server.name} serves these models; pick one")

    def _pick_model(self, models: tuple[str, ...], text: str) -> None:
        self._options([(model, model) for model in models])
        self.step = "model"
        self._status(text)

    @on(Input.Submitted, "#entry")
    def entered(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if not value:
            return
        if self.step == "url" and not self.base_url:
            self.base_url = value.rstrip("/")
        self._status("trying it…")
        self._try(value)

    @work(exclusive=True, group="try")
    async def _try(self, value: str) -> None:
        if self.provider in KEYED:
            name, env_key, wire, default_url = KEYED[self.provider]
            base = resolve_base_url(BUILTIN_PROVIDERS[self.provider]) or default_url
            check = await check_models(base, value, wire)
            if check.status in (401, 403):
                self._status(f"{name} did not accept it: {check.message}. Paste another key, or esc.", error=True)
                self.query_one("#entry", Input).value = ""
                return
            if not check.ok:  # the key was never judged: the network, the URL or the server failed
                self._status(
                    f"could not check the key with {name}: {check.message}. Nothing was stored; "
                    "enter tries again, esc goes back.",
                    error=True,
                )
                return
            store_key(env_key, value, self.home)
            self._save(Choice(self.provider, DEFAULT_MODELS[self.provider]))
            return
        key = value if self.step == "key" else None
        check = await check_models(self.base_url, key, "chat")
        if check.status in (401, 403) and key is None:
            self.step = "key"
            self._ask("the server wants a key: paste it · enter tries it", password=True)
            self._status(f"{self.base_url}: {check.message}")
            return
        if not check.ok or not check.models:
            self.base_url = "" if self.step == "url" else self.base_url
            problem = check.message if not check.ok else "it lists no models"
            self._status(f"that did not work: {problem}. Try again, or esc.", error=True)
            return
        if key is not None:
            self.env_key = CUSTOM_KEY
            store_key(CUSTOM_KEY, key, self.home)
        self._pick_model(check.models, f"{self.base_url} serves these models; pick one")

    def _provider_tables(self) -> dict[str, dict[str, object]]:
        """What a server needs in [model_providers]: its URL (a built-in's may differ from the
        default port), and a name and wire for one that is not built in."""
        if self.provider in KEYED:
            return {}
        table: dict[str, object] = {"base_url": self.base_url}
        if self.provider not in BUILTIN_PROVIDERS:
            name = next((s.name for s in self.servers if s.id == self.provider), "OpenAI-compatible server")
            table.update(name=name, wire_api="chat")
        if self.env_key:
            table["env_key"] = self.env_key
        return {self.provider: table}

    def _save(self, choice: Choice) -> None:
        write_setup(self.home, choice)
        self.dismiss(choice)

    def action_back(self) -> None:
        if self.step == "choose":
            self.dismiss(None)
            return
        self.base_url, self.env_key = "", None
        self._show_choices()
        self._status("")
