"""What a model's calls cost: a price table per model, applied per call.

``model.price`` (and ``judge.price``, ``summarizer.price``): USD per million tokens for input,
cached input (the provider's prefix cache bills it at a fraction) and output, ``cache_write``
(input written to the provider's cache: Anthropic bills it above input, 1.25x for its 5-minute
cache; unset: as input) and ``batch``, the fraction of those prices a provider's batch API bills
(0.5 for OpenAI's). Unset: no cost is
computed (``cost_usd`` absent from the calls, ``null`` in ``metrics.json``), not a guessed one.

    price = Price.of({"input": 0.15, "cached_input": 0.075, "output": 0.6})
    price.cost(input_tokens=12_000, cached_tokens=8_000, output_tokens=300)   # USD
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from bench.llm.call_errors import ModelSetupError

__all__ = ["Price"]

_MILLION = 1_000_000
# The most a price may be, in USD per million tokens: the dearest models cost a few hundred; a value
# past this (1e308) is a typo, and would overflow a job's cost to inf
MAX_PRICE = 100_000.0


@dataclass(frozen=True)
class Price:
    input: float                    # USD per million input tokens not read from the provider's cache
    output: float                   # USD per million output tokens
    cached_input: float | None = None  # USD per million cached input tokens (None: as input)
    batch: float = 1.0              # fraction of these prices billed through the batch API
    cache_write: float | None = None  # USD per million input tokens written to the cache (None: as input)

    @classmethod
    def of(cls, value: Any, role: str = "model") -> Price | None:
        """The price table of a config value (a mapping), None when unset; one error line when wrong."""
        if value is None or isinstance(value, Price):
            return value
        try:
            data = dict(value)
        except (TypeError, ValueError):
            raise ModelSetupError(f"{role}.price: a mapping {{input, cached_input, output, cache_write, batch}}, "
                                  f"got {value!r}") from None
        known = {f.name for f in fields(cls)}
        if unknown := sorted(set(data) - known):
            raise ModelSetupError(f"{role}.price: unknown key(s) {unknown} (keys: input, cached_input, output, cache_write, batch)")
        for key, number in data.items():
            if number is None:
                continue
            if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number) or number < 0:
                raise ModelSetupError(f"{role}.price.{key}: a non-negative number, got {number!r}")
            if key != "batch" and number > MAX_PRICE:
                raise ModelSetupError(f"{role}.price.{key}: {number!r} USD per million tokens is not a price "
                                      f"(at most {MAX_PRICE:,.0f})")
        rates = {key: float(number) for key, number in data.items() if number is not None}  # None: unset
        if "input" not in rates or "output" not in rates:
            raise ModelSetupError(f"{role}.price needs input and output (USD per million tokens)")
        if not 0 < rates.get("batch", 1.0) <= 1:
            raise ModelSetupError(f"{role}.price.batch: the fraction billed in batch mode, in (0, 1], "
                                  f"got {data['batch']!r}")
        return cls(input=rates["input"], output=rates["output"], cached_input=rates.get("cached_input"),
                   batch=rates.get("batch", 1.0), cache_write=rates.get("cache_write"))

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int, batch: bool = False,
             cache_write_tokens: int = 0) -> float:
        """USD of one call: uncached input, cached input, input written to the cache and output at their
        rates (times ``batch``). ``input_tokens`` counts all three kinds of input."""
        cached = min(max(cached_tokens, 0), max(input_tokens, 0))
        written = min(max(cache_write_tokens, 0), max(input_tokens, 0) - cached)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        write_rate = self.input if self.cache_write is None else self.cache_write
        usd = ((input_tokens - cached - written) * self.input + cached * cached_rate + written * write_rate
               + output_tokens * self.output) / _MILLION
        return usd * (self.batch if batch else 1.0)
