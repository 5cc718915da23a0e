"""Langfuse settings (keys from the environment only) and the one client per key and URL.

    settings = langfuse_settings()                 # None when a key or the URL is missing
    client, recorder = langfuse_client(settings)   # recorder: which spans the server acknowledged
"""

from __future__ import annotations

import base64
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["LangfuseSettings", "langfuse_settings", "langfuse_client", "RecordingExporter"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class TraceOptions:
    """What a job asks of its tracer (``tracing.*`` of the config, built by the runner)."""

    langfuse: bool = False        # trace into Langfuse when its keys are set
    dataset: str | None = None    # the Langfuse dataset name; None: bench-<label>-<case-set hash>
    upload_dataset: bool = True   # upsert the cases as dataset items when a job starts
    timeout: float = 5.0          # seconds per Langfuse request
    dataset_label: str = "data"   # the source's label (bench.sources.Source.label)
    arm: str | None = None        # the arm's name, for the run's metadata


@dataclass(frozen=True)
class LangfuseSettings:
    public_key: str
    secret_key: str
    base_url: str

    def __repr__(self) -> str:  # never print the secret
        return f"LangfuseSettings(public_key={self.public_key[:6]}..., base_url={self.base_url})"


def langfuse_settings(env: Mapping[str, str] | None = None) -> LangfuseSettings | None:
    """The Langfuse keys and URL from the environment, or None when one is missing."""
    source: Mapping[str, str] = os.environ if env is None else env
    public, secret = source.get("LANGFUSE_PUBLIC_KEY"), source.get("LANGFUSE_SECRET_KEY")
    base_url = source.get("LANGFUSE_BASE_URL") or source.get("LANGFUSE_HOST")
    if not (public and secret and base_url):
        return None
    from bench.core import redact

    redact.register(public)  # scrubbed from logs and error texts, with the Basic-auth form of the pair
    redact.register_basic_auth(public, secret)
    return LangfuseSettings(public, secret, base_url.rstrip("/"))


class RecordingExporter:
    """The OTLP/HTTP span exporter Langfuse would build, noting the spans it delivered."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.delivered: set[str] = set()  # span ids (16 hex)
        self.failed = 0
        self._lock = threading.Lock()

    def export(self, spans):  # noqa: ANN001 - SpanExporter interface
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.inner.export(spans)
        except Exception as err:  # noqa: BLE001 - an exporter must not raise
            log.debug("span export failed: %s", err)
            result = SpanExportResult.FAILURE
        with self._lock:
            if result == SpanExportResult.SUCCESS:
                self.delivered.update(format(s.context.span_id, "016x") for s in spans)
            else:
                self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        flush = getattr(self.inner, "force_flush", None)
        return flush(timeout_millis) if flush else True


def _otlp_exporter(settings: LangfuseSettings, timeout: float) -> Any:
    """Mirror of the SDK's default exporter (endpoint, basic auth, headers, gzip)."""
    from langfuse import __version__ as langfuse_version
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    auth = base64.b64encode(f"{settings.public_key}:{settings.secret_key}".encode()).decode("ascii")
    headers = {
        "Authorization": f"Basic {auth}",
        "x-langfuse-sdk-name": "python",
        "x-langfuse-sdk-version": langfuse_version,
        "x-langfuse-public-key": settings.public_key,
        "x-langfuse-ingestion-version": "4",
    }
    return OTLPSpanExporter(endpoint=f"{settings.base_url}/api/public/otel/v1/traces", headers=headers,
                            timeout=timeout, compression=Compression.Gzip)


_CLIENTS: dict[tuple[str, str], tuple[Any, RecordingExporter]] = {}
_CLIENTS_LOCK = threading.Lock()


def _scrubbed(*, data: Any, **_: Any) -> Any:
    """Langfuse ``mask``: every configured secret scrubbed from what an observation records."""
    from bench.core import redact

    if isinstance(data, str):
        return redact.scrub(data)
    if isinstance(data, dict):
        return {k: _scrubbed(data=v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_scrubbed(data=v) for v in data]
    return data


def _scrub_spans(*, params: Any) -> Any:
    """Langfuse ``mask_otel_spans``: the same for every span attribute at export (error texts the
    LangChain handler records, e.g. a server's reply that quoted a key)."""
    from langfuse.types import MaskOtelSpansResult, OtelSpanPatch

    from bench.core import redact

    patches = {}
    for identifier, span in params.spans.items():
        changed: dict[str, Any] = {}
        for key, value in (span.attributes or {}).items():
            if isinstance(value, str) and redact.scrub(value) != value:
                changed[key] = redact.scrub(value)
            elif isinstance(value, (list, tuple)) and any(isinstance(v, str) and redact.scrub(v) != v for v in value):
                changed[key] = [redact.scrub(v) if isinstance(v, str) else v for v in value]
        if changed:
            patches[identifier] = OtelSpanPatch(set_attributes=changed)
    return MaskOtelSpansResult(span_patches=patches)


def langfuse_client(settings: LangfuseSettings, timeout: float = 5) -> tuple[Any, RecordingExporter]:
    """One Langfuse client per (key, URL) and process (the SDK keeps one per key anyway)."""
    key = (settings.public_key, settings.base_url)
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            from langfuse import Langfuse
            from opentelemetry.sdk.trace import TracerProvider

            logging.getLogger("langfuse").setLevel(logging.WARNING)  # its INFO lines name the key
            recorder = RecordingExporter(_otlp_exporter(settings, timeout))
            client = Langfuse(public_key=settings.public_key, secret_key=settings.secret_key,
                              base_url=settings.base_url, timeout=int(max(1, timeout)),
                              span_exporter=cast(Any, recorder),  # a SpanExporter by duck typing
                              tracer_provider=TracerProvider(),
                              mask=_scrubbed, mask_otel_spans=_scrub_spans)
            _CLIENTS[key] = (client, recorder)
        return _CLIENTS[key]
