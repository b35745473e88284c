"""What operators watch: Prometheus metrics (metrics.py) and OpenTelemetry traces (tracing.py), fed by the
agent, the providers and the store through record.py. Nothing here imports prometheus_client or the
OpenTelemetry SDK until a server turns them on: stdio pays for neither."""
