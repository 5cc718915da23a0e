"""The generic profile: any OpenAI-format chat log (``dataset=chat``).

Nothing is known about the tools: no shell, no editor, no finish or think tool, no markers.
An error result is one that starts with ``Error``/``Exception``/``Traceback`` (or
``dataset.error_pattern``, a regular expression matched at the start of the result).
"""

from __future__ import annotations

from bench.profiles.profile import Profile

__all__ = ["GENERIC"]

GENERIC = Profile(
    name="generic",
    error_result=r"(?:error|exception|traceback)\b",
)
