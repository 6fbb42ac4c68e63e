"""The web page `agent app-server` serves (issue #48), in a real browser: Debian's Chromium,
headless, driven by Playwright, against a real server process and the scripted model server.

Without a token the page is a token prompt and nothing else; a prompt typed on the page runs a
shell command once Allow is clicked, and the answer appears (markdown and a diff rendered, the
model's HTML shown as text); a second tab, 375 px wide, follows the same session live and shows
the approval buttons without scrolling sideways; a page from another site, or from a rebound DNS
name, cannot open the WebSocket. One browser for the module.

``AGENT_WEB_SCREENSHOTS=DIR`` saves the screenshots of docs/app-server.md there."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.app_server_helpers import TOKEN, AppServer
from tests.browser import REBOUND_NAME, browser_missing, chromium
from tests.conftest import git_init
from tests.fake_server import Reply, ToolCall

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
    pytest.mark.asyncio(loop_scope="module"),  # one browser for the module, on the module's loop
]
DESKTOP = {"width": 1100, "height": 960}
PHONE = {"width": 375, "height": 740}
COMMAND = "echo made > made.txt && echo printed-by-the-command"
ANSWER = """Done: **made.txt** now exists, and the command said `printed-by-the-command`.

```diff
--- a/notes.txt
+++ b/notes.txt
@@ -1 +1 @@
-old line
+new line
```

- one
- two

<img src=x onerror="document.title='pwned'"> <script>document.title='pwned'</script> [a link](javascript:alert(1))
"""
OPEN_SOCKET = """([url, protocols]) => new Promise((resolve) => {
  const socket = new WebSocket(url, protocols);
  socket.onopen = () => { socket.close(); resolve("open"); };
  socket.onclose = () => resolve("refused");
})"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    async with chromium() as launched:
        yield launched


@pytest.fixture
def repo(tmp_path) -> Path:
    return git_init(tmp_path / "repo")


def token_file(folder: Path) -> Path:
    path = folder / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    return path


def start_with_page(app_servers, repo: Path, *args: str) -> tuple[AppServer, str]:
    running = app_servers(
        repo, "--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token", "--ws-token-file",
        str(token_file(repo.parent)), *args,
    )  # fmt: skip
    return running, running.url.replace("ws://", "http://") + "/"


async def screenshot(page: Any, name: str) -> None:
    if folder := os.environ.get("AGENT_WEB_SCREENSHOTS"):
        await page.evaluate("window.scrollTo(0, 0)")
        await page.screenshot(path=str(Path(folder) / name))


async def test_without_a_token_the_page_is_a_token_prompt_and_nothing_else(browser, app_servers, repo):
    running, base = start_with_page(app_servers, repo)
    context = await browser.new_context(viewport=DESKTOP)
    page = await context.new_page()
    await page.goto(base)
    prompt = page.locator("form.token-prompt")
    await prompt.wait_for()
    assert (await page.locator(".sessions, nav.bar").count()) == 0  # no session, no navigation: only the prompt
    await screenshot(page, "web-token-prompt.png")

    await page.fill("input[name=token]", "not-the-token")
    await page.click("form.token-prompt button")
    await page.locator("form.token-prompt .problem").wait_for()
    assert "refused" in await page.inner_text("form.token-prompt .problem")
    assert (await page.locator(".sessions").count()) == 0

    await page.fill("input[name=token]", TOKEN)
    await page.click("form.token-prompt button")
    await page.locator("ul.sessions").wait_for()
    assert await page.evaluate("sessionStorage.length") == 1
    await context.close()
    logged = "".join(running.stderr) + "".join(
        p.read_text() for p in (Path(os.environ["AGENT_HOME"]) / "logs").glob("*")
    )
    assert TOKEN not in logged


