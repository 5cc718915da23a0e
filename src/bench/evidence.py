"""Evidence survival: is each question's evidence still visible in a view, or recoverable?

visible: every evidence key string is in the view text or its summary.
recoverable: visible, or every key is in the view plus the outputs behind exposed handles.
"""

from __future__ import annotations

from bench.questions import evidence_visible
from bench.schema import Case, View
from bench.text import view_text

__all__ = ["evidence_flags"]


def evidence_flags(case: Case, view: View) -> dict[str, dict[str, bool]]:
    clean = case.profile.clean
    text = view_text(view.messages, view.summary, clean)
    stored = "\n".join(clean(v) for v in view.store.values())
    flags = {}
    for question in case.questions:
        visible = evidence_visible(question, text)
        recoverable = visible or evidence_visible(question, f"{text}\n{stored}")
        flags[question.qid] = {"visible": visible, "recoverable": recoverable}
    return flags
