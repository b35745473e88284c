"""How `iac-code acp` starts and stops, whatever the transport: builds the process's one session host
(host/host.py: it opens the session store, sessions/open.py choosing it), joins the other instances when a
database is configured (cluster/node.py), warms up the model SDK, and stops iac_check's warm workers at the
end. The transports only move bytes: they get a ready `serve(transport)` and call it once per connection
(stdio: and the early answers, acp/early.py, which create their sessions through the same host).

Start-up speed matters most on stdio, where an editor waits for its first session: the heavy imports
happen in a thread while the transport answers `initialize` and a plain `session/new` early
(acp/early.py), and the model SDK is imported only once the connection is idle (Handover's `on_idle`).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
from typing import TYPE_CHECKING, Any

from iac_code.config import ConfigError, Settings
from iac_code.startup import listening_socket

if TYPE_CHECKING:
    import socket

    from acp._transport import Transport

    from iac_code.cluster.node import ClusterNode
    from iac_code.host.host import SessionHost
    from iac_code.sessions.owners import SessionOwners
    from iac_code.sessions.store import SessionStore
    from iac_code.transports.http.app import HttpOptions
    from iac_code.transports.http.connections import ServeFn

logger = logging.getLogger(__name__)


# -- stdio --------------------------------------------------------------------------------------


def run_stdio(settings: Settings) -> int:
    """Serve ACP on stdin/stdout until stdin closes or SIGTERM/SIGINT; 0 on a clean exit."""
    from iac_code.acp.early import EarlyAnswers
    from iac_code.host.host import SessionHost
    from iac_code.host.unavailable_store import open_or_explain
    from iac_code.observability.tracing import stop_tracing
    from iac_code.transports.stdio import run_stdio as run_stdio_transport

    host = SessionHost(settings, open_store=open_or_explain)
    try:
        return run_stdio_transport(EarlyAnswers(host), functools.partial(_load_stdio_server, host))
    finally:
        stop_tracing()  # the spans still batched leave now


def import_stdio_server() -> None:
    """What serving stdio needs, imported for good: in the stdio start-up's thread, and by the warm process
    before it forks (warm/server.py), so that its children find exactly this loaded."""
    from iac_code.preload import loading_for_good

    with loading_for_good():
        import iac_code.acp.early_session  # first: what a session/new answered early needs
        from iac_code.acp.sdk_import import import_acp

        import_acp()  # before anything else imports it: its models then build on first use
        import iac_code.acp.server
        import iac_code.host.client_sessions
        import iac_code.iac.workers
        import iac_code.observability.tracing
        import iac_code.providers.presets
        import iac_code.sessions.open  # noqa: F401


def _load_stdio_server(host: SessionHost) -> StdioServer:
    """Run in a thread while the transport answers early: what serving needs, imported for good."""
    import_stdio_server()
    from iac_code.iac.workers import configure_workers
    from iac_code.observability.tracing import check_tracing, start_tracing

    settings = host.settings
    configure_workers(settings)
    try:
        check_tracing(settings)
        start_tracing(settings)  # nothing is imported when OTEL_* does not ask for traces
    except ConfigError as exc:  # an editor shows no stderr and OTEL_* may be meant for other programs: serve
        logger.warning("traces are off: %s", exc)
    return StdioServer(host)


class StdioServer:
    """What the stdio transport gets once the SDK has loaded (transports/stdio.py's `Server`)."""

    def __init__(self, host: SessionHost) -> None:
        self._host = host

    def on_idle(self) -> None:
        """The connection has nothing to answer: import the model SDK now (see providers/presets.py)."""
        from iac_code.providers.presets import warm_up

        warm_up(self._host.settings)

    async def serve(self, transport: Transport, client_capabilities: Any) -> None:
        """Serve the one connection (the early answers may have opened the host's store already)."""
        from iac_code.acp.server import serve

        await self._host.store()  # now, not at the first call: an earlier file store's import starts at once
        node = None
        try:
            node = await _open_node(self._host.settings)
            if node is not None:
                node.start()
            owners = node.owners if node is not None else None
            await serve(transport, self._host, owners=owners, client_capabilities=client_capabilities)
        finally:
            if node is not None:
                await node.close()
            await _close(self._host)


# -- HTTP ---------------------------------------------------------------------------------------


def run_http(args: argparse.Namespace, settings: Settings) -> int:
    """Serve ACP over HTTP+SSE until SIGTERM/SIGINT. Every problem found before listening is one
    ConfigError line (exit 2): nobody would see a problem found later."""
    from iac_code.preload import loading_for_good

    with loading_for_good():  # what serving needs, loaded now with the collector paused (see preload.py)
        from iac_code.acp.sdk_import import import_acp

        import_acp()  # as on stdio, before anything else imports it: its models then build on first use
        import iac_code.acp.server  # noqa: F401
        from iac_code.iac.workers import configure_workers
        from iac_code.observability.tracing import check_tracing, start_tracing, stop_tracing
        from iac_code.providers.presets import available_models, check_settings, warm_up
        from iac_code.sessions.open import check_store_path
        from iac_code.transports.http.collector import pace_collector_for_serving
        from iac_code.transports.http.server import bind_refusal, options_from_args

    options = options_from_args(args, settings)
    refusal = bind_refusal(args.host, options.authenticator.required, args.allow_insecure_bind)
    if refusal:
        logger.error(refusal)
        return 2
    check_settings(settings)
    check_store_path(settings)
    check_tracing(settings)
    listener = listening_socket(args.host, args.port)
    warm_up(settings)
    configure_workers(settings)
    if settings.model_configured:
        logger.info("model: %s / %s", settings.provider, (available_models(settings) or ["?"])[0])
    else:
        logger.info("no model configured: answering with the offline demo (set IAC_CODE_PROVIDER and IAC_CODE_API_KEY)")
    pace_collector_for_serving()
    start_tracing(settings)
    try:
        asyncio.run(_serve_http(args, settings, options, listener))
    finally:
        stop_tracing()
    return 0


async def _serve_http(
    args: argparse.Namespace, settings: Settings, options: HttpOptions, listener: socket.socket
) -> None:
    """Open the session store (and, with a database, join the other instances), then serve until stopped.
    The cluster backend starts and stops the node with the app (its heartbeat drives the backend's
    housekeeping)."""
    from iac_code.acp.server import serve
    from iac_code.host.host import SessionHost
    from iac_code.observability.record import timed_store
    from iac_code.sessions.open import open_store
    from iac_code.transports.http.server import serve_http

    async def open_timed(settings: Settings) -> SessionStore:
        return timed_store(await open_store(settings))  # its latency is a metric of the HTTP server

    host = SessionHost(settings, open_store=open_timed)
    await host.store()  # before listening: a store that cannot open stops the server
    try:

        def serving(owners: SessionOwners | None) -> ServeFn:
            return functools.partial(serve, host=host, owners=owners)

        backend = None  # this process alone
        node = await _open_node(settings)
        if node is not None:
            from iac_code.http_cluster.backend import cluster_backend

            backend = cluster_backend(node, serving(node.owners), options)
        await serve_http(serving(None), options, backend, listener, host=args.host, port=args.port)
    finally:
        await _close(host)


# -- both ---------------------------------------------------------------------------------------


async def _open_node(settings: Settings) -> ClusterNode | None:
    """With a database, this process's place among the instances sharing it: its sessions are leased
    like theirs. None alone."""
    if not settings.database_url:
        return None
    from iac_code.cluster.node import ClusterNode

    return await ClusterNode.open(settings)


async def _close(host: SessionHost) -> None:
    """The end of serving: the store closes, and iac_check's warm workers (checkov, cfn-lint) go too."""
    from iac_code.iac.workers import shutdown_workers

    try:
        await host.close()
    finally:
        shutdown_workers()
