"""Every command the README and ``docs/*.md`` show runs as written (issue 32).

The commands are read from every ```bash block of ``README.md`` and ``docs/*.md`` (a line ending in
``\\`` continues on the next; ``export`` lines set the environment of the block's later commands).
Each runs as the user would type it, from a directory laid out like the project root, through
bash: ``uv run`` runs the command in this environment (a shell function: no sync, no network).
What a reader must fill in is substituted from :data:`PLACEHOLDERS` (a file, a sweep or job
directory the setup makes, a model name); the rest of the text is left as written.

A command that needs what a test cannot have (a network, a key, a cluster, minutes of CPU) is
listed in :data:`PLAN` with how it is checked instead, and why: against the project's fake
servers (``tests/support/fake_openai.py``, the Langfuse receiver of ``tests/support/langfuse_receiver.py``), up to the
point it would call out (the hub unreachable: one line, exit 2), or by the test that already runs
it. Every other command, including one a doc gains tomorrow, simply runs and must exit 0.

The default suite checks, in seconds, that every command is planned and free of unfilled
placeholders, that no entry of the plan is stale, that every job config a ``bench.main`` /
``bench.estimate`` / ``bench.download`` / ``bench.dataset`` command composes (each value of a
sweep) is valid and names files that exist, and that no code block is a bare placeholder. Running
every command is ``slow`` (minutes: sweeps of the sample, fake-model jobs): ``.ci/run`` runs it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fake_openai import FakeOpenAI
from paths import DATA, PROJECT

DOCS = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
URL = "FAKE_URL"  # replaced by the fake model server's base URL when the command runs
LANGFUSE = "FAKE_LANGFUSE"  # replaced by the Langfuse receiver's URL

# What a reader fills in, and what the test puts there: (pattern, replacement), applied in order.
# The files and directories named on the right are made by the setup (:func:`workspace`).
PLACEHOLDERS: list[tuple[str, str]] = [
    (r"/path/to/rows\.parquet", "rows.parquet"),                       # a nebius-schema file: the real dev rows
    (r"dataset\.path=FILE", "dataset.path=rows.parquet"),
    (r"calibrate FILE", "calibrate tests/data/judge_calibration.jsonl"),  # human verdicts of the calibration
    (r" \[--output [^\]]+\]", ""),                                      # an optional argument, left out
    (r"SWEEP_A SWEEP_B JOB_DIR \.\.\.", "multirun/sweep_a multirun/sweep_b jobs/job_a"),
    (r"SWEEP_OR_JOB_DIR\.\.\.", "multirun/sweep_a jobs/job_a"),
    (r"SWEEP_DIR", "multirun/sweep_a"),
    (r"JOB_A JOB_B", "jobs/job_a jobs/job_b"),
    (r"multirun/DATE/TIME_mechanisms", "multirun/sweep_a"),              # a sweep directory the setup ran
    (r"multirun/2026-11-29/19-39-31_nlatest", "multirun/sweep_b"),
    (r"judge\.name=MODEL", "judge.name=fake-model"),
    (r"OPENAI_API_KEY=\.\.\.", "OPENAI_API_KEY=sk-placeholder-for-the-fake-server"),
    (r"https://cloud\.langfuse\.com", LANGFUSE),
    (r"http://localhost:\d+/v1", URL),                                 # a local model server (vLLM, Ollama)
]
# Capitals that are names, not placeholders (environment variables, file names).
NAMES = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_BASE_URL", "FAKE_URL",
         "FAKE_LANGFUSE", "README", "PGPASSWORD"}

FAKE_ANSWER = [f"model.base_url={URL}", "model.api_key_env=null"]
FAKE_JUDGE = [f"judge.base_url={URL}", "judge.api_key_env=null"]
FAKE_SUMMARIZER = [f"summarizer.base_url={URL}", "summarizer.api_key_env=null"]
SMALL = ["dataset.limit=1", "seed=0"]  # a model sweep of the whole sample: minutes of fake calls for nothing more
HUB_DOWN = {"HF_ENDPOINT": "http://127.0.0.1:9"}  # the hub unreachable: the command must stop there, in one line


@dataclass(frozen=True)
class Plan:
    """How a command is checked when it cannot simply run (see the module docstring)."""

    why: str
    skip: bool = False                   # not run: the reason says what runs it instead
    append: list[str] = field(default_factory=list)  # overrides added at the end (fake endpoints, a smaller set)
    env: dict[str, str] = field(default_factory=dict)
    code: int = 0                        # the exit code expected
    stderr: str | None = None            # a text the one error line holds (with code 2)
    fake_model: bool = False             # a fake OpenAI-compatible server on loopback for URL
    langfuse: bool = False               # the fake Langfuse receiver for LANGFUSE


def _hub(why: str, **kwargs) -> Plan:
    return Plan(why, env=HUB_DOWN, code=2, stderr="cannot reach the Hugging Face hub", **kwargs)


# The reviewed exceptions, keyed by the command as written (its comment left out).
PLAN: dict[str, Plan] = {
    "pip install uv": Plan("installs a package from the network; the suite runs under uv already", skip=True),
    "uv run pytest": Plan("the suite itself", skip=True),
    'uv run pytest -m "slow or e2e"': Plan("the slow and end-to-end suite: .ci/run runs it", skip=True),
    "bash .ci/run": Plan("CI itself", skip=True),
    'uv run pytest -m "" tests/bench/llm/test_faults.py': Plan("runs tests/bench/llm/test_faults.py, which the suites run", skip=True),
    "uv run pytest tests/bench/llm/test_faults.py": Plan("runs tests/bench/llm/test_faults.py, which the default suite runs", skip=True),
    "uv run python -m bench.main dataset=hf dataset.limit=20": _hub("the Hugging Face hub"),
    "uv run python -m bench.download dataset=hf dataset.limit=20 out=rows.parquet": _hub("the Hugging Face hub"),
    'uv run python -m bench.main model=anthropic model.name=claude-sonnet-4-5 judge=anthropic summarizer=anthropic '
    'model.price="{input: 3, cached_input: 0.3, cache_write: 3.75, output: 15}"': Plan(
        "Anthropic's API with a key (no network here): tests/bench/policies/test_provider_arms.py runs the native "
        "Anthropic stack end to end against tests/support/fake_anthropic.py", skip=True),
    "uv run python -m bench.main model=anthropic arm=anthropic_clear arm.trigger=30000 arm.keep=5": Plan(
        "Anthropic's server clears the tool results (no network here): tests/bench/policies/test_provider_arms.py "
        "runs the arm against tests/support/fake_anthropic.py", skip=True),
    "uv run python -m bench.main -m +experiment=peers_anthropic judge=anthropic": Plan(
        "Anthropic's API (no network here): tests/bench/cli/test_experiments.py composes the sweep", skip=True),
    "uv run python -m bench.main dataset=hf arm=compact model=openai model.name=gpt-4o-mini "
    "judge=llm judge.name=gpt-4o summarizer=openai": _hub(
        "OpenAI and the hub: its endpoints are the fake server's, then it stops at the hub",
        append=FAKE_ANSWER + FAKE_JUDGE + FAKE_SUMMARIZER, fake_model=True),
    "uv run python -m bench.main model=openai model.name=Qwen/Qwen2.5-7B-Instruct "
    f"model.base_url={URL} model.api_key_env=null judge=llm summarizer=openai": Plan(
        "a vLLM server: the fake server at its URL; the judge and summarizer (OpenAI) there too",
        append=FAKE_JUDGE + FAKE_SUMMARIZER, fake_model=True),
    f"uv run python -m bench.main model=openai model.base_url={URL} model.name=qwen2.5:7b "
    "model.api_key_env=null model.max_tokens_field=max_tokens judge=llm summarizer=openai": Plan(
        "an Ollama server: the fake server at its URL; the judge and summarizer (OpenAI) there too",
        append=FAKE_JUDGE + FAKE_SUMMARIZER, fake_model=True),
    "uv run python -m bench.main -m +experiment=mechanisms model=openai judge=llm summarizer=openai": Plan(
        "OpenAI: the fake server, on one case and one seed (18 jobs of the whole sample are minutes of fake calls)",
        append=FAKE_ANSWER + FAKE_JUDGE + FAKE_SUMMARIZER + SMALL, fake_model=True),
    "uv run python -m bench.main -m +experiment=mechanisms prompt=hybrid_v2 model=openai summarizer=openai judge=llm "
    "judge.name=gpt-4o": Plan("OpenAI: the fake server, on one case and one seed",
                              append=FAKE_ANSWER + FAKE_JUDGE + FAKE_SUMMARIZER + SMALL, fake_model=True),
    "uv run python -m bench.rescore multirun/sweep_a --judge llm --output rescored.csv": Plan(
        "an LLM judge: the fake server", append=FAKE_JUDGE, fake_model=True),
    "uv run python -m bench.rescore multirun/sweep_a --judge llm --output rescored.csv judge.name=fake-model": Plan(
        "an LLM judge: the fake server", append=FAKE_JUDGE, fake_model=True),
    "uv run python -m bench.calibrate tests/data/judge_calibration.jsonl judge=llm judge.name=gpt-4.1": Plan(
        "an LLM judge: the fake server", append=FAKE_JUDGE, fake_model=True),
    "uv run python -m bench.calibrate tests/data/judge_calibration.jsonl judge=panel judge.members.llm.name=gpt-4.1":
        Plan("a panel with an LLM judge: the fake server",
             append=[f"judge.members.llm.base_url={URL}", "judge.members.llm.api_key_env=null"], fake_model=True),
    "uv run python -m bench.calibrate tests/data/judge_calibration.jsonl --fail-under 0.95": Plan(
        "CI's gate: exit 1 below 95%; the exact judge on the calibration file is above it"),
    "uv run python -m bench.main -m +experiment=nlatest tracing.langfuse=true dataset=local dataset.path=rows.parquet":
        Plan("Langfuse: the receiver of tests/support/langfuse_receiver.py", langfuse=True),
    "uv run python -m bench.dataset --upload dataset=local dataset.path=rows.parquet": Plan(
        "Langfuse: the receiver of tests/support/langfuse_receiver.py", langfuse=True),
}
BENCHMARK = re.compile(r"^uv run python benchmarks/(bench_\w+\.py)$")  # tests/bench/test_benchmarks.py runs each script


@dataclass(frozen=True)
class Command:
    doc: str        # the file, relative to the project
    block: int      # the line its ```bash block starts on (a block's commands run in order)
    line: int       # where the command starts
    text: str       # as written, continuation lines joined, placeholders substituted, comment left out
    written: str    # as written in the doc (the comment too)
    exports: tuple[str, ...]  # the block's export lines before it (substituted)

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def strip_comment(line: str) -> str:
    """The command without its trailing ``# comment`` (a ``#`` inside quotes stays)."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].rstrip()
    return line.rstrip()


