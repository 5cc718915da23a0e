"""The OpenHands profile: coding runs (nebius SWE-rebench rows, SWE-Gym, OpenHands logs).

Tools: ``execute_bash`` (a shell; ``is_input`` and ``C-c`` send input to a running command),
``str_replace_editor`` (create / str_replace / insert / undo_edit / view), ``think``,
``task_tracker``, ``finish``. OpenHands decorates tool output with metadata the agent never
wrote: an ``OBSERVATION:`` prefix and ``[Python Interpreter: ...]``, ``[Current working
directory: ...]``, ``[Command finished with exit code N]``, ``[The command completed with exit
code N.]`` markers, sometimes glued to the last line, and a shell result may open with the
prompt line or the echoed command; references never carry them.
"""

from __future__ import annotations

from bench.profiles.profile import Profile

__all__ = ["OPENHANDS"]

OPENHANDS = Profile(
    name="openhands",
    shell_tools=("execute_bash",),
    command_arg="command",
    input_arg="is_input",
    process_inputs=("", "c-c", "ctrl+c", "c-d", "ctrl+d", "c-z", "ctrl+z"),
    editor_tool="str_replace_editor",
    editor_commands=(("create", "file_text"), ("str_replace", "new_str"), ("insert", "new_str")),
    editor_old_arg="old_str",
    editor_undo="undo_edit",
    editor_failures=(
        "no replacement was performed",
        "did not appear verbatim",
        "multiple occurrences",
        "invalid `path` parameter",
        "is not an absolute path",
        "parameter `",
        "cannot overwrite",
        "unknown command",
        "invalid `insert_line` parameter",
    ),
    failure_markers=("command timed out", "no new output after"),
    finish_tools=("finish",),
    think_tools=("think",),
    output_prefix=r"^\s*OBSERVATION:[ \t]*\r?\n?",
    # older OpenHands writes "[Python interpreter: ...]": matched case-insensitively
    output_markers=(r"\[(?:Python Interpreter: [^\]\n]*|Current working directory: [^\]\n]*|"
                    r"Command finished with exit code -?\d+|Command exited with code -?\d+|"
                    r"The command completed with exit code -?\d+\.?)\]"),
    # a prompt line the shell echoes before the output: ``root@host:/testbed# cmd``, ``user@host:~$ cmd``
    shell_prompt=r"^\s*(?:\([\w.-]+\)\s*)?[\w.-]+@[\w.-]+:[^\n]*?[#$](?:\s|$)",
    cwd_marker=r"\[Current working directory: ([^\]\n]+)\]",
    exit_code_marker=r"(?:Command finished with|Command exited with) (?:exit )?code (-?\d+)",
    error_result=r"error\b",
    not_run=r"Action execution failed|\[Error occurred in processing last action\]",
    repo_root_marker=r"<uploaded_files>\s*(\S+?)\s*</uploaded_files>",
)
