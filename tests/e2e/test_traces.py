"""OpenTelemetry traces of the real `iac-code acp` process, exported over OTLP/HTTP to a receiver this test
runs: a span per turn, model call and tool call, with the session id; and nothing imported or exported
when OpenTelemetry is not configured."""

from __future__ import annotations

import gzip
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from tests.e2e.acp.wire import AgentProcess, Agents, select
from tests.e2e.http.server_process import http_server

HEAVY_MODULES = ("opentelemetry.sdk", "opentelemetry.exporter", "prometheus_client")


class OtlpReceiver:
    """An OTLP/HTTP traces endpoint on 127.0.0.1 that keeps what it is sent."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.paths.append(self.path)
                receiver.requests.append(request)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def spans(self) -> list[tuple[dict[str, str], Span]]:
        """Every span received, with its resource's attributes."""
        found = []
        for request in self.requests:
            for resource_spans in request.resource_spans:
                resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                found += [(resource, span) for scope in resource_spans.scope_spans for span in scope.spans]
        return found

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver()
    yield receiver
    receiver.close()


def attributes(span: Span) -> dict[str, object]:
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes}


def run_a_session(agent: AgentProcess, workspace: Path) -> str:
    """A turn with a read, a write the user allows, and an answer; then the agent's stdin closes."""
    session_id = agent.new_session(workspace)
    response, _ = agent.prompt(session_id, "read and write", on_permission=select("allow_once"))
    assert response["result"]["stopReason"] == "end_turn"
    assert agent.close() == 0, "".join(agent.stderr_lines)
    return session_id


def script(model, workspace: Path) -> None:
    (workspace / "main.tf").write_text("# main\n")
    model.add(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "main.tf"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.tf", "content": "#\n"}}]},
        {"text": "done", "usage": {"prompt_tokens": 50, "completion_tokens": 3}},
    )


def imported(agent: AgentProcess) -> set[str]:
    """The modules PYTHONPROFILEIMPORTTIME reported on stderr."""
    return {line.rsplit("|", 1)[-1].strip() for line in agent.stderr_lines if line.startswith("import time:")}


def test_a_turn_its_model_calls_and_tool_calls_are_spans_with_the_session_id(model, workspace, tmp_path, receiver):
    script(model, workspace)
    agents = Agents(model.url, tmp_path / "config")
    agent = agents.start(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_SERVICE_NAME="")
    session_id = run_a_session(agent, workspace)  # the spans still batched are exported at exit

    assert set(receiver.paths) == {"/v1/traces"}
    spans = receiver.spans()
    assert {resource["service.name"] for resource, _ in spans} == {"iac-code"}
    by_name: dict[str, list[Span]] = {}
    for _, span in spans:
        by_name.setdefault(span.name, []).append(span)
    assert sorted(by_name) == ["model_call", "tool_call read_file", "tool_call write_file", "turn"]
    [turn] = by_name["turn"]
    assert attributes(turn)["session.id"] == session_id
    assert attributes(turn)["iac_code.stop_reason"] == "end_turn"
    assert turn.parent_span_id == b""  # a trace per turn

    children = [*by_name["model_call"], *by_name["tool_call read_file"], *by_name["tool_call write_file"]]
    assert len(by_name["model_call"]) == 3
    for span in children:
        assert span.trace_id == turn.trace_id and span.parent_span_id == turn.span_id
        assert attributes(span)["session.id"] == session_id
        assert turn.start_time_unix_nano <= span.start_time_unix_nano <= span.end_time_unix_nano
        assert span.end_time_unix_nano <= turn.end_time_unix_nano
    last_call = max(by_name["model_call"], key=lambda span: span.start_time_unix_nano)
    expected = {
        "gen_ai.request.model": "scripted-model",
        "gen_ai.usage.input_tokens": 50,
        "gen_ai.usage.output_tokens": 3,
        "iac_code.outcome": "completed",
    }
    assert {key: attributes(last_call).get(key) for key in expected} == expected
    [write] = by_name["tool_call write_file"]
    assert attributes(write)["iac_code.outcome"] == "completed"
    assert attributes(write)["gen_ai.tool.name"] == "write_file"


def test_without_opentelemetry_variables_nothing_is_imported_nor_exported(model, workspace, tmp_path, receiver):
    script(model, workspace)
    agents = Agents(model.url, tmp_path / "config")
    # An endpoint with the exporter switched off: the standard way to say no, and the receiver listens.
    agent = agents.start(
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_TRACES_EXPORTER="none", PYTHONPROFILEIMPORTTIME="1"
    )
    run_a_session(agent, workspace)
    modules = imported(agent)
    assert "iac_code.observability.record" in modules  # the hooks ran, and the import report is complete
    assert not [name for name in modules if name.startswith(HEAVY_MODULES)]
    assert receiver.requests == []


def test_stdio_never_imports_the_sdk_nor_prometheus_client(model, workspace, tmp_path, monkeypatch):
    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    script(model, workspace)
    agent = Agents(model.url, tmp_path / "config").start(PYTHONPROFILEIMPORTTIME="1")
    run_a_session(agent, workspace)
    modules = imported(agent)
    assert "iac_code.agent.tool_calls" in modules
    assert not [name for name in modules if name.startswith(HEAVY_MODULES)]


def test_tracing_that_cannot_be_honoured_stops_http_before_listening_and_only_warns_on_stdio(
    model, workspace, tmp_path
):
    grpc = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
    with pytest.raises(RuntimeError, match=r"exited \(2\)[\s\S]*OTEL_EXPORTER_OTLP_PROTOCOL=grpc"):
        with http_server(model.url, env=grpc):
            pass

    script(model, workspace)
    agent = Agents(model.url, tmp_path / "config").start(**grpc)
    run_a_session(agent, workspace)  # an editor's agent still serves
    assert any("traces are off" in line and "grpc" in line for line in agent.stderr_lines)
