"""Type-aware file reading: detection (detect.py) and one processor per type, shared by read_file,
``web_fetch`` and ``@path``; reading.py picks the processor for the detected kind."""
