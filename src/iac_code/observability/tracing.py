"""OpenTelemetry traces: a span per turn, model call and tool call, each with the session's id.

On only when OpenTelemetry's own variables ask for it (`Settings.tracing_configured`: an OTLP endpoint, or
OTEL_TRACES_EXPORTER); the SDK and its exporter are imported by `start_tracing` then, never otherwise. The
SDK reads the rest of its standard variables itself (OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
OTEL_BSP_*, …). The tracer provider is ours alone, not OpenTelemetry's global one: the libraries we use
(the ACP SDK, anthropic, mcp) trace through the global one, and their spans stay off.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from typing import TYPE_CHECKING

from iac_code import __version__
from iac_code.config import ConfigError, Settings

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Tracer

logger = logging.getLogger(__name__)

EXPORTERS = ("otlp", "console")  # console writes to stderr: stdout is the protocol on stdio
OTLP_PROTOCOL = "http/protobuf"  # the exporter the `otel` extra installs
_REQUIRED_MODULES = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")

_provider: TracerProvider | None = None
_tracer: Tracer | None = None


def tracer() -> Tracer | None:
    """The tracer, while tracing is on."""
    return _tracer


def check_tracing(settings: Settings) -> None:
    """ConfigError, one line naming what to fix, when tracing is asked for in a way this server cannot honour
    (found before serving: nobody would see it later). Imports nothing."""
    if not settings.tracing_configured:
        return
    unknown = [name for name in _exporters(settings) if name not in EXPORTERS]
    if unknown:
        raise ConfigError(f"OTEL_TRACES_EXPORTER: {', '.join(unknown)} is not supported (use otlp or console)")
    variable, protocol = _otlp_protocol(settings)
    if "otlp" in _exporters(settings) and protocol != OTLP_PROTOCOL:
        raise ConfigError(f"{variable}={protocol}: iac-code sends traces over HTTP; set it to {OTLP_PROTOCOL}")
    if not all(_installed(module) for module in _REQUIRED_MODULES):
        raise ConfigError(
            "OTEL_* variables ask for traces: install iac-code with its otel extra "
            "(from its checkout: pipx install --force '.[otel]')"
        )


def start_tracing(settings: Settings) -> None:
    """Turn tracing on when it is configured (check_tracing passed); nothing happens otherwise."""
    if not settings.tracing_configured or _provider is not None:
        return
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    exporters: list[SpanExporter] = []
    for name in _exporters(settings):
        if name == "console":
            exporters.append(ConsoleSpanExporter(out=sys.stderr))
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporters.append(OTLPSpanExporter())
    use_exporters(exporters, batch=True)
    logger.info("tracing: exporting spans (%s)", ", ".join(_exporters(settings)))


def use_exporters(exporters: list[SpanExporter], *, batch: bool) -> None:
    """Trace into `exporters` (tests give an in-memory one, unbatched, to read spans as they end)."""
    global _provider, _tracer
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    provider = TracerProvider(resource=_resource())
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    _provider, _tracer = provider, provider.get_tracer("iac_code", __version__)


def stop_tracing() -> None:
    """Export what is left and stop (the end of serving)."""
    global _provider, _tracer
    provider, _provider, _tracer = _provider, None, None
    if provider is not None:
        provider.shutdown()


def _exporters(settings: Settings) -> list[str]:
    named = settings.env.get("OTEL_TRACES_EXPORTER", "").strip().lower() or "otlp"
    return [name.strip() for name in named.split(",") if name.strip()]


def _otlp_protocol(settings: Settings) -> tuple[str, str]:
    """The variable that sets the OTLP protocol of traces, and its value (the traces' own one wins)."""
    for variable in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        if value := settings.env.get(variable, "").strip():
            return variable, value
    return "OTEL_EXPORTER_OTLP_PROTOCOL", OTLP_PROTOCOL


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def _resource() -> Resource:
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource

    resource = Resource.create({"service.version": __version__})
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):  # OTEL_SERVICE_NAME not set
        resource = resource.merge(Resource({SERVICE_NAME: "iac-code"}))
    return resource
