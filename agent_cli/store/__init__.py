"""The session-file store: one JSON-lines file per session under $AGENT_HOME/sessions.

rollout.py writes a session's file as its history changes (and reads one back), catalog.py lists
and finds them, repair.py keeps the lines of a damaged one that parse, branches.py reads the
conversations a rewind left behind, replay.py turns a saved history into the events a live turn
showed, names.py a session's name (/rename). Filling a Session from its file (session/resume.py) and forking one (session/forking.py)
sit with the session, above this package.
"""