def substitute(text: str) -> str:
    for pattern, replacement in PLACEHOLDERS:
        text = re.sub(pattern, replacement, text)
    return text


def documented_commands() -> list[Command]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in re.finditer(r"^```bash\n(.*?)^```", text, re.S | re.M):
            first = text.count("\n", 0, block.start(1)) + 1
            lines = block.group(1).split("\n")
            exports: list[str] = []
            index = 0
            while index < len(lines):
                start, written = index, lines[index]
                while written.rstrip().endswith("\\") and index + 1 < len(lines):
                    index += 1
                    written = written.rstrip()[:-1].rstrip() + " " + lines[index].strip()
                index += 1
                command = substitute(strip_comment(written.strip()))
                if not command:
                    continue
                if command.startswith("export "):
                    exports.append(command)
                    continue
                found.append(Command(str(doc.relative_to(PROJECT)), first - 1, first + start, command,
                                     written.strip(), tuple(exports)))
    return found


COMMANDS = documented_commands()
BLOCKS: dict[str, list[Command]] = {}  # "doc:line" of a ```bash block -> its commands, in order
for _command in COMMANDS:
    BLOCKS.setdefault(f"{_command.doc}:{_command.block}", []).append(_command)


# ------------------------------------------------------------------ the default suite: fast checks

