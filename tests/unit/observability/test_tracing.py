"""When tracing is on, and the configurations it refuses before serving."""

from __future__ import annotations

import pytest

from iac_code.config import ConfigError, Settings
from iac_code.observability import tracing


@pytest.mark.parametrize(
    ("env", "configured"),
    [
        ({}, False),
        ({"OTEL_SERVICE_NAME": "agent"}, False),  # naming the service exports nothing
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}, False),
    ],
)
def test_tracing_is_configured_by_the_standard_variables(env, configured):
    assert Settings(env=env).tracing_configured is configured


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "zipkin"),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "PROTOCOL=grpc"),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "TRACES_PROTOCOL=grpc"),
    ],
)
def test_what_cannot_be_honoured_is_a_clear_error_before_serving(env, named):
    with pytest.raises(ConfigError, match=named):
        tracing.check_tracing(Settings(env=env))


def test_nothing_starts_when_tracing_is_not_configured():
    tracing.check_tracing(Settings())
    tracing.start_tracing(Settings(env={"OTEL_SERVICE_NAME": "agent"}))
    assert tracing.tracer() is None


def test_the_console_exporter_writes_to_stderr_never_stdout(capfd):
    tracing.start_tracing(Settings(env={"OTEL_TRACES_EXPORTER": "console"}))
    try:
        tracer = tracing.tracer()
        assert tracer is not None
        tracer.start_span("turn").end()
    finally:
        tracing.stop_tracing()
    out, err = capfd.readouterr()
    assert out == ""
    assert '"name": "turn"' in err
    assert tracing.tracer() is None
