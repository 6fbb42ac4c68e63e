"""Type-aware file reading: detection and one processor per type; images (issue 14)."""
