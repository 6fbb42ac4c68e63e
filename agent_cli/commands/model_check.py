"""Whether a model name given to ``/model`` is one the provider serves, and the names to offer.

A name is known when the model table has it, the provider's models endpoint lists it, or the
session used it before. An unknown name (a typo, a keystroke that landed in the wrong place) is
not switched to silently: an interactive session asks the user, a headless one warns.
"""

from __future__ import annotations

from agent_cli.models.model_info import known_context_window
from agent_cli.models.model_list import provider_models
from agent_cli.session.session import Session


async def served_models(session: Session) -> list[str]:
    client = session.client
    return await provider_models(client.url, client.api_key, session.config.provider.wire_api)


def used_models(session: Session) -> list[str]:
    """Models this session has run with: the configured one and every /model switch."""
    return list(dict.fromkeys([session.config.model, session.model, *session.services.clients.chosen]))


async def model_choices(session: Session) -> dict[str, str]:
    """What the /model picker offers, each with where it comes from: the configured model and
    what was used before, then the provider's list. Real names only: the model table's entries
    are prefixes (``claude-``), not models one can switch to."""
    choices = dict.fromkeys(used_models(session), "used in this session")
    for model in await served_models(session):
        choices.setdefault(model, "listed by the provider")
    return choices


async def unknown_model_reason(session: Session, model: str) -> str | None:
    """None when ``model`` is known; otherwise why it cannot be verified. The provider's list,
    when it gives one, decides; else the model table (a prefix like ``claude-`` is no model)."""
    if model in used_models(session):
        return None
    provider = session.config.provider.id
    if session.approvals.interactive:  # headless: no request to the provider just to warn
        served = await served_models(session)
        if served:
            return (
                None
                if model in served
                else f"{provider} does not list a model named {model!r} (it lists {len(served)})"
            )
    if known_context_window(model) is not None and not model.endswith(("-", ".")):
        return None
    if not session.approvals.interactive:
        return f"{model!r} is not in the model table"
    return f"{model!r} is not in the model table and {provider} did not list its models"
