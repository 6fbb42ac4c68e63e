"""Model clients. Provider wire formats live only in this package."""
