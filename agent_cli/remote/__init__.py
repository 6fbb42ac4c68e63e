"""The client side of the app-server protocol, for our own front ends: a session in a host driven
as a session in this process is (conversation.py), the per-user background host (host.py) and its
live sessions (live.py). docs/app-server.md and docs/tui.md describe what they offer."""