def test_every_documented_command_is_planned_and_the_plan_is_not_stale():
    assert len(COMMANDS) >= 40 and {c.doc for c in COMMANDS} >= {"README.md", "docs/study.md"}
    texts = {c.text for c in COMMANDS}
    stale = [key for key in PLAN if key not in texts]
    assert stale == [], f"PLAN entries no doc shows any more: {stale}"
    for command in COMMANDS:
        unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", " ", " ".join([*command.exports, command.text]))  # values
        words = re.findall(r"\b[A-Z][A-Z0-9_]{2,}\b", unquoted)
        unfilled = [w for w in words if w not in NAMES]
        assert unfilled == [], f"{command.id}: placeholder(s) {unfilled} not in PLACEHOLDERS: {command.written}"
        benchmark = BENCHMARK.match(command.text)
        if benchmark:
            from benchmark_settings import TINY

            assert benchmark.group(1) in TINY, f"{command.id}: tests/bench/test_benchmarks.py does not run {benchmark.group(1)}"


def job_overrides(command: Command) -> tuple[str, list[str], bool] | None:
    """``(module, overrides, sweep)`` of a command that composes a job config, else None."""
    words = shlex.split(command.text)
    if words[:4] != ["uv", "run", "python", "-m"] or words[4] not in ("bench.main", "bench.estimate", "bench.download",
                                                                      "bench.dataset"):
        return None
    rest = words[5:] + PLAN.get(command.text, Plan("")).append
    own = ("out=",) if words[4] == "bench.download" else ()  # the tool's own argument, not a config key
    overrides = [w.replace(URL, "http://127.0.0.1:9/v1") for w in rest
                 if "=" in w and not w.startswith("-") and not w.startswith(own or ("\0",))]
    return words[4], overrides, "-m" in rest


