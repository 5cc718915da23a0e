"""The sources and arm settings every arm's views are checked on: the provenance properties test
(tests/bench/answering/test_flags_reader.py) and benchmarks/bench_monotone.py read this one grid."""

from __future__ import annotations

from paths import DATA, DEV_PARQUET

CHAT = DATA / "real" / "chat"
SOURCES = {
    "dev": ["dataset=local", f"dataset.path={DEV_PARQUET}"],
    "sample": ["dataset=sample"],
    "ops": ["dataset=ops"],
    "airline": ["dataset=chat", f"dataset.path={CHAT / 'airline.jsonl'}", "dataset.profile=tau2"],
    "shell": ["dataset=chat", f"dataset.path={CHAT / 'shell.jsonl'}", "dataset.shell_tools=[bash]",
              "dataset.roles={exit: skip}", "dataset.error_pattern='<returncode>[1-9]'"],
}
MECHANISMS = ("shipped", "tail", "stepcut", "offload", "collapse", "verify")
ARMS: dict[str, list[str]] = {
    "full": ["arm=full"],
    "none": ["arm=none"],
    **{f"nlatest{n}": ["arm=nlatest", f"arm.n={n}"] for n in (10, 20, 40)},
    "mask": ["arm=mask"],
    "mask3": ["arm=mask", "arm.window=3"],
    "trim": ["arm=trim"],
    "trim1500": ["arm=trim", "arm.max_tokens=1500"],
    **{f"compact/{m}": ["arm=compact", f"mechanism={m}"] for m in MECHANISMS},
    "compact/generic": ["arm=compact", "prompt=generic"],
    "lc_summary": ["arm=lc_summary"],
    "lc_summary2000": ["arm=lc_summary", "arm.trigger=[tokens,2000]", "arm.keep=[messages,8]"],
    "condenser": ["arm=condenser"],
    "condenser20": ["arm=condenser", "arm.max_size=20"],
    "custom": ["arm=custom", "arm.policy=custom_policies:last_ten"],
    "context_edit": ["arm=context_edit", "arm.trigger=2000"],
    # arm.budget (issue 30): a quarter of each case's history tokens
    "nlatest/budget": ["arm=nlatest", "arm.n=null", "arm.budget=0.25"],
    "mask/budget": ["arm=mask", "arm.budget=0.25"],
    "compact/budget": ["arm=compact", "mechanism=offload", "arm.budget=0.25"],
    "lc_summary/budget": ["arm=lc_summary", "arm.budget=0.25"],
    "condenser/budget": ["arm=condenser", "arm.budget=0.25"],
    "context_edit/budget": ["arm=context_edit", "arm.budget=0.25"],
}
