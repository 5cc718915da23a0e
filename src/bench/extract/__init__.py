"""Evidence extractors: what a history shows about edits, command runs, tests, errors.

The same functions build the references from the full recorded history and let the
offline evidence reader answer from a shrunk view, which is why the full arm scores
100% by construction. They work on tool events (:func:`bench.extract.history.tool_events`); a tool
result that is missing from the view or replaced by a placeholder has ``output=None``
(unknown). Which tool is a shell or an editor is the case's profile's business.

    events = tool_events(case.messages, case.profile)
    runs = command_runs(events, case.profile)
    parse_test_counts(runs[0].output)
"""

from bench.extract.edits import Edit, added_lines, changed_lines, edited_files, relative_to_repo, repo_edits
from bench.extract.exceptions import parse_first_exception
from bench.extract.history import ToolEvent, tool_events
from bench.extract.runner_summaries import parse_test_counts, stated_test_counts, summary_line
from bench.extract.runs import CommandRun, command_runs

__all__ = [
    "ToolEvent",
    "CommandRun",
    "Edit",
    "tool_events",
    "command_runs",
    "repo_edits",
    "edited_files",
    "added_lines",
    "changed_lines",
    "parse_test_counts",
    "stated_test_counts",
    "summary_line",
    "parse_first_exception",
    "relative_to_repo",
]