def written_before(command: Command) -> set[str]:
    """Names of the files the commands before ``command`` in its block write (``-o F``, ``--output F``,
    ``out=F``): a later command may read them, so they need not exist before the block runs."""
    made: set[str] = set()
    for earlier in BLOCKS[f"{command.doc}:{command.block}"]:
        if earlier is command:
            break
        words = shlex.split(earlier.text)
        made.update(Path(b).name for a, b in zip(words, words[1:], strict=False) if a in ("-o", "--output"))
        made.update(Path(w[4:]).name for w in words if w.startswith("out="))
    return made


def sweep_variants(overrides: list[str], sweep: bool) -> list[list[str]]:
    """The overrides alone, and for a sweep each value of each swept key once (the experiment's and the
    command line's), beside the fixed ones: every option a job of it meets, composed once."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from bench.config.checks import compose

    parser = OverridesParser.create()
    fixed = [o for o in overrides if not parser.parse_override(o).is_sweep_override()]
    variants = [fixed]
    if sweep:
        params = compose(fixed, return_hydra_config=True).hydra.sweeper.get("params") or {}
        swept = [f"{k}={v}" for k, v in params.items()] + [o for o in overrides if o not in fixed]
        for override in parser.parse_overrides(swept):
            key = override.get_key_element()
            if key == "seed":
                continue  # an integer each: the fixed variant composes the same
            for value in override.sweep_string_iterator() if override.is_sweep_override() else []:
                variants.append([*fixed, f"{key}={value}"])
    return variants


@pytest.mark.slow  # ~125 Hydra composes (30-50 s on two cores): the plan check above runs by default
def test_every_documented_job_config_composes_and_names_files_that_exist(tmp_path, monkeypatch):
    """Each value of each sweep, composed as its job would be, from a directory laid out like the
    project's: ``arm.policy`` on an arm that takes none, a ``dataset.path`` that is not there ..."""
    from bench.config.checks import absolute_paths, compose, dataset_source, validate

    workspace(tmp_path, jobs=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # mypolicies.py, as from the directory the command runs in
    checked, failures, seen = 0, [], set()
    for command in COMMANDS:
        plan = PLAN.get(command.text)
        made = written_before(command)
        found = job_overrides(command)
        if found is None or (plan is not None and plan.skip):
            continue
        _module, overrides, sweep = found
        try:
            for variant in sweep_variants(overrides, sweep):
                if tuple(variant) in seen:  # another command's job, composed already
                    continue
                seen.add(tuple(variant))
                cfg = compose(variant)
                validate(cfg)
                absolute_paths(cfg)
                if cfg.dataset.get("source") != "hf" and Path(str(cfg.dataset.get("path"))).name not in made:
                    dataset_source(cfg.dataset).check()
                if cfg.arm.get("name") == "custom":
                    from bench.config.arms import build_policy
                    from bench.text.tokens import TokenCounter

                    build_policy(cfg, TokenCounter(cfg.tokenizer.encoding))
                checked += 1
        except Exception as err:  # noqa: BLE001 - the failure, named with the command
            failures.append(f"{command.id}: `{command.written}` does not work: {type(err).__name__}: "
                            f"{str(err).splitlines()[0]}")
    sys.modules.pop("mypolicies", None)  # imported from this test's directory: other tests write their own
    assert failures == []
    assert checked >= 30


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_no_code_block_is_an_unfilled_placeholder(doc):
    text = doc.read_text(encoding="utf-8")
    bare = [m.group(1).strip() for m in re.finditer(r"^```\w*\n(.*?)^```", text, re.S | re.M)
            if re.fullmatch(r"[A-Z][A-Z0-9_]*", m.group(1).strip())]
    assert bare == [], f"{doc.name}: code block(s) holding only a placeholder: {bare}"


# ------------------------------------------------------------------ running them (slow)

def readme_policy_module() -> str:
    """The README's ``mypolicies.py``, as a user would save it."""
    text = (PROJECT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(# mypolicies\.py\n.*?)```", text, re.S)
    assert block, "the README's own policy example is gone"
    return block.group(1)


def workspace(root: Path, jobs: bool = True) -> Path:
    """A directory laid out like the project root (its files linked), with what the placeholders name:
    ``rows.parquet`` (the real dev rows), ``my_runs.jsonl`` (the README's chat example, twice),
    ``shell_runs.jsonl`` and ``support_runs.jsonl`` (real mini-swe-agent and tau-bench airline runs,
    ``tests/data/real/chat/``), ``mypolicies.py`` (the README's), and with ``jobs``
    two offline sweeps and two jobs (``multirun/sweep_a``, ``multirun/sweep_b``, ``jobs/job_a|b``)."""
    for entry in PROJECT.iterdir():
        if entry.name not in ("outputs", "multirun", ".cache", ".venv", ".git") and not (root / entry.name).exists():
            (root / entry.name).symlink_to(entry)
    shutil.copyfile(DATA / "real" / "dev.parquet", root / "rows.parquet")
    from readme_examples import readme_chat_example

    example = readme_chat_example()
    (root / "my_runs.jsonl").write_text(example + example.replace('"run-17"', '"run-18"'), encoding="utf-8")
    shutil.copyfile(DATA / "real" / "chat" / "shell.jsonl", root / "shell_runs.jsonl")
    shutil.copyfile(DATA / "real" / "chat" / "airline.jsonl", root / "support_runs.jsonl")
    (root / "mypolicies.py").write_text(readme_policy_module(), encoding="utf-8")
    if jobs:
        env = {**os.environ, "TQDM_DISABLE": "1"}
        for args in (["-m", "+experiment=smoke", "hydra.sweep.dir=multirun/sweep_a"],
                     ["-m", "arm=nlatest", "arm.n=10,20", "dataset.limit=2", "hydra.sweep.dir=multirun/sweep_b"],
                     ["dataset.limit=2", "output_dir=jobs/job_a"],
                     ["dataset.limit=2", "arm=nlatest", "arm.n=10", "output_dir=jobs/job_b"]):
            done = subprocess.run([sys.executable, "-m", "bench.main", *args], cwd=root, env=env, capture_output=True,
                                  text=True, timeout=600)
            assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def project_like(tmp_path_factory) -> Path:
    return workspace(tmp_path_factory.mktemp("project"))


def _prelude() -> str:
    """``uv run X`` runs X here (this environment's python and tools first on PATH)."""
    return (f'export PATH={shlex.quote(str(Path(sys.executable).parent))}:"$PATH"\n'
            'uv() { if [ "$1" = run ]; then shift; "$@"; else command uv "$@"; fi; }\n')


def run_in_shell(command: Command, cwd: Path, plan: Plan, url: str, langfuse: str) -> subprocess.CompletedProcess:
    text = " ".join([command.text, *map(shlex.quote, plan.append)])
    lines = [*command.exports, text]
    script = _prelude() + "\n".join(line.replace(URL, url).replace(LANGFUSE, langfuse) for line in lines) + "\n"
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    env.update({"TQDM_DISABLE": "1", **plan.env})
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)


@pytest.mark.slow
@pytest.mark.parametrize("block", sorted(BLOCKS), ids=str)
def test_documented_commands_run_as_written(block, project_like):
    """A block's commands in order (a later one may use what an earlier one wrote), each as planned."""
    import contextlib

    from langfuse_receiver import Receiver

    for command in BLOCKS[block]:
        plan = PLAN.get(command.text, Plan("runs as written"))
        if plan.skip or BENCHMARK.match(command.text):
            continue  # the reason is in PLAN; tests/bench/test_benchmarks.py runs each benchmark script
        with contextlib.ExitStack() as stack:
            server = stack.enter_context(FakeOpenAI(model="fake-model")) if plan.fake_model else None
            receiver = Receiver() if plan.langfuse else None
            if receiver is not None:
                stack.callback(receiver.close)
            done = run_in_shell(command, project_like, plan, server.base_url if server else "http://127.0.0.1:9/v1",
                                receiver.url if receiver else "http://127.0.0.1:9")
        shown = (f"{command.id}: `{command.written}` ({plan.why})\nstdout:\n{done.stdout[-3000:]}\n"
                 f"stderr:\n{done.stderr[-3000:]}")
        assert done.returncode == plan.code, shown
        assert "Traceback" not in done.stderr, shown
        if plan.stderr is not None:
            assert plan.stderr in done.stderr and len(done.stderr.strip().splitlines()) == 1, shown
        if plan.langfuse:
            assert receiver.requests, shown  # it talked to "Langfuse"


def test_the_plan_reads_the_readme_policy_example():
    """The README's ``mypolicies.py`` is what the custom-arm commands import (a renamed function would
    make every one of them fail only in the slow run)."""
    namespace: dict = {}
    exec(compile(readme_policy_module(), "mypolicies.py", "exec"), namespace)  # noqa: S102 - the README's own code
    assert callable(namespace.get("task_and_last_ten"))
    assert any("arm.policy=mypolicies:task_and_last_ten" in c.text for c in COMMANDS)
