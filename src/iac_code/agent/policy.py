"""The one permission policy: given how a call is judged (its Access), the session's mode and what the
user remembered for the tool, run it, ask (with which options), or refuse (with a reason for the model).

The table (ask* = allow once / reject once only, asked every time; a remembered reject still answers):

    access \\ mode   default  accept-edits  read-only  plan    bypass-permissions
    read            run      run           run        run     run
    claimed_read    run      run           refuse     refuse  ask
    write           ask      run           refuse     refuse  run
    execute         ask      ask           refuse     ask     run
    unguarded_ex.   ask      ask           refuse     ask     refuse
    external        ask      ask           refuse     refuse  ask
    infra_change    ask*     ask*          refuse     refuse  ask*
    infra_plan      run      run           refuse     refuse  run
    workspace_code  ask      ask           refuse     refuse  ask

Elsewhere a remembered allow_always answers where the table says ask, and a remembered reject_always
refuses wherever the table would run or ask, reads included: the user's "never" outranks a lenient mode.
"workspace_code" is code the repository ships that a read-only tool would start (the provider plugins a
committed `.terraform/` holds, tflint plugins): never run unasked the first time, even when bypassing
permissions, and never in the modes that promise nothing runs; an "always allow" holds for the session.

MCP tools act outside the workspace, and a server's annotations are claims (the MCP spec says so): only
the user's config.json vouches for a server (`"trusted": true`). So "read" is a read-only tool of a trusted
server; "claimed_read" one that an untrusted server says is read-only: run where the user watches (default,
accept-edits), but never in the modes that promise nothing changes, and asked (an "always" holds) when
permissions are bypassed; "external" is any other MCP tool: asked even when bypassing permissions, unless
the user allowed it always. An MCP tool whose name or annotations say it applies, destroys or deletes
infrastructure is an "infra_change", like a command that does (mcp/access.py).
"unguarded_execute" is a command where the guard is missing a protection it needs (guard/README.md, Namespaces:
the cloud credential files cannot be hidden): asked where a command is, refused rather than run unasked when
permissions are bypassed, the refusal saying what is missing.
"infra_plan" is a Terraform/OpenTofu apply bound to a reviewed plan (tools/bound_apply.py): it runs
only to make the plan, then asks "infra_change" itself with the plan in the question (asked once, with
what will change, rather than before the plan exists); where nothing may change it is refused as an
infrastructure change is.
This module is also the one list of modes, and the one place an answer becomes a decision: a question's
answer (`answered`: a person's option, or a headless run's flags), the decision recorded in the end
(`settled`), a decision the audit trail could not keep (`unrecorded`), how a headless run answers with no
one to ask (`unasked`), and how a refusal reads on the stderr of a command whose guard's shim asked
(`shim_refusal`).

Rules (agent/rules.py) come first: the rule that fits a call (deny beats ask beats allow, found by
`Rules.match`) is a `RuleHit`. A deny refuses in every mode, bypass included, naming the rule and its file.
An ask asks where the table would run or ask (once options: the rule asks every time), and leaves a
refusal (the mode's, a remembered reject) as it is; an apply bound to a plan is asked with its plan anyway.
An allow runs where the table would ask, except an infrastructure change, which is always asked (a rule
never approves one); it never runs what the mode refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeGuard

# The modes live apart so that ACP's early answers (config_options.py) need none of the policy's imports.
from iac_code.agent.modes import MODE_IDS as MODE_IDS
from iac_code.agent.modes import MODES as MODES
from iac_code.agent.modes import Mode as Mode
from iac_code.agent.modes import ModeInfo as ModeInfo
from iac_code.guard.calls import USER_REFUSAL
from iac_code.guard.channel import ShimRequest
from iac_code.infra_commands import changes_argv
from iac_code.mcp.naming import PREFIX as MCP_TOOL_PREFIX
from iac_code.tools.base import Access, AccessDetails

OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
Choice = OptionKind | Literal["cancelled"]  # what the user answered; cancelled stops the whole turn
Remembered = Literal["allow", "reject"]
AnsweredBy = Literal["user", "headless-flag"]  # who answers the policy's questions: a person, or headless's flags


EVERY_OPTION: tuple[OptionKind, ...] = ("allow_once", "allow_always", "reject_once", "reject_always")
ONCE_OPTIONS: tuple[OptionKind, ...] = ("allow_once", "reject_once")

PERMISSION_DENIED = "Permission denied."
PLAN_MODE_REFUSAL = (
    "Not run: the session is in plan mode, where files and infrastructure are not changed. "
    "Describe the change you would make instead; the user can switch modes to apply it."
)
WORKSPACE_CODE_REFUSAL = "not run in read-only or plan mode, where code the workspace ships never runs"
UNGUARDED_REFUSAL = (
    "not run unasked: permissions are bypassed, but commands here cannot be kept from your cloud credential "
    "files (no mount namespaces: see /status). Switch to the default mode to be asked for each command"
)
UNTRUSTED_READ_REFUSAL = (
    "Not run in {mode} mode: this tool's MCP server says it is read-only, but the server is not trusted, so "
    'that is only a claim. The user can mark the server "trusted": true in config.json to allow its '
    "read-only tools in this mode."
)
AUDIT_UNWRITTEN = (
    "Not run: the audit trail could not be written ({problem}). Every decision is recorded before its call "
    "runs; tell the user, who can check the session database."
)
MCP_TOOL_REFUSAL = (
    "Not run in {mode} mode: an MCP tool may act outside the workspace, and only the tools a server marked "
    '"trusted": true in config.json declares read-only run in this mode.'
)


# Each verdict says what decided it (`source`), for the audit trail and for the user: "mode:<id>" (the table),
# "remembered" (an "always" answer); the rules add "rule:<file>:<entry>"; an answer "user:<option>", or
# "headless-flag" where a headless run's flags answered (its --allow-tools are what it remembers).
CHECK_REFUSAL = "a check never changes infrastructure"
HEADLESS_FLAG = "headless-flag"


@dataclass(frozen=True)
class Run:
    source: str = field(default="", compare=False)  # what decided, not what it decides


@dataclass(frozen=True)
class Ask:
    options: tuple[OptionKind, ...]
    infrastructure_change: bool = False
    source: str = field(default="", compare=False)  # what decided, not what it decides


@dataclass(frozen=True)
class Refuse:
    reason: str  # what the model receives as the call's (error) result
    source: str = field(default="", compare=False)  # what decided, not what it decides


Verdict = Run | Ask | Refuse


@dataclass(frozen=True)
class JudgedCall:
    """What a judge looks at: the tool's name (or, for a request in the middle of a call, its subject:
    "iac_check:tflint"), how the call is judged (its Access), the call's arguments, and what the request
    shows (a bound apply's plan contract). `opened`: the path a file tool will open, resolved once
    (tool_calls.py); Read and Write rules judge it, and the tool opens it as it is."""

    subject: str
    access: Access
    arguments: Mapping[str, Any] = field(default_factory=dict)
    details: AccessDetails | None = None
    opened: Path | None = None


# How one session judges a call. The loop calls it.
Judge = Callable[[JudgedCall], Verdict]

RuleDecision = Literal["deny", "ask", "allow"]


@dataclass(frozen=True)
class RuleHit:
    """The permission rule that fits a call (agent/rules.py): its decision, its entry as written, its file."""

    decision: RuleDecision
    entry: str
    file: str

    @property
    def source(self) -> str:
        return f"rule:{self.file}:{self.entry}"

    @property
    def refusal(self) -> str:
        return f'Denied by rule "{self.entry}" in {self.file}'


_RUN, _ASK, _ASK_ONCE = Run(), Ask(EVERY_OPTION), Ask(ONCE_OPTIONS, infrastructure_change=True)
_READ_ONLY, _PLAN = Refuse(PERMISSION_DENIED), Refuse(PLAN_MODE_REFUSAL)
_NO_WORKSPACE_CODE = Refuse(WORKSPACE_CODE_REFUSAL)

_TABLE: dict[Access, dict[Mode, Verdict]] = {
    "read": dict.fromkeys(MODE_IDS, _RUN),
    "claimed_read": {
        "default": _RUN,
        "accept-edits": _RUN,
        "read-only": Refuse(UNTRUSTED_READ_REFUSAL.format(mode="read-only")),
        "plan": Refuse(UNTRUSTED_READ_REFUSAL.format(mode="plan")),
        "bypass-permissions": _ASK,
    },
    "write": {
        "default": _ASK,
        "accept-edits": _RUN,
        "read-only": _READ_ONLY,
        "plan": _PLAN,
        "bypass-permissions": _RUN,
    },
    "execute": {
        "default": _ASK,
        "accept-edits": _ASK,
        "read-only": _READ_ONLY,
        "plan": _ASK,
        "bypass-permissions": _RUN,
    },
    "unguarded_execute": {
        "default": _ASK,
        "accept-edits": _ASK,
        "read-only": _READ_ONLY,
        "plan": _ASK,
        "bypass-permissions": Refuse(UNGUARDED_REFUSAL),
    },
    "external": {
        "default": _ASK,
        "accept-edits": _ASK,
        "read-only": Refuse(MCP_TOOL_REFUSAL.format(mode="read-only")),
        "plan": Refuse(MCP_TOOL_REFUSAL.format(mode="plan")),
        "bypass-permissions": _ASK,
    },
    "infra_change": {
        "default": _ASK_ONCE,
        "accept-edits": _ASK_ONCE,
        "read-only": _READ_ONLY,
        "plan": _PLAN,
        "bypass-permissions": _ASK_ONCE,
    },
    "infra_plan": {
        "default": _RUN,
        "accept-edits": _RUN,
        "read-only": _READ_ONLY,
        "plan": _PLAN,
        "bypass-permissions": _RUN,
    },
    "workspace_code": {
        "default": _ASK,
        "accept-edits": _ASK,
        "read-only": _NO_WORKSPACE_CODE,
        "plan": _NO_WORKSPACE_CODE,
        "bypass-permissions": _ASK,
    },
}


def decide(access: Access, mode: Mode, remembered: Remembered | None, rule: RuleHit | None = None) -> Verdict:
    """The verdict for one call (see the table above, and the rules after it)."""
    if rule is not None and rule.decision == "deny":
        return Refuse(rule.refusal, source=rule.source)
    verdict = _by_mode(access, mode, remembered)
    if rule is None or isinstance(verdict, Refuse):
        return verdict
    if rule.decision == "ask":
        if access == "infra_plan":  # it asks itself, with the plan, before anything changes
            return verdict
        infrastructure = access == "infra_change"
        return Ask(ONCE_OPTIONS, infrastructure_change=infrastructure, source=rule.source)
    if isinstance(verdict, Ask) and not verdict.infrastructure_change and access not in ("infra_change", "infra_plan"):
        return Run(source=rule.source)
    return verdict


def _by_mode(access: Access, mode: Mode, remembered: Remembered | None) -> Verdict:
    verdict = _TABLE[access][mode]
    if remembered == "reject" and not isinstance(verdict, Refuse):
        # "always reject" holds in every mode, even one that would run it
        return Refuse(PERMISSION_DENIED, source="remembered")
    if remembered == "allow" and isinstance(verdict, Ask) and not verdict.infrastructure_change:
        return Run(source="remembered")  # an "always allow" never covers an infrastructure change
    return replace(verdict, source=f"mode:{mode}")


def run_everything(call: JudgedCall) -> Verdict:
    """A Judge for tests and trusted embeddings: every call runs."""
    return _RUN


def is_mode(value: object) -> TypeGuard[Mode]:
    return value in MODE_IDS


def remembered_after(choice: Choice) -> Remembered | None:
    """What an answer makes the session remember for the tool (only the "always" options do)."""
    if choice == "allow_always":
        return "allow"
    if choice == "reject_always":
        return "reject"
    return None


def answered(choice: Choice, by: AnsweredBy = "user") -> Run | Refuse:
    """The decision an answer to the policy's question makes: an allow runs; a reject, or a cancel (which also
    stops the turn), is refused."""
    source = HEADLESS_FLAG if by == HEADLESS_FLAG else f"user:{choice}"
    return Run(source=source) if choice.startswith("allow") else Refuse(PERMISSION_DENIED, source=source)


def settled(verdict: Verdict, choice: Choice | None, by: AnsweredBy = "user") -> Verdict:
    """What was decided about a call in the end, as the audit trail records it: the answer its question got,
    else the verdict. A headless run remembers nothing but its --allow-tools: what it remembered is its flags'."""
    if choice is not None:
        return answered(choice, by)
    if by == HEADLESS_FLAG and verdict.source == "remembered":
        return replace(verdict, source=HEADLESS_FLAG)
    return verdict


