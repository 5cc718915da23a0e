"""Helpers shared by the benchmark scripts: config composition, the fake server, a 20-case file."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "real" / "dev.parquet"  # 15 real OpenHands trajectories, in the repository
FAKE = ROOT / "tests" / "support" / "fake_openai.py"


def compose(overrides: list[str]):
    """The job config of ``python -m bench.main <overrides>`` (Hydra's compose API on conf/)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    import bench.main  # noqa: F401 - registers the config resolvers
    import bench.policies  # noqa: F401 - registers ${bench.prompt:...}

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=overrides)


@contextlib.contextmanager
def fake_server(*args: str) -> Iterator[tuple[str, dict]]:
    """tests/support/fake_openai.py in its own process (its CPU is not the runner's): ``(base_url, stats)``.

    ``stats`` is filled with the server's counters when the block ends.
    """
    proc = subprocess.Popen([sys.executable, str(FAKE), "--watch-stdin", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    stats: dict = {}
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"fake server did not start: {url!r}")
        yield url, stats
    finally:
        proc.stdin.close()  # the server stops when its stdin closes
        out = proc.stdout.read()
        proc.wait(timeout=15)
        for line in out.splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                stats.update(json.loads(line))


def resolve_data(data: str) -> Path:
    """``dev`` (tests/data/real/dev.parquet), ``sample`` (the shipped sample) or a path."""
    if data == "dev":
        return DEV
    if data == "sample":
        from bench.data.selection import sample_path

        return sample_path()
    return Path(data)


def make_cases_file(source: Path, n_cases: int, out_dir: Path, row_group_size: int | None = None) -> Path:
    """A file of ``n_cases`` rows: the rows of ``source`` repeated, copies with distinct ids.

    Rows of a jsonl source that cannot become a case (the shipped sample has a few, on
    purpose) are left out; a parquet source is taken as is (dev.parquet's rows are all valid).
    ``row_group_size``: rows per parquet row group (a reader holds one group at a time; the hub's
    parquet files have groups of a few hundred rows); None: pyarrow's default (one group here).
    """
    if source.suffix == ".jsonl":
        from bench.data.cases import row_to_case
        from bench.store.schema import Case

        rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
        rows = [row for i, row in enumerate(rows) if isinstance(row_to_case(dict(row), i), Case)]
        out = out_dir / "cases.jsonl"
        with out.open("w") as handle:
            for i in range(n_cases):
                row, copy = dict(rows[i % len(rows)]), i // len(rows)
                if copy:
                    for column in ("instance_id", "trajectory_id"):
                        if row.get(column):
                            row[column] = f"{row[column]}-copy{copy}"
                handle.write(json.dumps(row) + "\n")
        return out
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = out_dir / "cases.parquet"
    table = pq.read_table(source)
    indices = [i % table.num_rows for i in range(n_cases)]
    picked = table.take(pa.array(indices))
    copy = [i // table.num_rows for i in range(n_cases)]
    for column in ("instance_id", "trajectory_id"):
        if column in picked.column_names:
            values = [v if c == 0 else f"{v}-copy{c}" for v, c in zip(picked[column].to_pylist(), copy, strict=True)]
            picked = picked.set_column(picked.column_names.index(column), column, pa.array(values))
    pq.write_table(picked, out, row_group_size=row_group_size)
    return out


def quiet() -> None:
    """No progress bars or info logs in benchmark output."""
    import logging

    os.environ.setdefault("TQDM_DISABLE", "1")
    logging.getLogger().setLevel(logging.WARNING)
    for name in ("bench", "httpx", "openai", "datasets"):
        logging.getLogger(name).setLevel(logging.ERROR)
