"""What OpenHands (CodeAct) puts in a trajectory: its tool schemas (descriptions shortened), system
prompts, the task prompt, the continue prompt, and the think / task_tracker / finish calls."""

from __future__ import annotations

import hashlib

from samplegen.trajectory import Call

__all__ = ["TOOLS_NEW", "TOOLS_OLD", "SYSTEM_PROMPT", "SYSTEM_PROMPT_OLD", "CONTINUE", "THOUGHT_LOGGED",
           "user_prompt", "tracker_reply", "think", "plan", "finish"]

# --------------------------------------------------------------------------------------
# Tool schemas (OpenHands CodeAct tools, descriptions shortened)
# --------------------------------------------------------------------------------------

EXECUTE_BASH = {
    "type": "function",
    "function": {
        "name": "execute_bash",
        "description": (
            "Execute a bash command in the terminal within a persistent shell session.\n\n"
            "### Command Execution\n"
            "* One command at a time: You can only execute one bash command at a time. If you "
            "need to run multiple commands sequentially, use `&&` or `;` to chain them together.\n"
            "* Soft timeout: Commands have a soft timeout of 10 seconds, once that's reached, "
            "you have the option to continue or interrupt the command.\n\n"
            "### Long-running Commands\n"
            "* If a bash command returns exit code `-1`, this means the process hit the soft "
            "timeout and is not yet finished. By setting `is_input` to `true`, you can:\n"
            "  - Send empty `command` to retrieve additional logs\n"
            "  - Send text (set `command` to the text) to STDIN of the running process\n"
            "  - Send control commands like `C-c` (Ctrl+C), `C-d` (Ctrl+D), or `C-z` (Ctrl+Z) "
            "to interrupt the process\n"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": (
                        "The bash command to execute. Can be empty string to view additional "
                        "logs when previous exit code is `-1`. Can be `C-c` (Ctrl+C) to "
                        "interrupt the currently running process."
                    ),
                },
                "is_input": {
                    "type": "string",
                    "description": (
                        "If True, the command is an input to the running process. If False, "
                        "the command is a bash command to be executed in the terminal. "
                        "Default is False."
                    ),
                    "enum": ["true", "false"],
                },
                "timeout": {
                    "type": "number",
                    "description": (
                        "Optional. Sets a hard timeout in seconds for the command execution. "
                        "If not provided, the command will use the default soft timeout behavior."
                    ),
                },
            },
            "required": ["command"],
        },
    },
}

STR_REPLACE_EDITOR = {
    "type": "function",
    "function": {
        "name": "str_replace_editor",
        "description": (
            "Custom editing tool for viewing, creating and editing files in plain-text format\n"
            "* State is persistent across command calls and discussions with the user\n"
            "* If `path` is a file, `view` displays the result of applying `cat -n`. If `path` "
            "is a directory, `view` lists non-hidden files and directories up to 2 levels deep\n"
            "* The `create` command cannot be used if the specified `path` already exists as a "
            "file\n"
            "* The `undo_edit` command will revert the last edit made to the file at `path`\n\n"
            "Notes for using the `str_replace` command:\n"
            "* The `old_str` parameter should match EXACTLY one or more consecutive lines from "
            "the original file. Be mindful of whitespaces!\n"
            "* If the `old_str` parameter is not unique in the file, the replacement will not be "
            "performed. Make sure to include enough context in `old_str` to make it unique\n"
            "* The `new_str` parameter should contain the edited lines that should replace the "
            "`old_str`\n"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": (
                        "The commands to run. Allowed options are: `view`, `create`, "
                        "`str_replace`, `insert`, `undo_edit`."
                    ),
                    "enum": ["view", "create", "str_replace", "insert", "undo_edit"],
                },
                "path": {
                    "type": "string",
                    "description": "Absolute path to file or directory.",
                },
                "file_text": {
                    "type": "string",
                    "description": "Required parameter of `create` command: the file content.",
                },
                "old_str": {
                    "type": "string",
                    "description": (
                        "Required parameter of `str_replace` command containing the string in "
                        "`path` to replace."
                    ),
                },
                "new_str": {
                    "type": "string",
                    "description": (
                        "New string for `str_replace`; required string to insert for `insert`."
                    ),
                },
                "insert_line": {
                    "type": "integer",
                    "description": (
                        "Required parameter of `insert` command. The `new_str` will be inserted "
                        "AFTER the line `insert_line` of `path`."
                    ),
                },
                "view_range": {
                    "type": "array",
                    "description": (
                        "Optional parameter of `view` for files: line range to show, e.g. [11, 12]."
                    ),
                    "items": {"type": "integer"},
                },
            },
            "required": ["command", "path"],
        },
    },
}

THINK = {
    "type": "function",
    "function": {
        "name": "think",
        "description": (
            "Use the tool to think about something. It will not obtain new information or make "
            "any changes to the repository, but just log the thought. Use it when complex "
            "reasoning or brainstorming is needed."
        ),
        "parameters": {
            "type": "object",
            "properties": {"thought": {"type": "string", "description": "The thought to log."}},
            "required": ["thought"],
        },
    },
}

