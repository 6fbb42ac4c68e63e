"""Screens pushed over the main one."""
