"""`agent exec`: the session without a screen."""
