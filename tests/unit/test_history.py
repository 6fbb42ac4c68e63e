from agent_cli.context.history import ABORTED_OUTPUT, History, normalize
from agent_cli.items import Image, Message, ToolCall, ToolOutput, assistant, user


def call(n):
    return ToolCall(f"c{n}", "shell", "{}")


def out(n):
    return ToolOutput(f"c{n}", f"out{n}")


def test_normalize_keeps_a_valid_history_unchanged():
    items = [user("hi"), call(1), call(2), out(1), out(2), assistant("done")]
    assert normalize(items) == items


def test_missing_output_gets_synthetic_aborted_output_after_its_batch():
    items = [user("hi"), call(1), call(2), out(1), user("next")]
    result = normalize(items)
    assert result == [user("hi"), call(1), call(2), out(1), ToolOutput("c2", ABORTED_OUTPUT, False), user("next")]


def test_trailing_open_call_is_closed():
    assert normalize([user("x"), call(1)])[-1] == ToolOutput("c1", ABORTED_OUTPUT, False)


def test_orphan_outputs_are_dropped():
    assert normalize([user("x"), out(9), assistant("y")]) == [user("x"), assistant("y")]


def test_for_request_does_not_change_what_was_recorded():
    history = History([user("x"), call(1)])
    assert len(history.for_request()) == 3
    assert len(history) == 2


def test_close_open_calls_records_aborted_outputs():
    history = History([user("x"), call(1), call(2), out(1)])
    assert history.close_open_calls() == 1
    assert history.items[-1] == ToolOutput("c2", ABORTED_OUTPUT, False)
    assert normalize(history.items) == history.items


def test_remove_oldest_keeps_call_and_output_together():
    history = History([call(1), user("x"), out(1), assistant("y")], estimate=lambda item: 10)
    assert history.remove_oldest() == 2
    assert history.items == [user("x"), assistant("y")]
    assert history.estimated_tokens == 20
    assert history.remove_oldest() == 1
    assert history.remove_oldest() == 1
    assert history.remove_oldest() == 0


def test_remove_oldest_starting_at_an_output_takes_its_call():
    history = History([out(1), call(1), Message("user", "z")])
    assert history.remove_oldest() == 2
    assert history.items == [Message("user", "z")]


def test_token_estimates_are_cached_per_item():
    calls = []

    def estimate(item):
        calls.append(item)
        return 5

    history = History(estimate=estimate)
    history.extend([user("a"), user("b")])
    history.for_request()
    assert history.estimated_tokens == 10
    assert history.estimated_tokens_since(1) == 5
    assert len(calls) == 2


def test_for_request_matches_normalize_after_every_kind_of_change():
    history = History()
    steps = [user("a"), call(1), out(1), call(2), out(9), assistant("b"), out(2), call(3)]
    for item in steps:
        history.record(item)
        assert history.for_request() == normalize(history.items)
    history.remove_oldest()
    assert history.for_request() == normalize(history.items)
    history.replace([call(4), user("x")])
    assert history.for_request() == normalize(history.items)


def test_the_history_knows_whether_any_item_carries_an_image():
    """A model without vision gets notes for images; with none in the history, no pass over every item."""

    shot = Image("0" * 64, "image/png", 30, 20, "shot.png")
    history = History([user("hi"), call(1), out(1)])
    assert not history.has_images
    history.record(ToolOutput("c2", "a screenshot", images=(shot,)))
    assert history.has_images
    history.replace([user("summary")])  # a compaction drops it
    assert not history.has_images
    history.replace([Message("user", "see", images=(shot,)), assistant("seen")])
    assert history.has_images
    history.remove_oldest()
    assert not history.has_images
