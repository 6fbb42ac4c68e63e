"""The garbage collector, paused while `agent exec` starts.

Start-up creates hundreds of thousands of objects (our modules, then the SDK of the wire with its
thousands of classes) and frees almost none of them; with the collector on, Python walks them
again and again as they pile up. ``pause()`` stops it until the first model request is ready;
``resume()`` then freezes what start-up made (it is the program, not garbage: the collector never
looks at it again) and turns the collector back on.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Turn the collector back on if ``pause`` turned it off; later calls do nothing."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
