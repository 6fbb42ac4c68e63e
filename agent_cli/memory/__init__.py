"""Memory: store, write gate and recall (issue 13)."""
