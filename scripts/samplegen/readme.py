"""The sample's README: what each row exercises and its expected outcome, written from the rows'
expectations (so the table and the check cannot disagree)."""

from __future__ import annotations

import json

from samplegen.expected import Rejected, SampleRow

__all__ = ["readme"]


def _code(s: str) -> str:
    s = s.replace("\n", "⏎")
    return "`` " + s + " ``" if "`" in s else "`" + s + "`"


def readme(rows: list[SampleRow]) -> str:
    out = [
        "# Shipped sample: synthetic trajectories",
        "",
        "**Synthetic trajectories written for this project (not real agent runs).** Every row of",
        "`sample.jsonl` was written by `scripts/make_sample.py` (deterministic; rerun it to",
        "regenerate this file and the sample). Repositories (`acme/*`), issues, code, outputs and",
        "patches are invented; each row has `synthetic: true` and a one-sentence `notes` field.",
        "",
        "Rows follow the column schema of the Hugging Face dataset",
        "`nebius/SWE-rebench-openhands-trajectories` (`trajectory_id`, `instance_id`, `repo`,",
        "`resolved`, `exit_status`, `model_patch`, `tools`, `trajectory`) so the local `jsonl`",
        "source and the conversion/question code can be exercised offline. Messages are",
        "`{role, content, tool_calls, tool_call_id, name}`; `arguments` are JSON strings.",
        "Message indices below are 0-based positions in the recorded `trajectory`.",
        "",
        "| row | exercises | expected outcome |",
        "|---|---|---|",
    ]
    for sample in rows:
        r, e = sample.row, sample.expected
        if isinstance(e, Rejected):
            outcome = f"**rejected**: {e.reason}"
        else:
            outcome = f"accepted; {e.conversion}; kept: {', '.join(e.kept())}"
            if e.dropped:
                outcome += "; dropped: " + ", ".join(q for q, _ in e.dropped)
        out.append(f"| `{r['trajectory_id']}` ({len(r['trajectory'])} msgs) | {r['notes']} | "
                   f"{outcome} |")
    out += ["", "## Expected references and drops", ""]
    for sample in rows:
        r, e = sample.row, sample.expected
        out.append(f"### `{r['trajectory_id']}` — {r['repo']} ({r['exit_status']}, "
                   f"resolved={json.dumps(r['resolved'])})")
        out.append("")
        if isinstance(e, Rejected):
            out += [f"- **Rejected**: {e.reason}.", ""]
            continue
        out.append(f"- Conversion: {e.conversion}.")
        if e.files_changed is not None:
            out.append(f"- `files_changed`: {', '.join(_code(p) for p in e.files_changed)}")
        fe = e.first_edit
        if fe is not None:
            note = f" ({fe.note})" if fe.note else ""
            out.append(f"- `first_edit` (message {fe.message_index}){note}: file "
                       f"`{fe.path}`, code:")
            out += ["", "  ```", *("  " + line for line in fe.code.split("\n")), "  ```"]
        tc = e.test_counts
        if tc is not None:
            note = f"; {tc.note}" if tc.note else ""
            out.append(f"- `test_counts`: run k={tc.k} of {_code(tc.command)} "
                       f"(message {tc.message_index}) -> passed={tc.passed}, "
                       f"failed={tc.failed}, errors={tc.errors}{note}")
        fr = e.first_error
        if fr is not None:
            note = f"; {fr.note}" if fr.note else ""
            out.append(f"- `first_error`: run k={fr.k} of {_code(fr.command)} -> "
                       f"{_code(fr.exception)}{note}")
        for q, why in e.dropped:
            out.append(f"- `{q}` **dropped**: {why}")
        for chain in e.retry_chains:
            out.append(f"- retry chain: {chain}")
        out.append("")
    out += [
        "## Output markers",
        "",
        "Tool outputs carry OpenHands metadata that references must not contain: the",
        "`OBSERVATION:` prefix (row 011), `[Current working directory: ...]`,",
        "`[Python Interpreter: ...]` and `[Command finished with exit code N]`. Two outputs have",
        "a marker glued to the last line: row 002's pytest run (`... in 0.45s[Python Interpreter:",
        "...]`) and row 004's first reproduction (`...must not be zero[Command finished with exit",
        "code 1]`).",
        "",
    ]
    return "\n".join(out)
