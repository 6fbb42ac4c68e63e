import json

import pytest

from agent_cli.items import Message, Reasoning, ToolCall, ToolOutput, item_from_dict, item_to_dict

ITEMS = [
    Message("user", "hello ünïcode"),
    Message("assistant", "hi", id="msg_1"),
    Message("developer", "rules"),
    Reasoning("thinking", id="rs_1", encrypted_content="opaque=="),
    Reasoning("claude thinks", signature="sig"),
    ToolCall("call_1", "shell", '{"command": "ls"}', id="fc_1"),
    ToolOutput("call_1", "a\nb", success=False),
]


@pytest.mark.parametrize("item", ITEMS)
def test_json_round_trip_is_lossless(item):
    line = json.dumps(item_to_dict(item))
    assert item_from_dict(json.loads(line)) == item


def test_optional_fields_are_omitted():
    assert item_to_dict(Message("user", "x")) == {"type": "message", "role": "user", "text": "x"}


@pytest.mark.parametrize(
    "data, error",
    [
        ({"type": "nope"}, "unknown item type"),
        ({"type": ["message"]}, "unknown item type"),  # unhashable: once a TypeError that resume did not catch
        ({"type": "message", "role": "user"}, "malformed message"),
        ({"type": "message", "role": "robot", "text": "x"}, "unknown message role"),
        (["not", "a", "dict"], "must be a JSON object"),
    ],
)
def test_malformed_items_raise_value_error(data, error):
    with pytest.raises(ValueError, match=error):
        item_from_dict(data)
