"""Warm start for `agent exec`: a per-user process that has already imported the program and the
provider SDKs forks a fresh child for each run (server.py); the `agent` launcher hands it its
arguments, environment, working folder and standard streams over a Unix socket and relays
signals and the exit status (client.py). Everything else about a run is as in a cold start."""
