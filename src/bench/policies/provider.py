"""What the provider arms share (``openai_compact``, ``anthropic_compact``, ``anthropic_clear``): their views
are made by the provider's server, through the answering model's own endpoint, and answered through it.

Each arm calls the answering model (``model=openai`` with ``model.api=responses``, or ``model=anthropic``)
once per case to build its view; the call goes through a sibling of the answering model's client (the
same chat model, cache, limiter and price table; accounting kind ``summarizer``, like every call a view
needs), so it is cached (a rerun makes none), priced and counted like any other. Its view records what
the provider returned (the ``compaction`` item or block, what it reports it cleared) in ``info``, and in
``request`` what the answering calls of the view must carry (their beta headers and
``context_management``, and whether they send the recorded history for the server to edit).

Without that provider (``model=offline``, or a model of another provider) an arm cannot be measured: it
refuses in one line (:func:`requirement`), before anything is written (``bench.cli.argv.check_stack``), and
again when built.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, ClassVar

from langchain_core.messages import BaseMessage

from bench.core.errors import ConfigError
from bench.policies.policy import PolicyContext
from bench.store.schema import Case

if TYPE_CHECKING:  # the offline stack never imports the model SDKs (bench.llm imports openai)
    from bench.llm import ChatClient

__all__ = ["ProviderArm", "requirement", "PROVIDER_NAMES", "verbatim_map"]

# How a refusal names the provider and the model option that reaches it.
PROVIDER_NAMES = {"openai": ("OpenAI", "model=openai"), "anthropic": ("Anthropic", "model=anthropic")}


def requirement(arm: str, provider: str, api: str | None, feature: str, model: str, model_provider: str | None,
                model_api: str | None) -> str | None:
    """One line refusing arm ``arm`` with the answering model ``model`` (its provider and API; None: the
    offline reader), or None when that model can measure it."""
    company, option = PROVIDER_NAMES.get(provider, (provider, f"model={provider}"))
    needed = option + (f" model.api={api}" if api else "")
    if model_provider is None:
        return (f"arm={arm} is {company}'s {feature}: its views come from {company}'s server, so it cannot be "
                f"measured offline (model={model}); run it with {needed}")
    if model_provider != provider:
        return (f"arm={arm} is {company}'s {feature} and answers through the same provider: model={model} is "
                f"{PROVIDER_NAMES.get(model_provider, (model_provider,))[0]}'s; run it with {needed}")
    if api and (model_api or "chat") != api:
        return (f"arm={arm} is {company}'s {feature}: its views are Responses API items, answered through the "
                f"Responses API; set model.api={api}")
    return None


def verbatim_map(case: Case) -> dict[tuple[str, str], list[BaseMessage]]:
    """The case's messages by (type, text), in order: a provider's item that returns a message unchanged is
    mapped back to the case's own object (what a view keeps verbatim)."""
    from bench.text.content import content_text

    found: dict[tuple[str, str], list[BaseMessage]] = {}
    for message in case.messages:
        found.setdefault((message.type, content_text(message.content)), []).append(message)
    return found


class ProviderArm:
    """The part of a provider arm that is not its edit: the client it builds views with, its refusal.

    A subclass sets ``provider`` (its dataclass field, the arm YAML's ``provider``: what ``bench.cli.argv`` reads
    before anything is composed), ``PROVIDER`` (the value it must be), ``API`` (the model API it needs, or
    None; then also a ``model_api`` field, the YAML's) and ``FEATURE`` (what the refusal calls it), and calls
    :meth:`connect` in ``__post_init__``.
    """

    PROVIDER: ClassVar[str]
    API: ClassVar[str | None] = None
    FEATURE: ClassVar[str]
    uses: ClassVar[frozenset[str]] = frozenset({"model"})
    calls_model: ClassVar[bool] = True  # every view is a call: views are built concurrently
    name: str
    provider: str
    context: PolicyContext
    client: ChatClient

    def connect(self) -> None:
        """The view client: the answering model's, as a sibling counted as view calls (kind ``summarizer``)."""
        if self.provider != self.PROVIDER:
            raise ConfigError(f"arm.provider of {type(self).__name__} is {self.PROVIDER} (its views come from "
                              f"that provider), got {self.provider!r}")
        if self.API is not None and getattr(self, "model_api", None) != self.API:
            raise ConfigError(f"arm.model_api of {type(self).__name__} is {self.API} (its views are that API's "
                              f"items), got {getattr(self, 'model_api', None)!r}")
        model = self.context.model
        client: ChatClient | None = getattr(model, "client", None)  # the offline reader has none
        name = getattr(client, "model", None) or getattr(model, "name", None) or "offline"
        refusal = requirement(self.name, self.PROVIDER, self.API, self.FEATURE, str(name),
                              getattr(client, "provider", None), getattr(client, "api", None))
        if refusal or client is None:  # without a client requirement() refuses (an offline model)
            raise ConfigError(refusal or f"arm={self.name} needs the answering model's client")
        self.client = dataclasses.replace(client, kind="summarizer")

    def clients(self) -> list[ChatClient]:
        return [self.client]
