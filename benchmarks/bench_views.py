"""View building speed: cases per second for every arm, and the share spent counting tokens.

For each arm (full; nlatest n=10,20,40; nlatest matched to compact; compact with each
mechanism preset and the offline summarizer, for every summary prompt with ``--prompts``)
the script composes the job config from ``conf/`` with Hydra's compose API, builds the
policy with ``bench.config.arms.build_policy`` and turns every case of the dataset (default
``tests/data/real/dev.parquet``) into its view, ``--repeat`` times, each time with a
fresh :class:`bench.text.tokens.TokenCounter` warmed like a job's (the runner's counter has
already counted every case's messages in ``load_cases``).

Columns: ``cases/s`` (views only, best of the repeats), ``+record cases/s`` (views plus
the evidence flags and the ``views.jsonl`` line the runner writes per case, spliced from the
message JSON memoized when ``cases.jsonl`` was written), ``ms/case`` and
``tokens %``: the share of the view time spent inside ``TokenCounter`` (counted once at
the outermost call, memo lookups included), with ``encode %`` the part spent in tiktoken
itself. An arm that raises is reported with its error; the others go on.

    uv run python benchmarks/bench_views.py [--data FILE] [--repeat 3] [--prompts]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEV as DEFAULT_DATA  # noqa: E402
from _common import compose  # noqa: E402

MECHANISMS = ("shipped", "tail", "stepcut", "offload", "collapse", "verify")
PROMPTS = ("sre", "generic", "hybrid", "hybrid_v2")


class CountTimer:
    """Patches TokenCounter so that time inside it (outermost call only) is summed.

    ``encode`` sums the time in tiktoken itself (memo misses), through :meth:`watch`.
    """

    METHODS = ("count_text", "count_message", "count_messages")

    def __init__(self) -> None:
        from bench.text.tokens import TokenCounter

        self.cls = TokenCounter
        self.local = threading.local()
        self.originals = {name: getattr(TokenCounter, name) for name in self.METHODS}
        self.reset()

    def reset(self) -> None:
        self.total = self.encode = 0.0

    def _wrap(self, original):
        timer = self

        def wrapped(counter, *args, **kwargs):
            depth = getattr(timer.local, "depth", 0)
            timer.local.depth = depth + 1
            start = time.perf_counter() if depth == 0 else 0.0
            try:
                return original(counter, *args, **kwargs)
            finally:
                timer.local.depth = depth
                if depth == 0:
                    timer.total += time.perf_counter() - start

        return wrapped

    def install(self) -> None:
        for name, original in self.originals.items():
            setattr(self.cls, name, self._wrap(original))

    def uninstall(self) -> None:
        for name, original in self.originals.items():
            setattr(self.cls, name, original)

    def watch(self, counter):
        """Time the tiktoken calls of this counter (its encoding wrapped in a timing proxy)."""
        timer, encoding = self, counter._encoding

        class Timed:
            def encode_ordinary(self, text):
                start = time.perf_counter()
                try:
                    return encoding.encode_ordinary(text)
                finally:
                    timer.encode += time.perf_counter() - start

            def __getattr__(self, name):
                return getattr(encoding, name)

        counter._encoding = Timed()
        return counter


def arms(with_prompts: bool) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = [("full", ["arm=full"])]
    out += [(f"nlatest n={n}", ["arm=nlatest", f"arm.n={n}"]) for n in (10, 20, 40)]
    out.append(("nlatest match=compact/tail", ["arm=nlatest", "arm.n=null", "arm.match=compact", "mechanism=tail"]))
    for prompt in PROMPTS if with_prompts else ("sre",):
        out += [(f"compact {prompt}/{m}", ["arm=compact", f"prompt={prompt}", f"mechanism={m}",
                                           "summarizer=offline"]) for m in MECHANISMS]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="parquet/jsonl file in the nebius schema")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the cases per arm (best is shown)")
    parser.add_argument("--prompts", action="store_true", help="compact arms for all four summary prompts")
    parser.add_argument("--cases", type=int, default=None, help="only the first N cases (a quick check; default all)")
    args = parser.parse_args(argv)
    if not Path(args.data).exists():
        print(f"error: dataset not found: {args.data} (pass --data FILE)", file=sys.stderr)
        return 2

    import logging

    logging.disable(logging.WARNING)  # rejected-row warnings are not the point here
    from bench.answering.evidence import evidence_flags
    from bench.config.arms import build_policy
    from bench.data.selection import load_cases
    from bench.store.records import JobStore
    from bench.text.tokens import TokenCounter

    base = ["dataset=local", f"dataset.path={args.data}"]
    if args.cases is not None:
        base.append(f"dataset.limit={args.cases}")
    t0 = time.perf_counter()
    cfg = compose(base)
    selection = load_cases(cfg.dataset, TokenCounter(cfg.tokenizer.encoding))
    cases = selection.cases
    load_s = time.perf_counter() - t0

    n_messages = sum(len(c.messages) for c in cases)
    full_tokens = TokenCounter(cfg.tokenizer.encoding)
    tokens = sum(full_tokens.count_messages(c.messages) for c in cases)
    print(f"dataset: {args.data}\n{len(cases)} cases ({len(selection.rejected)} rows rejected), "
          f"{n_messages} messages, {tokens} tokens; loaded in {load_s:.2f}s; best of {args.repeat} passes\n")

    timer = CountTimer()
    timer.install()
    header = f"{'arm':<28}{'cases/s':>9}{'+record':>9}{'ms/case':>9}{'tokens %':>10}{'encode %':>10}  note"
    print(header)
    print("-" * len(header))
    rows = []
    try:
        for label, overrides in arms(args.prompts):
            try:
                arm_cfg = compose(base + overrides)
                best = None
                for _ in range(max(1, args.repeat)):
                    counter = timer.watch(TokenCounter(arm_cfg.tokenizer.encoding))
                    for case in cases:  # warm like a job: load_cases counted every case's history
                        counter.count_messages(case.messages)
                    policy = build_policy(arm_cfg, counter)
                    timer.reset()
                    start = time.perf_counter()
                    views = [policy(case) for case in cases]
                    view_s = time.perf_counter() - start
                    count_s, encode_s = timer.total, timer.encode
                    start = time.perf_counter()
                    for case, view in zip(cases, views, strict=True):
                        record = view.to_dict()
                        record["evidence"] = evidence_flags(case, view)
                        JobStore.encode(record)
                    record_s = time.perf_counter() - start
                    if best is None or view_s < best[0]:
                        best = (view_s, record_s, count_s, encode_s)
                view_s, record_s, count_s, encode_s = best
                kept = sum(v.kept_tokens for v in views) / max(1, sum(v.full_tokens for v in views))
                row = (label, len(cases) / view_s, len(cases) / (view_s + record_s), 1000 * view_s / len(cases),
                       100 * count_s / view_s, 100 * encode_s / view_s, f"tokens kept {100 * kept:.0f}%")
            except Exception as err:  # noqa: BLE001 - an arm that errors is reported, the rest go on
                row = (label, None, None, None, None, None, f"ERROR {type(err).__name__}: {str(err)[:120]}")
            rows.append(row)
            if row[1] is None:
                print(f"{row[0]:<28}{'-':>9}{'-':>9}{'-':>9}{'-':>10}{'-':>10}  {row[6]}")
            else:
                print(f"{row[0]:<28}{row[1]:>9.0f}{row[2]:>9.0f}{row[3]:>9.2f}{row[4]:>9.1f}%{row[5]:>9.1f}%  {row[6]}")
    finally:
        timer.uninstall()
    ok = [r for r in rows if r[1] is not None]
    if ok:
        slowest = min(ok, key=lambda r: r[1])
        print(f"\nslowest arm: {slowest[0]} at {slowest[1]:.0f} cases/s; "
              f"a 20-case job builds its views in {20 / slowest[1]:.2f}s at most")
    errors = [r for r in rows if r[1] is None]
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
