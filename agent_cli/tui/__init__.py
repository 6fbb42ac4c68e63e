"""The interactive Textual front end. Only ``agent`` (not ``agent exec``) imports this package."""
