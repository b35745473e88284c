"""A fixture MCP server written with the official SDK's MCPServer (mcp 1.x called it FastMCP).

Run as a program it serves stdio (`python -m tests.fakes.mcp_server`); `serve_http(transport)` runs it
over Streamable HTTP or SSE on 127.0.0.1 in a thread of the test process. What a test can observe
from outside goes to the file named by FIXTURE_EVENTS, one line per event ("cancelled slow").

`--legacy` makes it answer only the initialize handshake (no `server/discover`), like a server from
before MCP 2026-07-28: its `ctx.elicit` then reaches the client as a request mid-call. `--crash` makes it write to stderr and exit before answering anything, like a server with a broken
config; `--silent` makes it never answer, like a server stuck at start; `--linger` keeps it running
after its stdin closes, so only a kill stops it. `--tools=N` adds N generated tools (`<verb>_<noun>_<i>`, two
arguments each), like a server wrapping a whole cloud API (10,000 load in about 3 s). `--escapees=FILE` first starts two processes out of
reach of its process group, like a server's daemons: `sleep 313` in its own session (`setsid`), and one
in its own session whose parent exits at once (a double fork, so it is orphaned); it writes
{"server", "setsid", "daemon"} pids to FILE as JSON. Other arguments are ignored
(tests pass a unique marker to find the process in /proc).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import uvicorn
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, Elicit, Image, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp_types import EmbeddedResource, ResourceLink, TextContent, TextResourceContents, ToolAnnotations
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

# A 1x1 transparent PNG.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
SECRET_VARIABLE = "FIXTURE_SECRET"
WIRE_OUT = ""  # what fd 1 was at start (a pipe), for hang_up

server = MCPServer("fixture", instructions="A fixture server for iac-code's tests.")


def _record(event: str) -> None:
    path = os.environ.get("FIXTURE_EVENTS")
    if path:
        with open(path, "a", encoding="utf-8") as events:
            events.write(event + "\n")


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return text


@server.tool(
    title="Describe a region",
    description="Describe a cloud region (read-only).",
    annotations=ToolAnnotations(read_only_hint=True),
)
def describe_region(region: str) -> str:
    return f"{region}: 3 zones"


class Placement(BaseModel):
    region: str
    copies: int = 1


def _answered(result: ElicitationResult[Placement]) -> str:
    answered = f"{result.action} {result.data.model_dump_json()}" if result.action == "accept" else result.action
    _record(f"elicited {answered}")
    return answered


@server.tool(
    description="Ask the user where a bucket goes (read-only).", annotations=ToolAnnotations(read_only_hint=True)
)
async def place_bucket(ctx: Context) -> str:
    """Asks mid-call with ctx.elicit: a request to the client, which only protocols before 2026-07-28 carry
    (serve with --legacy)."""
    return _answered(await ctx.elicit("Where should the bucket live?", Placement))


def _placement() -> Elicit[Placement]:
    return Elicit("Where should the bucket live?", Placement)


@server.tool(
    description="Ask the user where a bucket goes, as a resolved parameter (read-only).",
    annotations=ToolAnnotations(read_only_hint=True),
)
async def place_bucket_resolved(placement: Annotated[ElicitationResult[Placement], Resolve(_placement)]) -> str:
    """Asks through the SDK's resolver: 2026-07-28 returns input_required and the client answers on retry."""
    return _answered(placement)


@server.tool(description="Send the user to sign in (read-only).", annotations=ToolAnnotations(read_only_hint=True))
async def sign_in(ctx: Context) -> str:
    result = await ctx.elicit_url("Sign in to the registry", "https://registry.example/login", "login-1")
    _record(f"signed in {result.action}")
    return f"sign-in {result.action}"


@server.tool(description="Delete a bucket.", annotations=ToolAnnotations(destructive_hint=True))
def delete_bucket(bucket: str) -> str:
    return f"deleted {bucket}"


@server.tool(description="Render the architecture diagram.", structured_output=False)
def diagram() -> list[Any]:
    return ["The diagram:", Image(data=PIXEL_PNG, format="png")]


@server.tool(description="Wait, then answer (for timeouts and cancellation).")
async def slow(seconds: float) -> str:
    _record("started slow")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _record("cancelled slow")
        raise
    return f"waited {seconds} s"


@server.tool(description="Always fails.")
def fail(reason: str = "quota exceeded") -> str:
    raise ToolError(f"cannot do that: {reason}")


class Inventory(BaseModel):
    buckets: list[str]
    count: int


@server.tool(description="The inventory, as structured content.")
def inventory() -> Inventory:
    return Inventory(buckets=["logs", "state"], count=2)


@server.tool(description="A state file as an embedded resource, and a link to the plan.", structured_output=False)
def state_files() -> list[Any]:
    state = TextResourceContents(
        uri="file:///work/terraform.tfstate", text='{"version": 4}', mime_type="application/json"
    )
    return [
        EmbeddedResource(type="resource", resource=state),
        ResourceLink(
            type="resource_link", uri="file:///work/plan.out", name="plan.out", mime_type="application/octet-stream"
        ),
        TextContent(type="text", text="2 files"),
    ]


@server.tool(description="Where the server runs: its cwd, pid, process group and whether it got the secret.")
def whereami() -> str:
    secret = os.environ.get(SECRET_VARIABLE)
    ids = f"pid={os.getpid()} ppid={os.getppid()} pgid={os.getpgid(0)}"
    return f"cwd={os.getcwd()} {ids} secret={'set' if secret else 'unset'}"


@server.tool(description="Let go of stdout and keep running: what it writes from now on goes nowhere.")
def hang_up() -> str:
    # The SDK serves the wire from a duplicate of fd 1 (and points fd 1 at stderr): let go of every copy.
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone by now
            if os.readlink(f"/proc/self/fd/{fd}") == WIRE_OUT:
                os.dup2(devnull, int(fd))
    return "never read"


