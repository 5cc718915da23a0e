"""What a view shows, as tool events in time order: the offline reader's way of reading.

The offline evidence reader (:mod:`bench.reader`) answers each question by applying the
question type's extractor to a :class:`Reading` of the view::

    reading, opened = read_view(view.messages, view.summary, case, store)

How a view is read, as tool events in time order (the events :mod:`bench.extract` works on):

1. **The summary** (``view.summary``) stands for everything before the view's messages.
   Two kinds of list in it are read, whatever their section is called:

   - a *timeline*: items ``- `command` -> output excerpt`` and ``- tool command /path ->
     reply excerpt``, optionally ending with `` [exit code N]`` and `` (stored:
     read_tool_output(handle="..."))``. The section with most such items is the timeline
     (other sections repeat a few calls, e.g. ``Recent action: ...``); each item is one call.
   - a *file list*: items ``- /path (create, str_replace x2)``.

   An excerpt counts as the call's output only when it is whole: ``output cleared``, ``no
   result`` and an excerpt cut with ``...`` are unknown output, so a test log whose excerpt
   is not its summary line yields nothing. The summary writes commands on one line, so a
   summary command is the same command as the question's when they are equal with
   whitespace folded; a command cut with ``...`` names only a prefix (it *may* be the
   command). An editor call in the summary does not quote its code.
2. **The messages**: tool calls and their results; a placeholder is unknown output. An
   assistant message that starts with a note of collapsed retries (``[Retries collapsed: N
   earlier failed attempt(s) of this action ...]``) adds the N removed attempts just before
   its own calls: failed shell runs with their output excerpts (failed editor attempts
   changed nothing). A note the summary quotes (cut, at no known place) only says that
   runs of the commands it shows, or of any command where it shows none, were removed.
3. **Handles**: a handle ``read_tool_output(handle="...")`` attached to a call (a
   placeholder, a timeline item, a collapsed attempt) that is in ``view.store`` can be
   opened; its stored output then replaces the excerpt. The reader opens the handles of the
   calls its answer reads (the asked run and input sent to it; for edits, editor calls whose
   reply, which tells whether the edit applied, is unknown) when the view alone gives no
   answer, or before answering under ``verify`` guidance. Each opened handle is a recorded
   retrieval. A handle named apart from any call (e.g. in a cut note) is not opened: its
   output could not be placed.

What a summary does not list is unknown, so an answer that depends on it is an abstention:
the k-th run of a command needs the summary's timeline, complete (no ``(N earlier items
omitted)``), and no earlier call that may be that command (a cut command, a removed retry
the summary mentions); the first edit needs the timeline complete (and is unanswerable when
it lies in the summary, which quotes no code); the changed files need the timeline or the
file list complete (shell edits such as ``sed -i`` show only in the timeline). A summary
with no timeline (the ``generic`` prompt, free text) thus answers no ordinal question.
Without a summary (``full``, ``nlatest``) the messages are all there is.
"""

from __future__ import annotations

from bench.reading.base import Reading
from bench.reading.lookups import events_of, find_call, find_run
from bench.reading.messages import read_view

__all__ = ["Reading", "read_view", "find_run", "find_call", "events_of"]
