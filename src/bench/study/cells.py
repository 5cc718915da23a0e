"""One cell of a study table from a record's value."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["text_cell"]


def text_cell(value: Any) -> str | None:
    """A question, reference or answer as one cell (structured values as JSON, lone surrogates as ?)."""
    text = value if value is None or isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return None if text is None else text.encode("utf-8", "replace").decode("utf-8")
