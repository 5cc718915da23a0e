"""Examples the README shows, read from it as a user would copy them."""

from __future__ import annotations

from paths import PROJECT

README = PROJECT / "README.md"


def readme_chat_example() -> str:
    """The README's chat-log example, exactly as a user would paste it into a file."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Your own trajectories"):]
    start = section.index("```json\n") + len("```json\n")
    return section[start:section.index("```", start)]
