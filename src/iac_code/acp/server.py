"""Serve one ACP connection over any message transport (stdio, HTTP+SSE, in-memory)."""

from __future__ import annotations

import logging
from typing import Any

from acp._transport import Transport
from acp.connection import Connection, StreamEvent

from iac_code.acp.agent import IacAgent
from iac_code.acp.cancellation import InFlight
from iac_code.acp.outbox import Outbox
from iac_code.acp.router import build_handler
from iac_code.host.host import SessionHost
from iac_code.logs import log_frame
from iac_code.principals import principal_of
from iac_code.sessions.owners import SessionOwners

logger = logging.getLogger(__name__)


async def serve(
    transport: Transport,
    host: SessionHost,
    *,
    owners: SessionOwners | None = None,
    client_capabilities: Any = None,
) -> None:
    """Serve one ACP connection until transport.receive() returns None; then cancel running turns
    and free this connection's sessions. Every connection of the process shares the `host` (and its owners,
    or the `owners` of the backend serving it), so a session has one runtime in the process.
    `client_capabilities`: from an `initialize` the transport answered before serving (stdio does while the
    SDK loads)."""
    outbox = Outbox(transport)
    principal = principal_of(transport)  # who is asking: the owner of what this connection creates
    agent = IacAgent(host, outbox, owners=owners, client_capabilities=client_capabilities, principal=principal)
    in_flight = InFlight(agent, outbox)  # this connection's requests, for $/cancel_request
    connection = Connection(build_handler(agent, in_flight), in_flight.reading(outbox), listening=False)
    agent.attach(connection)
    if logger.isEnabledFor(logging.DEBUG):  # --debug: every frame, to diagnose an editor integration
        connection.add_observer(_log_frame)
    try:
        await connection.main_loop()
    finally:
        await agent.shutdown()
        await connection.close()
    logger.debug("connection closed")


def _log_frame(event: StreamEvent) -> None:
    log_frame(logger, event.direction.value == "outgoing", event.message)
