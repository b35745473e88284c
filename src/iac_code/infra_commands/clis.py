"""The infrastructure tools' command lines: which subcommands change real infrastructure.

- terraform / tofu / terragrunt: apply, destroy, import, taint, untaint, refresh, test (it applies and
  destroys real resources), force-unlock, state rm|mv|push|replace-provider, workspace delete
  (terragrunt's run-all / run --all / apply-all / destroy-all included);
- pulumi: up/update, destroy, import, refresh, state delete|move, stack rm;
- kubectl (and oc): apply, create, delete, replace, patch, scale, edit, drain, cordon, uncordon, label,
  annotate, taint, set, autoscale, expose, run, rollout restart|undo|pause|resume, certificate
  approve|deny; not with --dry-run (client or server);
- helm: install, upgrade, uninstall (delete), rollback; not with --dry-run;
- aws cloudformation: every operation but describe-/list-/get-/validate-/estimate-/detect-, wait, package;
- aliyun ros: every API but Describe*/List*/Get*/Validate*/Preview*/Detect*/Check*/Generate*;
- cdk / ros-cdk deploy|destroy, sam deploy|delete|sync.

Not changing: terraform plan (also -destroy), validate, fmt, show, output, init; kubectl get, diff,
describe, logs; helm template, lint, diff. The subcommand is the first argument that is one of the tool's
subcommands (global options and their values come before it); one computed at run time counts as changing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from iac_code.infra_commands.shell_syntax import Word

TERRAFORM_SUBCOMMANDS = frozenset(
    {
        "init", "validate", "plan", "apply", "destroy", "console", "fmt", "force-unlock", "get", "graph",
        "import", "login", "logout", "metadata", "modules", "output", "providers", "refresh", "show",
        "state", "taint", "test", "untaint", "version", "workspace", "apply-all", "destroy-all", "plan-all",
        "validate-all", "output-all", "render-json", "hclfmt", "hclvalidate", "catalog", "scaffold", "info",
    }
)  # fmt: skip
TERRAFORM_CHANGING = frozenset(
    {"apply", "destroy", "import", "taint", "untaint", "refresh", "test", "force-unlock", "apply-all", "destroy-all"}
)
TERRAFORM_STATE_CHANGING = frozenset({"rm", "mv", "push", "replace-provider"})

KUBECTL_CHANGING = frozenset(
    {
        "apply", "create", "delete", "replace", "patch", "scale", "edit", "drain", "cordon", "uncordon",
        "label", "annotate", "taint", "set", "autoscale", "expose", "run",
    }
)  # fmt: skip
KUBECTL_SUBCOMMANDS = KUBECTL_CHANGING | {
    "rollout", "certificate", "get", "describe", "diff", "logs", "explain", "exec", "port-forward", "proxy",
    "cp", "top", "version", "api-resources", "api-versions", "config", "cluster-info", "auth", "wait",
    "events", "kustomize", "plugin", "completion", "attach", "debug", "alpha",
}  # fmt: skip
KUBECTL_ROLLOUT_CHANGING = frozenset({"restart", "undo", "pause", "resume"})

HELM_CHANGING = frozenset({"install", "upgrade", "uninstall", "delete", "del", "un", "rollback"})
HELM_SUBCOMMANDS = HELM_CHANGING | {
    "template", "lint", "list", "ls", "status", "get", "history", "hist", "show", "inspect", "repo",
    "dependency", "dep", "search", "pull", "fetch", "package", "plugin", "version", "env", "test", "create",
    "verify", "push", "registry", "completion", "diff",
}  # fmt: skip

PULUMI_CHANGING = frozenset({"up", "update", "destroy", "import", "refresh"})
PULUMI_SUBCOMMANDS = PULUMI_CHANGING | {
    "preview", "stack", "state", "config", "login", "logout", "new", "whoami", "version", "plugin", "about",
    "cancel", "console", "convert", "logs", "org", "package", "policy", "schema", "watch", "install", "env",
}  # fmt: skip

AWS_OPTIONS_WITH_VALUE = frozenset(
    {"--region", "--profile", "--output", "--endpoint-url", "--query", "--color", "--ca-bundle",
     "--cli-read-timeout", "--cli-connect-timeout", "--cli-binary-format", "--cli-auto-prompt"}
)  # fmt: skip
AWS_CFN_READ = ("describe-", "list-", "get-", "validate-", "estimate-", "detect-", "wait", "package", "help")
ALIYUN_OPTIONS_WITH_VALUE = frozenset(
    {"--profile", "-p", "--region", "--mode", "--access-key-id", "--access-key-secret", "--sts-token",
     "--ram-role-name", "--ram-role-arn", "--role-session-name", "--config-path", "--endpoint", "--read-timeout",
     "--connect-timeout", "--retry-count", "--language", "--output", "--header"}
)  # fmt: skip
ALIYUN_ROS_READ = ("describe", "list", "get", "validate", "preview", "detect", "check", "generate")
DEPLOY_TOOLS = {
    "cdk": frozenset({"deploy", "destroy"}),
    "ros-cdk": frozenset({"deploy", "destroy"}),
    "sam": frozenset({"deploy", "delete", "sync"}),
}
DEPLOY_READ = frozenset({"synth", "diff", "list", "ls", "build", "validate"})


def _first_known(args: Sequence[Word], known: frozenset[str]) -> tuple[int, str] | None:
    """Index and name of the first argument that is a known subcommand; ("?") for a dynamic one before it."""
    for index, word in enumerate(args):
        if word.dynamic and not word.text.startswith("-"):
            return index, "?"
        if word.text in known:
            return index, word.text
    return None


def _next_word(args: Sequence[Word], after: int) -> str | None:
    for word in args[after + 1 :]:
        if word.dynamic:
            return "?"
        if not word.text.startswith("-"):
            return word.text
    return None


@dataclass(frozen=True)
class _Cli:
    """How a tool's subcommands read: which change things, and which do only with a given next word."""

    known: frozenset[str]  # every subcommand: the first argument that is one of them is the subcommand
    changing: frozenset[str]
    changing_second: Mapping[str, frozenset[str]] = field(default_factory=dict)  # state -> {rm, mv...}
    harmless_second: Mapping[str, frozenset[str]] = field(default_factory=dict)  # apply -> {view-last-applied}
    dry_run_allowed: bool = False  # --dry-run (client/server) makes a changing subcommand harmless

    def changes(self, args: Sequence[Word]) -> bool:
        found = _first_known(args, self.known)
        if found is None:
            return False
        index, name = found
        if name == "?":
            return True
        second = _next_word(args, index)
        if name in self.changing:
            if second in self.harmless_second.get(name, ()):
                return False
            return not (self.dry_run_allowed and _dry_run(args))
        return name in self.changing_second and second in (*self.changing_second[name], "?")


