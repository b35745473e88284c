"""Which secrets a session redacts, and that every result is redacted at the one place it is recorded: the
history (the model's next request and the store), the event the client is shown, an MCP result's parts."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import mcp_types
from tests.unit.agent.fakes import FakeProvider, FakeTool, call, make_loop, say

from iac_code.agent.events import ToolFinished
from iac_code.agent.secrets import (
    DATABASE_PASSWORD,
    HTTP_TOKEN,
    MODEL_KEY,
    TOKENS_FILE_TOKEN,
    TokenDigests,
    agent_secrets,
    redacted_result,
    session_redactor,
)
from iac_code.config import Settings
from iac_code.mcp.results import tool_result
from iac_code.messages import Diff, Resource
from iac_code.redaction import marker
from iac_code.tools.base import ToolContext, ToolResult

KEY = "sk-model-key-0123456789abcdef"
ENVIRONMENT = {
    "OPENAI_API_KEY": KEY,
    "ANTHROPIC_AUTH_TOKEN": "ant-auth-token-0123456789",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "AWS_SESSION_TOKEN": "FwoGZXIvYXdzEJr//////////wEaDEXAMPLETOKEN",
    "ALICLOUD_SECRET_KEY": "alicloud-secret-0123456789",
    "ARM_CLIENT_SECRET": "arm~client.secret-0123456789",
    "TF_TOKEN_app_terraform_io": "tfc-token.atlasv1.0123456789",
    "VAULT_TOKEN": "hvs.CAESIJ0123456789abcdef",
    # not secrets: a region, a profile, paths, a project, and what is no credential at all
    "AWS_REGION": "cn-hangzhou-finance",
    "AWS_PROFILE": "production-admin",
    "AWS_SHARED_CREDENTIALS_FILE": "/home/me/.aws/credentials",
    "GOOGLE_APPLICATION_CREDENTIALS": "~/keys/service-account.json",
    "KUBECONFIG": "/home/me/.kube/config",
    "GOOGLE_CLOUD_PROJECT": "my-infrastructure-project",
    "HOME": "/home/me/somewhere",
}


def settings(tmp_path: Path, **changes: object) -> Settings:
    base = Settings(
        config_dir=tmp_path,
        api_key="sk-configured-api-key-0123",
        http_token="http-bearer-token-0123456789",
        database_url="postgresql://iac:db-password-0123456@db.internal/iac",
        env=ENVIRONMENT,
    )
    for name, value in changes.items():
        setattr(base, name, value)
    return base


def test_the_agent_s_own_secrets_and_the_secret_cloud_credentials_are_the_secrets(tmp_path):
    assert agent_secrets(settings(tmp_path)) == {
        "OPENAI_API_KEY": KEY,
        "ANTHROPIC_AUTH_TOKEN": "ant-auth-token-0123456789",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
        "AWS_SESSION_TOKEN": "FwoGZXIvYXdzEJr//////////wEaDEXAMPLETOKEN",
        "ALICLOUD_SECRET_KEY": "alicloud-secret-0123456789",
        "ARM_CLIENT_SECRET": "arm~client.secret-0123456789",
        "TF_TOKEN_app_terraform_io": "tfc-token.atlasv1.0123456789",
        "VAULT_TOKEN": "hvs.CAESIJ0123456789abcdef",
        MODEL_KEY: "sk-configured-api-key-0123",
        HTTP_TOKEN: "http-bearer-token-0123456789",
        DATABASE_PASSWORD: "db-password-0123456",
    }


def test_nothing_configured_is_no_secret(tmp_path):
    assert agent_secrets(Settings(config_dir=tmp_path, env={"HOME": "/home/me", "AWS_REGION": "us-east-1"})) == {}
    assert agent_secrets(Settings(config_dir=tmp_path, database_url="postgresql://[not-a-url")) == {}


def test_the_tokens_file_s_tokens_are_found_and_a_new_one_at_once(tmp_path):
    path = tmp_path / "tokens.json"
    redactor = session_redactor(settings(tmp_path))
    first, second = "A" * 43, "n8Q0aZsVt2pGqkM5Jx1yRb7cWd3eHf9LiOu4oTl6Y_-"
    assert redactor.redact(f"t {first}") == f"t {first}"  # no file yet
    path.write_text(json.dumps({"tokens": [{"name": "alice", "sha256": hashlib.sha256(first.encode()).hexdigest()}]}))
    assert redactor.redact(f"t {first}") == f"t {marker(TOKENS_FILE_TOKEN)}"
    entries = [
        {"name": n, "sha256": hashlib.sha256(t.encode()).hexdigest().upper()} for n, t in (("a", first), ("b", second))
    ]
    path.write_text(json.dumps({"tokens": entries}, indent=1))
    assert redactor.redact(f"{second}") == marker(TOKENS_FILE_TOKEN)


def test_a_tokens_file_that_cannot_be_read_gives_no_digests(tmp_path):
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    assert TokenDigests(path)() == frozenset()


def test_every_part_a_result_shows_is_redacted_and_the_call_s_own_secret_spent(tmp_path):
    redactor = session_redactor(settings(tmp_path))
    encoded = base64.b64encode(KEY.encode()).decode()
    result = ToolResult(
        f"key={KEY}\ntoken=tok-of-this-call-0123",
        raw_output={"outputs": [{"value": encoded}], "count": 2},
        diff=Diff("/w/.env", f"OPENAI_API_KEY={KEY}\n", "OPENAI_API_KEY=\n"),
        content=[Resource({"type": "resource", "resource": {"uri": "file:///w/.env", "text": KEY}})],
        terminal_id="term-1",
        secrets={"the guard's token": "tok-of-this-call-0123"},
    )
    redacted = redacted_result(result, redactor)
    shown = marker("OPENAI_API_KEY")
    assert redacted.text == f"key={shown}\ntoken=" + marker("the guard's token")
    assert redacted.raw_output == {"outputs": [{"value": shown}], "count": 2}
    assert redacted.diff == Diff("/w/.env", f"OPENAI_API_KEY={shown}\n", "OPENAI_API_KEY=\n")
    assert redacted.content == [Resource({"type": "resource", "resource": {"uri": "file:///w/.env", "text": shown}})]
    assert redacted.terminal_id is None  # the editor's terminal shows the output as printed
    assert redacted.secrets == {}


def test_a_result_without_secrets_is_kept_whole(tmp_path):
    result = ToolResult("Plan: 1 to add.", raw_output={"n": 1}, terminal_id="term-1")
    assert redacted_result(result, session_redactor(settings(tmp_path))) == result


class PrintsSecrets(FakeTool):
    """A tool whose output holds the key: plain and in base64, and an MCP result built by the MCP layer."""

    async def run(self, args, ctx: ToolContext) -> ToolResult:
        if args.get("mcp"):
            block = mcp_types.TextContent(type="text", text=f"from the server: {KEY}")
            return tool_result(mcp_types.CallToolResult(content=[block], structured_content={"key": KEY}))
        return ToolResult(f"{KEY} {base64.b64encode(KEY.encode()).decode()}")


async def test_the_loop_redacts_before_the_history_the_model_and_the_client_see_a_result(tmp_path):
    provider = FakeProvider(call("prints", "c1"), call("prints", "c2", mcp=True), say("done"))
    stored = []
    loop = make_loop(
        provider,
        [PrintsSecrets("prints")],
        workspace=tmp_path,
        on_message=stored.append,
        redactor=session_redactor(settings(tmp_path)),
    )
    events = [event async for event in loop.run("print it")]
    shown = marker("OPENAI_API_KEY")
    finished = [event.result for event in events if isinstance(event, ToolFinished)]
    assert [message.text for message in finished] == [
        f"{shown} {shown}",
        f'from the server: {shown}\n{{\n  "key": "{shown}"\n}}',
    ]
    assert finished[1].shown is not None and KEY not in json.dumps(finished[1].shown.raw_output)
    everything = json.dumps([m.to_dict() for m in stored]) + json.dumps([m.to_dict() for m in provider.calls[-1]])
    assert KEY not in everything and base64.b64encode(KEY.encode()).decode() not in everything
    assert shown in everything


class Delegates(FakeTool):
    async def run(self, args, ctx: ToolContext) -> ToolResult:
        assert ctx.run_subagent is not None
        return ToolResult(await ctx.run_subagent(args["prompt"]))


async def test_a_sub_agent_s_results_are_redacted_too(tmp_path):
    provider = FakeProvider(call("agent", "p1", prompt="look"), call("prints", "s1"), say("seen"), say("done"))
    tools = [Delegates("agent", category="execute"), PrintsSecrets("prints")]
    loop = make_loop(provider, tools, workspace=tmp_path, redactor=session_redactor(settings(tmp_path)))
    [event async for event in loop.run("delegate")]
    child_request = provider.calls[2]  # the sub-agent's second model call, after its tool's result
    shown = marker("OPENAI_API_KEY")
    assert [m.text for m in child_request if m.role == "tool"] == [f"{shown} {shown}"]