@server.tool(description="Start a helper process that ignores stdin, like a server's worker; returns its pid.")
def start_helper() -> str:
    helper = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)
    return str(helper.pid)


@server.tool(description="Exit at once, like a server that crashes mid-session.")
def crash() -> str:
    os._exit(7)


@server.tool(description="Add the tool `grown` and the prompt `grown_prompt`, and tell the client.")
async def grow(ctx: Context) -> str:
    server.add_tool(_grown, name="grown", description="A tool added while the server runs.")
    server.prompt(name="grown_prompt", description="A prompt added while the server runs.")(_grown_prompt)
    if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:  # through the client's subscriptions/listen
        await ctx.notify_tools_changed()
        await ctx.notify_prompts_changed()
    else:  # the notifications of earlier versions
        await ctx.session.send_tool_list_changed()
        await ctx.session.send_prompt_list_changed()
    return "grown"


def _grown() -> str:
    return "I was added later."


def _grown_prompt() -> str:
    return "Use the grown tool."


@server.prompt(description="Review one Terraform resource.")
def review(resource: str) -> str:
    return f"Review the Terraform resource {resource} for security issues."


@server.prompt(description="Explain an architecture diagram.")
def explain_diagram() -> list[Message]:
    return [UserMessage(Image(data=PIXEL_PNG, format="png")), UserMessage("Explain this diagram.")]


@server.prompt(description="Compare two regions.")
def compare(left: str, right: str = "cn-hangzhou") -> str:
    return f"Compare {left} with {right}."


VERBS = ("describe", "list", "tag", "resize", "rotate", "attach", "detach", "snapshot", "inspect", "export")
NOUNS = ("gateway", "volume", "subnet", "queue", "cluster", "certificate", "bucket", "firewall", "dns_zone", "vault")


def generated_name(index: int) -> str:
    """The name of the `index`th generated tool (`--tools=N`)."""
    return f"{VERBS[index % len(VERBS)]}_{NOUNS[index // len(VERBS) % len(NOUNS)]}_{index}"


def add_generated_tools(count: int) -> None:
    """One tool is built the SDK's way; the others are copies under their own name, description and
    function (building each from its signature would take the SDK ~4 ms a tool)."""
    model = server._tool_manager.add_tool(_generated(generated_name(0)), name="generated_model", description="-")
    server.remove_tool("generated_model")
    for index in range(count):
        name = generated_name(index)
        verb, noun = name.split("_", 1)[0], name.split("_", 1)[1].rsplit("_", 1)[0].replace("_", " ")
        description = f"{verb.capitalize()} a {noun} of the fixture cloud (operation {index}); `resource` is its id."
        tool = model.model_copy(update={"name": name, "description": description, "fn": _generated(name)})
        server._tool_manager._tools[name] = tool


def _generated(name: str) -> Callable[[str, str], str]:
    def generated(resource: str, region: str = "cn-hangzhou") -> str:
        return f"{name} done for {resource} in {region}"

    return generated


# -- serving over HTTP in the test process ---------------------------------------------------------


@contextmanager
def serve_http(transport: Literal["http", "sse"]) -> Iterator[str]:
    """Serve the fixture on 127.0.0.1 (ephemeral port) in a thread; yields the endpoint URL."""
    app = server.streamable_http_app() if transport == "http" else server.sse_app()
    path = "/mcp" if transport == "http" else "/sse"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # An SSE stream never ends by itself: at the end, the server stops waiting for its clients after a second.
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    http = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(http.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not http.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the fixture MCP server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        http.should_exit = True
        thread.join(10)
        sock.close()


ESCAPEE = ["sleep", "313"]  # ends by itself if nothing ends it sooner
# The middle process of the double fork: starts the daemon in its own session, prints its pid, exits.
DOUBLE_FORK = (
    "import subprocess, sys; "
    "print(subprocess.Popen(sys.argv[1:], start_new_session=True, stdin=subprocess.DEVNULL,"
    " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)"
)


def start_escapees(pid_file: Path) -> None:
    quiet: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    setsid = subprocess.Popen(ESCAPEE, start_new_session=True, **quiet)
    middle = subprocess.run([sys.executable, "-c", DOUBLE_FORK, *ESCAPEE], capture_output=True, text=True, check=True)
    pids = {"server": os.getpid(), "setsid": setsid.pid, "daemon": int(middle.stdout)}
    pid_file.write_text(json.dumps(pids))


async def _serve_legacy_stdio() -> None:
    """Serve stdio as a server before MCP 2026-07-28 does: the initialize handshake only (the SDK's loop
    for it), so a client's server/discover fails and it falls back to initialize."""
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        await serve_loop(
            lowlevel, read, write, lifespan_state=state, init_options=lowlevel.create_initialization_options()
        )


def main(argv: list[str]) -> None:
    global WIRE_OUT
    WIRE_OUT = os.readlink("/proc/self/fd/1")
    for arg in argv:
        if arg.startswith("--escapees="):
            start_escapees(Path(arg.removeprefix("--escapees=")))
    if "--crash" in argv:
        print("fixture: cannot read /etc/fixture.conf: permission denied", file=sys.stderr, flush=True)
        sys.exit(3)
    for arg in argv:
        if arg.startswith("--tools="):
            add_generated_tools(int(arg.removeprefix("--tools=")))
    if "--legacy" in argv:
        anyio.run(_serve_legacy_stdio)
        return
    if "--silent" in argv:
        time.sleep(3600)
    server.run("stdio")
    if "--linger" in argv:  # a server that outlives its stdin: only a kill stops it
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1:])
