"""The set-up screen (`agent` with no usable key, and ``/login``), ``/logout`` and ``/clear``,
driven with Textual's pilot against the fake server (issue 35, items 1 and 9)."""

from __future__ import annotations

import json
import stat

from agent_cli.config import load_config
from agent_cli.models.key_check import LocalServer
from agent_cli.tui.first_run import SetupApp
from agent_cli.tui.screens.setup import SetupScreen
from tests.fake_server import FakeModelServer
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until

SECRET = "sk-pasted-9876"
NOWHERE = (LocalServer("ollama", "Ollama", "http://127.0.0.1:9/v1"),)  # the discard port: nothing answers


async def test_a_pasted_key_is_tried_stored_0600_and_never_shown(server, isolated_home, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    app = SetupApp(isolated_home, "No key for OpenAI.", NOWHERE)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "no local server answered" in screen_text(app), what="the probe")
        assert "OpenAI: paste an API key" in screen_text(app)
        await pilot.press("enter")  # OpenAI, the first choice
        await type_text(pilot, SECRET)
        assert SECRET not in screen_text(app)  # masked while typed
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.return_value is not None, what="the set-up to finish")
    assert app.return_value.provider == "openai"
    stored = isolated_home / "auth.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert json.loads(stored.read_text())["keys"]["OPENAI_API_KEY"] == SECRET
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert load_config().provider.id == "openai"


async def test_a_refused_key_says_plainly_what_failed(isolated_home, monkeypatch):
    refuse = {("GET", "/v1/models"): lambda rec: (401, {"error": {"message": "Incorrect API key provided"}})}
    with FakeModelServer(routes=refuse) as refusing:
        monkeypatch.setenv("OPENAI_BASE_URL", refusing.openai_base_url)
        app = SetupApp(isolated_home, "", NOWHERE)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("enter")
            await type_text(pilot, "sk-wrong")
            await pilot.press("enter")
            await wait_until(pilot, lambda: "did not accept it" in screen_text(app), what="the failure")
            assert "OpenAI did not accept it: the key was refused (401: Incorrect API key provided)" in screen_text(app)
            assert "sk-wrong" not in screen_text(app)
    assert not (isolated_home / "auth.json").exists()


async def test_a_local_server_found_on_this_machine_is_offered_with_its_models(server, isolated_home):
    found = (LocalServer("llamacpp", "llama.cpp", server.openai_base_url), *NOWHERE)
    app = SetupApp(isolated_home, "", found)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "llama.cpp at" in screen_text(app), what="the local server")
        await pilot.press("down", "down", "enter")  # OpenAI, Anthropic, then llama.cpp
        await wait_until(pilot, lambda: "serves these models" in screen_text(app), what="its models")
        assert "fake-model" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.return_value is not None, what="the set-up to finish")
    config = load_config()
    assert (config.provider.id, config.model, config.provider.base_url) == (
        "llamacpp",
        "fake-model",
        server.openai_base_url,
    )
    assert not config.provider.requires_key


async def test_login_opens_the_set_up_screen_and_logout_forgets_the_key(make_app, server, isolated_home):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/login")
        await wait_until(pilot, lambda: isinstance(app.screen, SetupScreen), what="the set-up screen")
        await pilot.pause()
        assert not app.activity.has_class("-busy")  # no "working" spinner under the dialog (issue 51, item 12)
        await pilot.press("enter")
        await type_text(pilot, SECRET)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "now using" in screen_text(app), what="the new session")
        await wait_idle(pilot)
        assert json.loads((isolated_home / "auth.json").read_text())["keys"] == {"OPENAI_API_KEY": SECRET}
        app.send("/logout")
        await wait_until(pilot, lambda: "removed OPENAI_API_KEY" in screen_text(app), what="logout")
        assert "OPENAI_API_KEY is still set in the environment" in screen_text(app)
    assert json.loads((isolated_home / "auth.json").read_text())["keys"] == {}


async def test_clear_starts_a_new_conversation_and_an_unknown_command_names_the_closest(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/clear")
        await wait_until(pilot, lambda: "new session started" in screen_text(app), what="/clear")
        await wait_idle(pilot)
        app.send("/stauts")
        await wait_until(pilot, lambda: "unknown command /stauts" in screen_text(app), what="the error")
        assert "did you mean /status" in screen_text(app)


async def test_a_network_failure_is_not_called_a_refused_key(isolated_home, monkeypatch):
    """Issue 51, item 12: nothing answering said "OpenAI did not accept it"; it says the key could
    not be checked, and why."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # the discard port: nothing answers
    app = SetupApp(isolated_home, "", NOWHERE)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        await type_text(pilot, "sk-maybe-fine")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "could not check the key" in screen_text(app), what="the failure")
        shown = " ".join(screen_text(app).replace("█", " ").split())  # wrapped lines, without the frame
        assert "did not accept" not in shown and "nothing answered at" in shown and "Nothing was stored" in shown
    assert not (isolated_home / "auth.json").exists()
