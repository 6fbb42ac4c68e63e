"""The sandbox's network by domain: what sandboxed commands (and web_fetch) may reach.

lists.py reads the allowed and denied domains from Claude Code's settings, our config and the
WebFetch(domain:…) rules (domains.py: one entry); gate.py decides per host (the lists, the user's
answers this session, a question); proxy.py is the HTTP/SOCKS5 proxy the agent runs outside the
sandbox on a Unix socket (protocols.py reads the requests, connect.py resolves and connects,
addresses.py says which addresses are private); session_network.py puts them together for a
session (the three modes) and saving.py writes "don't ask again". The bridge that carries a
command's connections to the proxy is the sandbox's (sandbox/bridge.py, sandbox/network.py).
"""
