"""Where a job's rows come from: one class per source, each with its own keys and ``rows()``.

``conf/dataset/<option>.yaml`` names its class through ``_target_``; the runner builds it
(:func:`bench.config.checks.dataset_source`) and nothing below reads the config node. A key the
class does not take is an error before any row is read, so a setting a source would
silently ignore (``dataset.path`` on the shipped sample) cannot slip through.

    source = Shipped(source="ops", profile="tau2")
    for row in source.rows(): ...              # rows of the column schema, in file order
    source.provenance()                        # what the job records about where rows came from

A new source is one class here (a subclass of :class:`Source` with a ``rows`` method) and
its YAML (docs/extending.md). Every source shares the keys of :class:`Source`: the profile
and tool declarations (what the tools mean), ``limit`` and ``filters``.
"""

from __future__ import annotations

from bench.sources.files import ChatLog, LocalFile
from bench.sources.hub import Hub
from bench.sources.rows import KNOWN_COLUMNS, REQUIRED_COLUMNS, check_columns
from bench.sources.shipped import Shipped
from bench.sources.source import KEY_HINTS, SHIPPED, Filters, Source, as_source, sample_path, source_classes

__all__ = ["Source", "Filters", "Shipped", "LocalFile", "ChatLog", "Hub", "as_source", "KEY_HINTS", "source_classes", "sample_path",
           "check_columns", "REQUIRED_COLUMNS", "KNOWN_COLUMNS", "SHIPPED"]
