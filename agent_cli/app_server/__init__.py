"""`agent app-server`: sessions served over Codex's app-server protocol (docs/app-server.md).

The parts, bottom up: rpc.py (JSON-RPC framing), connection.py (one client: bounded queue out,
bounded requests in), transports.py (stdio, WebSocket over TCP or a Unix socket) with auth.py and
peer.py (who may connect), sessions.py (the one door into the session core), turn_items.py and
items.py (events as Codex's notifications and items), history.py (a saved conversation as turns),
thread.py (a loaded thread: its clients and its turn), server_requests.py and questions.py
(approvals and elicitations), host.py (the loaded threads), methods_*.py (the methods by group),
dispatch.py, serve.py and main.py (the command); client.py is a client of the protocol.
"""
