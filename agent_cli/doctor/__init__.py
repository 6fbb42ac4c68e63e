"""`agent doctor`: what the agent finds on this machine and in this folder, and what is broken."""
