"""Evidence survival: is each question's evidence still visible in a view, or recoverable?

visible: every evidence key string is in the view text or its summary.
recoverable: visible, or every key is in the view plus the outputs behind exposed handles.
"""

from __future__ import annotations

from bench.schema import Case, View
from bench.text import clean_output, view_text

__all__ = ["evidence_flags"]


def evidence_flags(case: Case, view: View) -> dict[str, dict[str, bool]]:
    text = view_text(view.messages, view.summary)
    stored = "\n".join(clean_output(v) for v in view.store.values())
    flags = {}
    for question in case.questions:
        visible = all(key in text for key in question.evidence_keys)
        recoverable = visible or all(key in text or key in stored for key in question.evidence_keys)
        flags[question.qid] = {"visible": visible, "recoverable": recoverable}
    return flags
