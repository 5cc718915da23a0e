"""Row 011: no tests, no exception; patch lists a file never edited (files_changed dropped)."""

from __future__ import annotations

from samplegen.expected import Accepted, FirstEdit, SampleRow, synthetic_row
from samplegen.openhands import SYSTEM_PROMPT_OLD, TOOLS_OLD, finish, user_prompt
from samplegen.trajectory import Repo, Traj

CLI_CONFIG = '''"""Configuration defaults for the acme command line tool."""

from __future__ import annotations

import os

DEFAULTS = {
    "color": "always",
    "pager": "less -R",
    "timeout": 30,
    "retries": 3,
}

ENV_PREFIX = "ACME_"


def load(env: dict[str, str] | None = None) -> dict[str, object]:
    """Return the effective configuration: defaults overridden by ACME_* variables."""
    env = os.environ if env is None else env
    config = dict(DEFAULTS)
    for key in DEFAULTS:
        value = env.get(ENV_PREFIX + key.upper())
        if value is not None:
            config[key] = type(DEFAULTS[key])(value)
    return config
'''

CLI_DOC_OLD = """# Configuration

| key | default | environment |
|---|---|---|
| color | `always` | `ACME_COLOR` |
| pager | `less -R` | `ACME_PAGER` |
| timeout | `30` | `ACME_TIMEOUT` |
| retries | `3` | `ACME_RETRIES` |
"""

CLI_DOC_NEW = CLI_DOC_OLD.replace("| color | `always` |", "| color | `auto` |") + (
    "\nSetting `NO_COLOR` (any non-empty value) turns colour off.\n"
)


def build() -> SampleRow:
    tid = "synthetic-011"
    root = "/workspace/acme__cli__5.0"
    repo = Repo(root, {"acme_cli/config.py": CLI_CONFIG}, obs=True)
    t = Traj(tid)
    t.system(SYSTEM_PROMPT_OLD)
    t.user(user_prompt(root, """
Colour codes end up in files when output is piped

The default for `color` should be `auto` instead of `always`, and the `NO_COLOR`
environment variable (https://no-color.org) should turn colour off.
"""))
    t.act("", repo.sh(
        f"cd {root} && grep -rn \"color\" acme_cli/ docs/",
        'acme_cli/config.py:8:    "color": "always",\n'
        "acme_cli/output.py:14:    if config[\"color\"] == \"always\":\n"
        "acme_cli/output.py:16:    if config[\"color\"] == \"auto\":\n"
        "docs/configuration.md:5:| color | `always` | `ACME_COLOR` |",
    ))
    t.act("", repo.view("acme_cli/config.py"))
    show = f"cd {root} && python -c \"from acme_cli.config import load; print(load({{}}))\""
    t.act("", repo.sh(show, "{'color': 'always', 'pager': 'less -R', 'timeout': 30, 'retries': 3}"))
    first_new = '    "color": "auto",'
    first_edit_idx = t.index()
    t.act("", repo.replace("acme_cli/config.py", '    "color": "always",', first_new))
    t.act("", repo.replace(
        "acme_cli/config.py",
        "            config[key] = type(DEFAULTS[key])(value)\n    return config",
        "            config[key] = type(DEFAULTS[key])(value)\n"
        '    if env.get("NO_COLOR"):\n'
        '        config["color"] = "never"\n'
        "    return config",
    ))
    t.act("", repo.sh(show, "{'color': 'auto', 'pager': 'less -R', 'timeout': 30, 'retries': 3}"))
    t.act("", repo.sh(
        f"cd {root} && python -c \"from acme_cli.config import load; "
        "print(load({'NO_COLOR': '1', 'ACME_COLOR': 'always'})['color'])\"",
        "never",
    ))
    t.act("", repo.sh(f"cd {root} && git diff --stat",
                      " acme_cli/config.py | 4 +++-\n 1 file changed, 3 insertions(+), 1 deletion(-)"))
    t.act("", finish("The colour default is now `auto` and NO_COLOR turns colour off."))
    patch = repo.diff(extra={"docs/configuration.md": (CLI_DOC_OLD, CLI_DOC_NEW)})
    expected = Accepted(
        conversion="final `finish` call without reply dropped",
        trailing=("finish",),
        files_changed=None,
        first_edit=FirstEdit(path="acme_cli/config.py", code=first_new, message_index=first_edit_idx),
        test_counts=None,
        first_error=None,
        dropped=[
            ("files_changed", ("patch lists docs/configuration.md, which the trajectory never "
                              "edits (patch: acme_cli/config.py, docs/configuration.md; edited: "
                              "acme_cli/config.py)")),
            ("test_counts", "no tool output has a test-runner summary line"),
            ("first_error", "no tool output contains an exception"),
        ],
    )
    return synthetic_row(
        tid, "acme__cli-240", "acme/cli", None, "submit", patch, TOOLS_OLD, t.messages,
        "Older-style row (OBSERVATION: prefixes, three tools) with no test run and no "
        "exception, and a patch that lists a file never edited: only first_edit is kept.",
        expected,
    )
