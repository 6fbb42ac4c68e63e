"""A scripted browser for ``$BROWSER``: opens the authorization URL, signs in on the test server's
form as ``$TEST_BROWSER_USER`` and follows the redirect to the agent's loopback listener. Each URL
it was given is appended to ``$TEST_BROWSER_LOG``."""

from __future__ import annotations

import os
import re
import sys
import urllib.parse
import urllib.request


def main(url: str) -> None:
    with open(os.environ["TEST_BROWSER_LOG"], "a", encoding="utf-8") as log:
        log.write(url + "\n")
    with urllib.request.urlopen(url, timeout=30) as page:  # the authorize endpoint redirects to the form
        form_url, html = page.geturl(), page.read().decode()
    session = re.search(r'name="session" value="([^"]*)"', html)
    if session is None:
        sys.exit(f"no sign-in form at {form_url}")
    body = urllib.parse.urlencode({"session": session.group(1), "user": os.environ.get("TEST_BROWSER_USER", "alice")})
    # the form's answer redirects to the loopback listener, which says "Signed in"
    with urllib.request.urlopen(urllib.request.Request(form_url, data=body.encode()), timeout=30) as done:
        done.read()


if __name__ == "__main__":
    main(sys.argv[1])