TASK_TRACKER = {
    "type": "function",
    "function": {
        "name": "task_tracker",
        "description": (
            "Provides structured task management for development workflows, enabling progress\n"
            "tracking and systematic organization of complex coding activities.\n\n"
            "* Apply to multi-phase projects (3+ distinct steps) or when managing multiple user "
            "requirements\n"
            "* Update status (todo/in_progress/done) dynamically throughout work\n"
            "* Mark completion immediately upon task finish\n"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "`view` shows the task list; `plan` creates or updates it.",
                    "enum": ["view", "plan"],
                },
                "task_list": {
                    "type": "array",
                    "description": "The full task list. Required parameter of `plan` command.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": "Unique task identifier"},
                            "title": {"type": "string", "description": "Brief task description"},
                            "status": {
                                "type": "string",
                                "description": "Current task status",
                                "enum": ["todo", "in_progress", "done"],
                            },
                            "notes": {
                                "type": "string",
                                "description": "Optional additional context or details",
                            },
                        },
                        "required": ["id", "title", "status"],
                    },
                },
            },
            "required": ["command"],
        },
    },
}

FINISH = {
    "type": "function",
    "function": {
        "name": "finish",
        "description": (
            "Signals the completion of the current task or conversation.\n\n"
            "Use this tool when:\n"
            "- You have successfully completed the user's requested task\n"
            "- You cannot proceed further due to technical limitations or missing information\n"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "Final message to send to the user"}
            },
            "required": ["message"],
        },
    },
}

TOOLS_NEW = [EXECUTE_BASH, STR_REPLACE_EDITOR, THINK, TASK_TRACKER, FINISH]
TOOLS_OLD = [EXECUTE_BASH, STR_REPLACE_EDITOR, FINISH]  # older OpenHands prompt, fewer tools

SYSTEM_PROMPT = """You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.

<ROLE>
Your primary role is to assist users by executing commands, modifying code, and solving technical problems effectively. You should be thorough, methodical, and prioritize quality over speed.
* If the user asks a question, like "why is X happening", don't try to fix the problem. Just give an answer to the question.
</ROLE>

<EFFICIENCY>
* Each action you take is somewhat expensive. Wherever possible, combine multiple actions into a single action, e.g. combine multiple bash commands into one, using sed and grep to edit/view multiple files at once.
* When exploring the codebase, use efficient tools like find, grep, and git commands with appropriate filters to minimize unnecessary operations.
</EFFICIENCY>

<FILE_SYSTEM_GUIDELINES>
* When a user provides a file path, do NOT assume it's relative to the current working directory. First explore the file system to locate the file before working on it.
* If asked to edit a file, edit the file directly, rather than creating a new file with a different filename.
* For global search-and-replace operations, consider using `sed` instead of opening file editors multiple times.
</FILE_SYSTEM_GUIDELINES>

<CODE_QUALITY>
* When implementing solutions, focus on making the minimal changes needed to solve the problem.
</CODE_QUALITY>

<PROBLEM_SOLVING_WORKFLOW>
1. EXPLORATION: Thoroughly explore relevant files and understand the context before proposing solutions
2. ANALYSIS: Consider multiple approaches and select the most promising one
3. TESTING: For bug fixes, create tests to verify issues before implementing fixes
4. IMPLEMENTATION: Make focused, minimal changes to address the problem
5. VERIFICATION: Test your implementation thoroughly, including edge cases
</PROBLEM_SOLVING_WORKFLOW>"""

SYSTEM_PROMPT_OLD = """You are a helpful assistant that can interact with a computer to solve tasks.
<IMPORTANT>
* If user provides a path, you should NOT assume it's relative to the current working directory. Instead, you should explore the file system to find the file before working on it.
</IMPORTANT>"""

CONTINUE = (
    "Please continue working on the task on whatever approach you think is suitable.\n"
    "If you think you have solved the task, please first send your answer to user through "
    "message and then finish the interaction.\n"
    "IMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP.\n"
)


def user_prompt(root: str, issue: str, language: str = "python") -> str:
    dirname = root.rstrip("/").rsplit("/", 1)[-1]
    return (
        f"<uploaded_files>\n{root}\n</uploaded_files>\n"
        f"I've uploaded a {language} code repository in the directory {dirname}. "
        "Consider the following issue description:\n\n"
        f"<issue_description>\n{issue.strip()}\n</issue_description>\n\n"
        "Can you help me implement the necessary changes to the repository so that the "
        "requirements specified in the <issue_description> are met?\n"
        f"Your task is to make the minimal changes to non-test files in the {root} directory "
        "to ensure the <issue_description> is satisfied.\n\n"
        "Follow these phases to resolve the issue:\n"
        "Phase 1. READING: reword the problem in clearer terms.\n"
        "Phase 2. EXPLORATION: find the files related to the problem.\n"
        "Phase 3. REPRODUCTION: create a script to reproduce the issue.\n"
        "Phase 4. FIX: edit the source code to implement your chosen solution.\n"
        "Phase 5. VERIFICATION: run the reproduction and the relevant tests.\n\n"
        "Be thorough in your exploration, testing, and reasoning."
    )


THOUGHT_LOGGED = "Your thought has been logged."


def tracker_reply(n: int, tid: str) -> str:
    session = hashlib.sha256(tid.encode()).hexdigest()
    sid = f"{session[:8]}-{session[8:12]}-{session[12:16]}-{session[16:20]}-{session[20:32]}"
    return (
        f"Task list has been updated with {n} items. "
        f"Stored in session directory: sessions/{sid}/TASKS.md"
    )


def think(thought: str) -> Call:
    return Call("think", {"thought": thought}, THOUGHT_LOGGED)


def plan(tid: str, tasks: list[tuple[str, str, str]]) -> Call:
    task_list = [
        {"id": str(i), "title": title, "status": status, "notes": notes}
        for i, (title, status, notes) in enumerate(tasks, 1)
    ]
    return Call(
        "task_tracker", {"command": "plan", "task_list": task_list}, tracker_reply(len(tasks), tid)
    )


def finish(message: str) -> Call:
    return Call("finish", {"message": message}, None)
