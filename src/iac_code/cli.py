"""The `iac-code` command: `iac-code acp` (the ACP server), `iac-code -p PROMPT` (one headless turn),
`iac-code audit` (the audit trail of permission decisions), `iac-code token add NAME` (a principal of the HTTP
server)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING

from iac_code import __version__
from iac_code.config import ConfigError, Settings, load_settings
from iac_code.credentials import withhold_from_environment
from iac_code.guard.install import guard_checks_commands
from iac_code.logs import configure_logging
from iac_code.system.own_state import keep_out

if TYPE_CHECKING:
    from iac_code.guard.channel import ShimRequest

ENVIRONMENT_HELP = """\
environment variables (the same settings in $IAC_CODE_CONFIG_DIR/config.json: the name without IAC_CODE_,
lower-case, e.g. "provider", "mcp_timeout", "acp_http_token"; the environment wins):
  IAC_CODE_PROVIDER           openai, anthropic, dashscope, deepseek, openrouter, ollama, lmstudio, vllm,
                              openai_compatible, anthropic_compatible, scripted (unset: an offline demo)
  IAC_CODE_API_KEY            the model API key, or the provider's own variable: OPENAI_API_KEY,
                              ANTHROPIC_API_KEY, DASHSCOPE_API_KEY, DEEPSEEK_API_KEY, OPENROUTER_API_KEY
                              (read once, then erased from the environment, like ANTHROPIC_AUTH_TOKEN)
  IAC_CODE_MODEL              the model id (default: the provider's usual model)
  IAC_CODE_BASE_URL           the endpoint (required for *_compatible)
  IAC_CODE_SCRIPT             for the scripted provider: a JSON file of replies
  IAC_CODE_CONFIG_DIR         where settings and sessions live (default ~/.iac-code)
  IAC_CODE_MAX_TURNS          model calls per prompt, tool rounds included (default 50)
  IAC_CODE_MAX_TOKENS         output tokens per model call (default 8192)
  IAC_CODE_CONTEXT_WINDOW     the model's context window in tokens (default: known per model)
  IAC_CODE_COMPACT_THRESHOLD  share of the window that triggers compaction (default 0.8)
  IAC_CODE_TOOLS_SHARE        share of the window the tools' schemas may take before MCP tools are
                              found through tool_search instead of all listed (default 0.1)
  IAC_CODE_SESSION_IDLE_SECONDS  seconds before an idle session leaves memory (default 1800)
  IAC_CODE_IMAGES             1 or 0: whether prompts may carry images (default: known per model)
  IAC_CODE_CACHE_TTL          5m or 1h: how long Anthropic keeps the prompt cache (default 5m; 1h writes cost more)
  IAC_CODE_PROMPT_CACHE_KEY   1 or 0: send OpenAI's prompt_cache_key (default: only to api.openai.com)
  IAC_CODE_MCP_TIMEOUT        seconds one MCP tool call may take (default 120)
  IAC_CODE_DATABASE_URL       postgresql://…: sessions in PostgreSQL, HTTP instances serving as one
  IAC_CODE_INSTANCE_ID        with a database: this instance's name (default: host name + random suffix)
  IAC_CODE_HEARTBEAT_SECONDS  with a database: heartbeat interval (default 5)
  IAC_CODE_LEASE_SECONDS      with a database: how long a dead instance's sessions stay locked (default 15)
  IAC_CODE_WORKER_IDLE_SECONDS  seconds before an idle iac_check worker (checkov, cfn-lint) exits (default 1800)
  IAC_CODE_WARM               auto or off: whether `iac-code acp` on stdio hands its stdio to the user's warm
                              process, which starts the first time (default auto; docs/benchmarks.md)
  IAC_CODE_WARM_IDLE_SECONDS  seconds without a launch before the warm process exits (default 600)
  IACCODE_ACP_HTTP_TOKEN      bearer token the HTTP server requires (its holders are one admin: `shared`);
                              IAC_CODE_ACP_HTTP_TOKEN is the same setting (both set: they must agree)
  IAC_CODE_TOKENS_FILE        the HTTP server's principals and their token digests (`iac-code token add`;
                              default $IAC_CODE_CONFIG_DIR/tokens.json, read when it exists)
  IAC_CODE_JWKS               bearer JWTs: a JWKS file or https URL; with IAC_CODE_JWT_ISSUER, IAC_CODE_JWT_AUDIENCE
                              (the principal is `sub`; admin when IAC_CODE_JWT_ROLES_CLAIM, default `roles`,
                              holds IAC_CODE_JWT_ADMIN_ROLE, default `admin`)
  IAC_CODE_WORKSPACE_ROOTS    a shared server: the directories its principals may open sessions under
                              (config.json `workspace_roots`: a list, or lists by principal name and "*")
  IAC_CODE_CLIENT_MCP_COMMANDS  a shared server: the absolute paths a client's stdio MCP server may run
  IAC_CODE_CLIENT_MCP_NETWORKS  a shared server: private/loopback/… networks a client's http MCP server may reach
  IAC_CODE_INSECURE_JWKS      true: accept an http:// IAC_CODE_JWKS URL (tests only; as --insecure-jwks)
  IAC_CODE_WEBSOCKET_WITHOUT_ACP  true: serve WebSocket upgrades that do not offer the `acp` subprotocol
  IAC_CODE_HTTP_HEADER_TIMEOUT  seconds a socket has to send a whole request head (default 10)
  IAC_CODE_HTTP_MAX_SOCKETS   open sockets at once, past it new ones are closed (default: from the fd limit)
  IAC_CODE_HTTP_PRINCIPAL_CONNECTIONS, IAC_CODE_HTTP_PRINCIPAL_REQUESTS  what one principal may hold at once:
                              ACP connections (default 256) and open requests, streams and sockets (1024)

