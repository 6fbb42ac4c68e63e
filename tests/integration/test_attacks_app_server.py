"""`agent app-server` attacked: a sandboxed command in the place of its Unix socket, a token kept
where sandboxes read, markup for its web page from a model, a command and a file name. A real
server process, the fake model server, our client, Debian's Chromium. (What anyone who reaches the
port without the token may try is in tests/unit/test_app_server_page.py.)"""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from agent_cli.app_server.client import AppServerClient, thread_text
from agent_cli.app_server.options import build_parser, token_file_warning
from agent_cli.sandbox.policy import SandboxPolicy, confine, working_mechanisms
from tests.app_server_helpers import TOKEN
from tests.browser import browser_missing, chromium
from tests.conftest import git_init
from tests.fake_server import Reply, ToolCall

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path


IMPOSTOR = """
import socket, sys
listener = socket.socket(socket.AF_UNIX)
listener.bind(sys.argv[1])
listener.listen()
print("listening", flush=True)
client, _ = listener.accept()
client.settimeout(20)
data = b""
try:
    while chunk := client.recv(4096):
        data += chunk
        if b"\\r\\n\\r\\n" in data:
            break
except OSError:
    pass
print("received", len(data), data[:200], flush=True)
"""


@pytest.mark.parametrize("mechanism", list(working_mechanisms()))
async def test_our_client_tells_nothing_to_a_sandboxed_server_on_a_unix_socket(tmp_path, mechanism):
    """`--listen unix://PATH` with PATH where sandboxes may write (/tmp, a workspace): a command in
    a sandbox removes the socket and listens there itself. Our client (`agent --remote`, `attach`)
    sent it its handshake and then the user's prompts and answers. It now checks who listens, as
    the warm exec launcher does, and sends nothing to a process more confined than itself."""
    path = tmp_path / "app-server.sock"
    sandbox = SandboxPolicy.create("workspace-write", tmp_path / "work")
    (tmp_path / "work").mkdir()
    impostor = subprocess.Popen(
        confine([sys.executable, "-c", IMPOSTOR, str(path)], sandbox, mechanism),
        cwd=tmp_path / "work",
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert impostor.stdout is not None and impostor.stdout.readline() == "listening\n"
        with pytest.raises(ConnectionError, match="confined|namespace"):
            await AppServerClient.connect(f"unix://{path}")
        told = impostor.communicate(timeout=30)[0]
    finally:
        impostor.kill()
        impostor.wait()
    assert told.startswith("received 0 "), told


def test_a_token_file_sandboxed_commands_can_read_is_warned_about(tmp_path, isolated_home):
    """Every sandbox hides $AGENT_HOME/*.token (the place docs/app-server.md keeps it); a token
    file elsewhere is one a sandboxed command can read, and with the network use on this server."""

    def options(path):
        argv = ["--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token", "--ws-token-file", str(path)]
        return build_parser().parse_args(argv)

    elsewhere, hidden = tmp_path / "token", isolated_home / "app-server.token"
    for path in (elsewhere, hidden):
        path.write_text(TOKEN + "\n")
    assert "sandboxed commands can read" in (token_file_warning(options(elsewhere)) or "")
    assert token_file_warning(options(hidden)) is None


HTML = "<img src=x onerror=\"document.title='pwned'\"><script>alert(1)</script>"


@pytest.mark.serial  # Chromium: heavy, and its page is read against deadlines
@pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
async def test_html_in_a_title_a_file_name_or_a_commands_output_is_shown_as_text(
    server, tmp_path, app_servers, token_file
):
    """What a model, a command or a repository names reaches the page as text: a session title, a
    file the model made, a command's output, all holding markup meant to run there."""
    repo = git_init(tmp_path / "repo")
    running = app_servers(
        repo, "--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token", "--ws-token-file", str(token_file)
    )
    name = "<img src=x onerror=alert(1)>.txt"
    patch = f"*** Begin Patch\n*** Add File: {name}\n+{HTML}\n*** End Patch\n"
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": f"printf '%s\\n' {shlex.quote(HTML)}; echo the-output-ends"})]),
        Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]),
        Reply(text="done"),
    )
    client = await AppServerClient.connect(running.url, token=TOKEN)
    await client.initialize()
    thread = (await client.request("thread/start", {"cwd": str(repo), "approvalPolicy": "never"}))["thread"]
    await client.request("thread/name/set", {"threadId": thread["id"], "name": HTML})
    await client.request("turn/start", {"threadId": thread["id"], "input": thread_text("go")})
    await client.notification("turn/completed", timeout=90)
    assert (repo / name).is_file()
    await client.close()
    async with chromium() as browser:
        page = await (await browser.new_context()).new_page()
        await page.goto(running.url.replace("ws://", "http://") + "/?token=" + TOKEN)
        row = page.locator("li.session")
        await row.wait_for()
        assert HTML in await row.inner_text()
        await row.locator("a").click()
        await page.locator(".tool.command .output", has_text="the-output-ends").wait_for()
        await page.locator(".tool.patch .path", has_text=name).wait_for()
        assert HTML in await page.inner_text(".tool.command .output")
        assert await page.locator("#app img, #app script").count() == 0
        assert await page.title() != "pwned"
