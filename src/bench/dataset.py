"""Upload the benchmark's cases and questions to Langfuse as a dataset.

    uv run python -m bench.dataset                     # show the dataset name and items (no upload)
    uv run python -m bench.dataset --upload            # upload the shipped sample's cases
    uv run python -m bench.dataset --upload dataset=local dataset.path=FILE dataset.limit=10

Takes the same Hydra overrides as ``bench.main`` (only ``dataset``, ``tokenizer`` and
``tracing.dataset`` matter), so the uploaded dataset is exactly the one a job with those
overrides runs on and links its dataset run to: one item per case (stable id), input =
the case's questions, expected output = the code-extracted references. Needs
``LANGFUSE_PUBLIC_KEY``, ``LANGFUSE_SECRET_KEY`` and ``LANGFUSE_BASE_URL`` (or
``LANGFUSE_HOST``) in the environment. Jobs also upsert the dataset themselves when
``tracing.langfuse=true`` (unless ``tracing.upload_dataset=false``).
"""

from __future__ import annotations

import argparse
import logging
import sys

from bench.core.errors import console_script, program

__all__ = ["main"]


@console_script
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=program("bench.dataset"), description=__doc__.split("\n\n")[0])
    parser.add_argument("--upload", action="store_true", help="upload to Langfuse (default: only show)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, as for bench.main (dataset=..., ...)")
    args = parser.parse_intermixed_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    from bench.config.checks import compose, dataset_source
    from bench.config.job_cases import load_job_cases
    from bench.core import redact
    from bench.data.selection import DatasetError
    from bench.text.tokens import TokenCounter
    from bench.tracing import dataset_name, langfuse_client, langfuse_settings, upload_dataset

    refusal = redact.guard_command_line(args.overrides)  # a key on the command line refused; URLs' secrets never printed
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    try:
        cfg = compose(args.overrides)
    except Exception as err:  # noqa: BLE001 - a bad override or option: one line, as bench.main says it
        from bench.cli.argv import config_error_line

        print(f"error: {redact.scrub(config_error_line(err, args.overrides))}", file=sys.stderr)
        return 2
    try:
        selection = load_job_cases(cfg, TokenCounter(cfg.tokenizer.encoding))  # the job's items
    except DatasetError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    name = dataset_name(dataset_source(cfg.dataset).label(), selection.cases, cfg.get("tracing", {}).get("dataset"))
    n_questions = sum(len(c.questions) for c in selection.cases)
    print(f"dataset {name}: {len(selection.cases)} case(s), {n_questions} question(s)")
    if not args.upload:
        print("(not uploaded: add --upload)")
        return 0
    settings = langfuse_settings()
    if settings is None:
        print("error: set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL (or LANGFUSE_HOST)",
              file=sys.stderr)
        return 2
    timeout = float(cfg.get("tracing", {}).get("timeout", 5) or 5)
    client, _ = langfuse_client(settings, timeout)
    try:
        result = upload_dataset(client, name, selection.cases, retries=2)
    except Exception as err:  # noqa: BLE001 - one line, no traceback
        print(f"error: upload to {settings.base_url} failed: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    print(f"uploaded {len(result['items'])} item(s) to dataset {name} (id {result['id']}) at {settings.base_url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