@dataclass(frozen=True)
class Question:
    """A question of the policy's as a face that answers it itself sees it: what is judged (`subject`), the
    tool whose call asks (the subject's own, unless a running call asks for more), its title, and whether it
    is an infrastructure change."""

    subject: str
    tool: str
    title: str
    infrastructure_change: bool


def unasked(question: Question, allow_infra_changes: bool) -> Run | Refuse:
    """How a headless run answers, with no one to ask: an infrastructure change runs with
    --allow-infra-changes; anything else is refused, the reason naming the flag that would have allowed it.
    (--yes is the bypass-permissions mode: what it allows is never asked.)"""
    if question.infrastructure_change and allow_infra_changes:
        return Run(source=HEADLESS_FLAG)
    name = question.subject
    if question.infrastructure_change:
        reason = "an infrastructure change: allow those with --allow-infra-changes"
    elif name != question.tool:  # asked by a running call: code the workspace ships, which --yes does not cover
        reason = f"{question.title}: allow it with --allow-tools {name}"
    elif name.startswith(MCP_TOOL_PREFIX):  # --yes does not cover an MCP tool: it may act outside the workspace
        reason = f"allow it with --allow-tools {name}"
    else:
        reason = f"allow it with --allow-tools {name} or --yes"
    return Refuse(reason, source=HEADLESS_FLAG)


def unrecorded(problem: str) -> Refuse:
    """A call whose decision could not be written to the audit trail does not run: it would not be on record."""
    return Refuse(AUDIT_UNWRITTEN.format(problem=problem), source="audit-unwritten")


def check_command(changes: bool) -> Run | Refuse:
    """A command a check starts (iac_check's linters, iac_plan's terraform): a change is refused, never asked,
    in every mode: a check never changes infrastructure."""
    return Refuse(CHECK_REFUSAL, source="check") if changes else Run(source="check")


def answer_check_command(request: ShimRequest) -> str | None:
    """The guard's answer to a check's command's shim (registered by the start-up, cli.py): None runs it."""
    verdict = check_command(changes_argv(request.argv, request.env))
    return shim_refusal(verdict) if isinstance(verdict, Refuse) else None


def shim_refusal(refusal: Refuse) -> str:
    """What a guard's shim says on its command's stderr (`iac-code: terraform: <this>`) when the run it asked
    about is refused: that the user refused it, or the policy's reason."""
    return USER_REFUSAL if refusal.reason == PERMISSION_DENIED else f"refused: {refusal.reason}"