def _dry_run(args: Sequence[Word]) -> bool:
    return any(w.text == "--dry-run" or (w.text.startswith("--dry-run=") and w.text != "--dry-run=none") for w in args)


TERRAFORM = _Cli(
    TERRAFORM_SUBCOMMANDS,
    TERRAFORM_CHANGING,
    changing_second={"state": TERRAFORM_STATE_CHANGING, "workspace": frozenset({"delete"})},
)
KUBECTL = _Cli(
    KUBECTL_SUBCOMMANDS,
    KUBECTL_CHANGING,
    changing_second={"rollout": KUBECTL_ROLLOUT_CHANGING, "certificate": frozenset({"approve", "deny"})},
    harmless_second={"apply": frozenset({"view-last-applied"})},
    dry_run_allowed=True,
)
HELM = _Cli(HELM_SUBCOMMANDS, HELM_CHANGING, dry_run_allowed=True)
PULUMI = _Cli(
    PULUMI_SUBCOMMANDS,
    PULUMI_CHANGING,
    changing_second={"state": frozenset({"delete", "move"}), "stack": frozenset({"rm"})},
)


def _service_call(args: Sequence[Word], options_with_value: frozenset[str]) -> tuple[str, str | None] | None:
    """(service, operation) of `aws`/`aliyun` arguments, skipping global options; "?" where dynamic."""
    words: list[str] = []
    skip_value = False
    for word in args:
        if skip_value:
            skip_value = False
            continue
        if word.dynamic:
            words.append("?")
        elif word.text.startswith("-"):
            skip_value = word.text in options_with_value
            continue
        else:
            words.append(word.text)
        if len(words) == 2:
            break
    if not words:
        return None
    return words[0], words[1] if len(words) > 1 else None


def _aws(args: Sequence[Word]) -> bool:
    call = _service_call(args, AWS_OPTIONS_WITH_VALUE)
    if call is None or call[0] not in ("cloudformation", "?"):
        return False
    operation = call[1]
    return operation is not None and (operation == "?" or not operation.startswith(AWS_CFN_READ))


def _aliyun(args: Sequence[Word]) -> bool:
    call = _service_call(args, ALIYUN_OPTIONS_WITH_VALUE)
    if call is None or call[0].lower() not in ("ros", "?"):
        return False
    operation = call[1]
    return operation is not None and (
        operation == "?" or not operation.replace("-", "").lower().startswith(ALIYUN_ROS_READ)
    )


# Program base name -> whether a call with these arguments (after the program name) changes infrastructure.
CHANGE_CHECKS: dict[str, Callable[[Sequence[Word]], bool]] = {
    "terraform": TERRAFORM.changes,
    "tofu": TERRAFORM.changes,
    "terragrunt": TERRAFORM.changes,
    "tf": TERRAFORM.changes,
    "kubectl": KUBECTL.changes,
    "oc": KUBECTL.changes,
    "k": KUBECTL.changes,
    "helm": HELM.changes,
    "pulumi": PULUMI.changes,
    "aws": _aws,
    "aliyun": _aliyun,
    **{name: _Cli(changing | DEPLOY_READ, changing).changes for name, changing in DEPLOY_TOOLS.items()},
}