exit codes:
  0  done: the headless turn ended normally, or the ACP server stopped cleanly (stdin closed, SIGTERM)
  1  the headless turn did not end normally: a model call failed, a limit was hit, the model refused,
     or the output was closed before the end
  2  usage or configuration error (one line on stderr), including an HTTP server that could not start
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iac-code",
        description="An AI agent for infrastructure-as-code work (Terraform, ROS, CloudFormation, Kubernetes).",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"iac-code {__version__}")
    parser.add_argument("-p", "--prompt", help="run one headless turn in the current directory ('-' reads stdin)")
    parser.add_argument(
        "--output-format", choices=["text", "json", "stream-json"], default="text", help="headless output format"
    )
    parser.add_argument(
        "--allow-tools",
        default="",
        help="headless: comma-separated tools allowed to run (e.g. write_file,bash,mcp__server__tool); an unknown "
        "name is an error that lists the valid ones",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="headless: allow every tool without asking, except infrastructure changes, and MCP tools that may "
        "act outside the workspace (name those in --allow-tools)",
    )
    parser.add_argument(
        "--allow-infra-changes",
        action="store_true",
        help="headless: also run commands that change real infrastructure (terraform apply, kubectl delete, "
        "helm upgrade, ...), which neither --yes nor --allow-tools covers",
    )
    _add_logging_flags(parser)

    commands = parser.add_subparsers(dest="command")
    acp = commands.add_parser(
        "acp",
        help="serve the Agent Client Protocol (stdio by default, or HTTP+SSE)",
        description="Serve the Agent Client Protocol. With stdio (the default) an editor launches this\n"
        "command and speaks JSON-RPC on its stdin/stdout; with --transport http it serves /acp over HTTP+SSE.",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    acp.add_argument("--transport", choices=["stdio", "http"], default="stdio", help="default: stdio")
    acp.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    acp.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    acp.add_argument(
        "--allow-insecure-bind",
        action="store_true",
        help="allow binding a non-loopback address without IACCODE_ACP_HTTP_TOKEN (unsafe)",
    )
    acp.add_argument(
        "--max-body-bytes", type=int, default=16 * 1024 * 1024, help="HTTP request body limit (default 16 MiB)"
    )
    acp.add_argument(
        "--idle-timeout", type=float, default=600.0, help="seconds before an idle HTTP connection is reaped"
    )
    acp.add_argument(
        "--max-connections", type=int, default=4096, help="open HTTP connections allowed at once (default 4096)"
    )
    acp.add_argument(
        "--allowed-origin", action="append", default=[], help="extra Origin allowed to call the HTTP server"
    )
    acp.add_argument(
        "--insecure-jwks",
        action="store_true",
        help="accept an http:// IAC_CODE_JWKS URL (tests only: anyone on the path could replace the keys)",
    )
    acp.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        help="extra Host name served when bound to loopback (e.g. behind a reverse proxy)",
    )
    _add_logging_flags(acp)
    audit = commands.add_parser(
        "audit",
        help="print the audit trail: every permission decision, oldest first",
        description="Print the audit trail of the session store (SQLite, or PostgreSQL with IAC_CODE_DATABASE_URL):\n"
        "every permission decision, recorded before its call ran, and the exit status of infrastructure changes.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    audit.add_argument("--session", help="only this session's records")
    audit.add_argument("--since", help="only records from this time on (ISO 8601; without a zone, UTC)")
    audit.add_argument("--json", action="store_true", help="one JSON object per line")
    _add_logging_flags(audit)
    token = commands.add_parser("token", help="the HTTP server's principals (the tokens file)")
    token_commands = token.add_subparsers(dest="token_command", required=True)
    add = token_commands.add_parser(
        "add", help="make a random token for NAME, print it once, and store only its SHA-256 digest"
    )
    add.add_argument("name", help="the principal: letters, digits, '.', '_', '@' or '-'")
    add.add_argument("--admin", action="store_true", help="NAME sees and may use every session")
    return parser


def _add_logging_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debug", "-d", action="store_true", default=argparse.SUPPRESS, help="verbose logs on stderr")
    parser.add_argument("--log-file", default=argparse.SUPPRESS, help="also write logs to this file")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_what_to_do(parser, args)
    configure_logging(debug=getattr(args, "debug", False), log_file=getattr(args, "log_file", None))
    try:
        settings = load_settings()
        keep_out(settings)  # the config dir, database and tokens: out of every tool's and command's reach
        _check_user_rules(settings)
        withhold_from_environment()  # the settings keep the keys; nothing the agent runs may read them
        if args.command == "audit":
            return asyncio.run(_print_audit(args, settings))
        if args.command == "token":
            return _add_token(args, settings)
        guard_checks_commands(_answer_check_command)  # a server or a turn runs checks: their commands meet the guard
        if args.command == "acp":
            return _run_acp(args, settings)
        from iac_code.headless import run_headless
        from iac_code.iac.workers import configure_workers

        configure_workers(settings)
        return run_headless(args, settings)
    except ConfigError as exc:
        print(f"iac-code: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `iac-code -p … | head`: the reader has all it wanted
        _discard_stdout()
        return 1


def _check_user_rules(settings: Settings) -> None:
    """A bad permission rule in config.json stops the start-up (ConfigError), naming the file and the entry."""
    if settings.permissions is None and settings.trusted_projects is None:
        return  # nothing to check: the rule machinery is not imported
    from iac_code.agent.rules import RulesError, user_rules

    try:
        user_rules(settings.permissions, settings.trusted_projects, settings.config_dir / "config.json")
    except RulesError as exc:
        raise ConfigError(str(exc)) from None


# Headless options (dest → flag), which mean nothing without -p or with the acp command.
_HEADLESS_FLAGS = {
    "prompt": "-p",
    "yes": "--yes",
    "allow_tools": "--allow-tools",
    "allow_infra_changes": "--allow-infra-changes",
    "output_format": "--output-format",
}


def _check_what_to_do(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 with usage and a line saying what is wrong, rather than ignore a flag or do nothing."""
    given = [flag for dest, flag in _HEADLESS_FLAGS.items() if getattr(args, dest) != parser.get_default(dest)]
    if args.command is not None and given:
        parser.error(f"{', '.join(given)}: headless options (a -p run), which the {args.command} command does not take")
    if args.command == "audit" and args.since is not None:
        from iac_code.sessions.audit import since_time

        try:
            args.since = since_time(args.since)
        except ValueError:
            parser.error(f"--since {args.since}: not an ISO 8601 date or time (e.g. 2026-12-01 or 2026-12-01T09:30Z)")
    if args.command is None and args.prompt is None:
        if given:
            parser.error(f"{', '.join(given)} applies to a headless run: give -p PROMPT too")
        parser.print_help(sys.stderr)
        parser.exit(2, "\niac-code: error: nothing to do: give -p PROMPT for one headless turn, or the acp command\n")


def _answer_check_command(request: ShimRequest) -> str | None:
    # The policy decides (and loads with the first check's command, not at start-up).
    from iac_code.agent.policy import answer_check_command

    return answer_check_command(request)


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit does not fail on the closed pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


async def _print_audit(args: argparse.Namespace, settings: Settings) -> int:
    from iac_code.host.host import SessionHost

    host = SessionHost(settings)
    try:
        records = await (await host.audit_trail()).read(args.session, args.since)
    finally:
        await host.close()
    for record in records:
        if args.json:
            print(json.dumps(record.to_json(), ensure_ascii=False))
            continue
        # One record, one line: what a principal, a client or the model chose (a name, a session id, arguments)
        # cannot start a line of its own or hide text with control characters.
        fields = (record.principal, record.session, record.decision, record.source, record.tool)
        line = "  ".join((record.time, *(_printable(field) for field in fields)))
        if record.plan_sha256:
            counts = ", ".join(f"{n} {action}" for action, n in (record.plan_counts or {}).items() if n)
            line += f"  plan {record.plan_sha256[:12]} ({counts or 'no changes'})"
        if record.kind == "outcome":
            line += f"  ran: exit status {record.exit_status}"
        print(f"{line}  {_printable(record.arguments)}")
    return 0


def _printable(text: str) -> str:
    """`text` with every character that is not printable (newlines, escapes, bidi controls) escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _add_token(args: argparse.Namespace, settings: Settings) -> int:
    from iac_code.transports.http.tokens import add_token

    path = settings.tokens_path
    try:
        token = add_token(path, args.name, admin=args.admin)
    except ValueError as exc:
        print(f"iac-code: {exc}", file=sys.stderr)
        return 2
    print(token)  # the only time it is shown: the file keeps its digest alone
    role = "an admin" if args.admin else "a user"
    print(f"iac-code: {args.name} added to {path} as {role}; the token is not shown again", file=sys.stderr)
    return 0


def _run_acp(args: argparse.Namespace, settings: Settings) -> int:
    if args.transport == "http":
        from iac_code.serve import run_http

        return run_http(args, settings)
    from iac_code.serve import run_stdio

    return run_stdio(settings)


if __name__ == "__main__":
    sys.exit(main())