async def test_a_prompt_typed_on_the_page_runs_a_command_after_allow_and_a_second_tab_follows_it_live(
    browser, server, app_servers, repo
):
    server.script(
        Reply(text="I will make the file.", tool_calls=[ToolCall("shell", {"command": COMMAND})]), Reply(text=ANSWER)
    )
    prices = ["-c", "model_prices.test-model.input=2.5", "-c", "model_prices.test-model.output=10"]
    running, base = start_with_page(app_servers, repo, "-a", "untrusted", *prices)
    desktop = await browser.new_context(viewport=DESKTOP)
    first = await desktop.new_page()
    await first.goto(base + "?token=" + TOKEN)
    await first.locator("ul.sessions").wait_for()
    assert first.url == base  # the token left the address bar (and the history) at once
    await first.click("button.new")
    await first.fill("input[name=folder]", str(repo))
    await first.fill("textarea[name=prompt]", "make the file")
    await first.click("form.new-session button[type=submit]")
    await first.locator(".approval button.allow").wait_for()
    assert COMMAND in await first.inner_text(".approval pre.cmd")
    assert not (repo / "made.txt").exists()

    phone = await browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    second = await phone.new_page()
    await second.goto(base + "?token=" + TOKEN)
    row = second.locator("li.session.waiting")  # the list tells the session waits for an approval
    await row.wait_for()
    await screenshot(second, "web-sessions-phone.png")
    await row.locator("a").click()
    buttons = second.locator(".approval:not(.closed) .choices button")
    await buttons.first.wait_for()
    assert (await buttons.all_inner_texts()) == ["Allow", "Allow for the session", "Deny"]
    assert await second.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # no sideways scrolling
    for button in await buttons.all():
        box = await button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    await screenshot(second, "web-approval-phone.png")

    await first.click(".approval button.allow")
    await second.locator(".approval .answered", has_text="Answered elsewhere").wait_for()
    for page in (first, second):
        await page.locator(".tool.command .output", has_text="printed-by-the-command").wait_for()
        await page.locator(".msg.agent strong", has_text="made.txt").wait_for()
    assert (repo / "made.txt").read_text() == "made\n"

    for page in (first, second):  # the model's markdown rendered, its HTML shown as text and never run
        answer = page.locator(".msg.agent").last
        assert (await answer.locator(".diff .add").inner_text()).strip() == "+new line"
        assert (await answer.locator("li").all_inner_texts()) == ["one", "two"]
        assert "<img src=x onerror=" in (await answer.inner_text())
        assert (await answer.locator("img, script, a[href^=javascript]").count()) == 0
        assert await page.title() != "pwned"
    await first.locator(".thread-head .status.idle").wait_for()
    await first.locator(".thread-head .usage", has_text="tokens · $").wait_for()  # tokens and the estimated cost
    await screenshot(first, "web-session-desktop.png")
    await screenshot(second, "web-session-phone.png")
    await desktop.close()
    await phone.close()


async def test_a_page_from_another_site_or_a_rebound_name_cannot_open_the_websocket(browser, app_servers, repo):
    running, base = start_with_page(app_servers, repo)
    port = base.rsplit(":", 1)[1].strip("/")
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(base)  # our own page: the control, it may open the socket with the token
    protocols = ["agent-app-server", await page.evaluate(f"import('./rpc.js').then((m) => m.tokenProtocol({TOKEN!r}))")]
    assert await page.evaluate(OPEN_SOCKET, [f"ws://127.0.0.1:{port}/", protocols]) == "open"
    assert (
        await page.evaluate(OPEN_SOCKET, [f"ws://127.0.0.1:{port}/", ["agent-app-server", "bearer.d3Jvbmc"]])
        == "refused"
    )

    # Another site's page (served here by the browser itself) tries with the right token: refused.
    await page.route(
        "http://elsewhere.example/", lambda route: route.fulfill(body="<p>another site</p>", content_type="text/html")
    )
    await page.goto("http://elsewhere.example/")
    assert await page.evaluate(OPEN_SOCKET, [f"ws://127.0.0.1:{port}/", protocols]) == "refused"

    # DNS rebinding: a name of the attacker's that now resolves to 127.0.0.1 gets neither the page nor the socket.
    rebound = f"http://{REBOUND_NAME}:{port}/"
    answer = await page.goto(rebound)
    assert answer is not None and answer.status == 421
    assert await page.evaluate(OPEN_SOCKET, [f"ws://{REBOUND_NAME}:{port}/", protocols]) == "refused"
    await context.close()
    assert TOKEN not in "".join(running.stderr)
