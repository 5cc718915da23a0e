"""A loopback stand-in for Langfuse that records what the real SDK sends (the tracing tests, the
documented Langfuse commands, the fault tests' secrets check).

It answers the few REST calls the tracer makes (projects, datasets, dataset items, scores) and
decodes the OTLP/HTTP span exports (gzip protobuf).
"""

from __future__ import annotations

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _now() -> str:
    return "2026-01-01T00:00:00.000Z"


class Receiver:
    """A loopback stand-in for Langfuse: records requests, decodes OTLP spans."""

    def __init__(self, otel_status: int = 200) -> None:
        self.requests: list[dict] = []
        self.spans: list[dict] = []
        self.scores: list[dict] = []
        self.items: list[dict] = []
        self.datasets: list[dict] = []
        self.otel_status = otel_status
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _body(self) -> bytes:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    data = gzip.decompress(data)
                return data

            def _reply(self, status: int, payload, content_type: str = "application/json") -> None:
                body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):  # noqa: N802
                receiver.record(self, b"")
                if self.path.startswith("/api/public/projects"):
                    return self._reply(200, {"data": [{"id": "proj-1", "name": "bench", "metadata": {},
                                                       "organization": {"id": "org-1", "name": "org"}}]})
                if self.path.startswith("/api/public/v2/datasets/"):
                    name = self.path.rsplit("/", 1)[-1]
                    return self._reply(200, receiver.dataset(name))
                return self._reply(404, {"message": "not found"})

            def do_POST(self):  # noqa: N802
                body = self._body()
                receiver.record(self, body)
                if self.path == "/api/public/otel/v1/traces":
                    receiver.decode_spans(body)
                    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

                    reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                    return self._reply(receiver.otel_status, reply, "application/x-protobuf")
                data = json.loads(body or b"null")
                if self.path == "/api/public/v2/datasets":
                    receiver.datasets.append(data)
                    return self._reply(200, receiver.dataset(data["name"]))
                if self.path == "/api/public/dataset-items":
                    receiver.items.append(data)
                    return self._reply(200, {
                        "id": data["id"], "status": "ACTIVE", "input": data.get("input"),
                        "expectedOutput": data.get("expectedOutput"), "metadata": data.get("metadata"),
                        "sourceTraceId": None, "sourceObservationId": None, "datasetId": "ds-1", "mediaReferences": [],
                        "datasetName": data["datasetName"], "createdAt": _now(), "updatedAt": _now()})
                if self.path == "/api/public/scores":
                    receiver.scores.extend(data if isinstance(data, list) else [data])
                    return self._reply(202, {"message": "Accepted"})
                return self._reply(404, {"message": "not found"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def dataset(self, name: str) -> dict:
        return {"id": "ds-1", "name": name, "description": None, "metadata": None, "projectId": "proj-1",
                "createdAt": _now(), "updatedAt": _now()}

    def record(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        with self.lock:
            self.requests.append({"method": handler.command, "path": handler.path,
                                  "headers": dict(handler.headers), "size": len(body)})

    def decode_spans(self, body: bytes) -> None:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {a.key: _any_value(a.value) for a in span.attributes}
                    with self.lock:
                        self.spans.append({"name": span.name, "trace_id": span.trace_id.hex(),
                                           "span_id": span.span_id.hex(), "parent": span.parent_span_id.hex(),
                                           "attributes": attributes})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _any_value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None
