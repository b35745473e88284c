"""The infrastructure tools' command lines: which subcommands change real infrastructure.

- terraform / tofu / terragrunt: apply, destroy, import, taint, untaint, refresh, test (it applies and
  destroys real resources), force-unlock, state rm|mv|push|replace-provider, workspace delete and its old
  name env delete, terragrunt's backend delete|migrate|bootstrap (run-all / run --all / apply-all /
  destroy-all included); TF_CLI_ARGS* are folded in by rule.py;
- pulumi: up/update, destroy (and its aliases down, dn), import, refresh, watch, state delete|move|rename|
  edit|protect|unprotect|taint|untaint|repair, stack rm|rename|import;
- kubectl (and oc): apply, create, delete, replace, patch, scale, edit, drain, cordon, uncordon, label,
  annotate, taint, set, autoscale, expose, run, rollout restart|undo|pause|resume, certificate
  approve|deny, auth reconcile, and exec, cp, debug, attach (they act inside the cluster), port-forward
  and proxy (they open it to programs no shim sees, proxy with the user's credentials) (oc also
  new-project, new-app, new-build, start-build, import-image, tag, rsh, rsync, adm …); not with --dry-run
  (client or server), a --dry-run that is a flag's value excepted (`--cache-dir --dry-run=server`);
- helm: install, upgrade, uninstall (delete), rollback; not with --dry-run;
- cdk deploy|destroy|bootstrap|import|watch|rollback|gc, cdktf deploy|apply|destroy|watch, ros-cdk
  deploy|destroy, sam deploy|delete|sync|remote invoke|pipeline bootstrap;
- microk8s enable|disable|reset|join|leave|remove-node|start|stop|refresh-certs (its kubectl and helm are
  unwrapped by the rule, wrappers.py);
- helmfile apply|sync|destroy|delete|charts; eksctl create|delete|upgrade|scale|drain|set|unset|update|
  enable|register|deregister|associate|disassociate;
- aws, gcloud, az and aliyun: cloud_clis.py; gsutil and bq: storage_clis.py.

Not changing: terraform plan (also -destroy), validate, fmt, show, output, init; kubectl get, diff,
describe, logs; helm template, lint, diff. The subcommand is the first operand once the global options
and their values are skipped (options.py: `kubectl -n get delete` deletes); when it is not one the tool
knows (a plugin such as `helm secrets upgrade`), the first known one after it. A subcommand computed at
run time counts as changing. kubectl's and helm's `--dry-run` count as the last one before `--` says:
bare, `client`, `server` or `true` is a dry run; `none` or `false` changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from iac_code.infra_commands.cloud_clis import CLOUD_CHECKS, CLOUD_GUESSES
from iac_code.infra_commands.options import Options, last_flag_value, operand_readings
from iac_code.infra_commands.shell_syntax import Word
from iac_code.infra_commands.storage_clis import bq_changes, gsutil_changes

TERRAFORM_SUBCOMMANDS = frozenset(
    {
        "init", "validate", "plan", "apply", "destroy", "console", "fmt", "force-unlock", "get", "graph",
        "import", "login", "logout", "metadata", "modules", "output", "providers", "refresh", "show",
        "state", "taint", "test", "untaint", "version", "workspace", "env", "apply-all", "destroy-all", "plan-all",
        "validate-all", "output-all", "render-json", "hclfmt", "hclvalidate", "catalog", "scaffold", "info",
        "backend",
    }
)  # fmt: skip
TERRAFORM_CHANGING = frozenset(
    {"apply", "destroy", "import", "taint", "untaint", "refresh", "test", "force-unlock", "apply-all", "destroy-all"}
)
TERRAFORM_STATE_CHANGING = frozenset({"rm", "mv", "push", "replace-provider"})
TERRAFORM_SECOND = {
    "state": TERRAFORM_STATE_CHANGING,
    "workspace": frozenset({"delete"}),
    "env": frozenset({"delete"}),  # the old name of workspace
    "backend": frozenset({"delete", "migrate", "bootstrap"}),  # terragrunt's: the state bucket and its content
}
TERRAFORM_OPTIONS = Options(  # terraform's own are `-chdir=DIR`, `-help`, `-version`; the rest are terragrunt's
    with_value=frozenset(
        {"-chdir", "--working-dir", "--terragrunt-working-dir", "--config", "--terragrunt-config", "--log-level",
         "--terragrunt-log-level", "--log-format", "--tf-path", "--terragrunt-tfpath", "--download-dir",
         "--terragrunt-download-dir", "--source", "--terragrunt-source", "--iam-assume-role",
         "--terragrunt-iam-role", "--parallelism", "--terragrunt-parallelism", "--queue-include-dir",
         "--terragrunt-include-dir", "--queue-exclude-dir", "--terragrunt-exclude-dir", "--feature"}
    ),
    flags=frozenset(
        {"-help", "-version", "-v", "-h", "--help", "--version", "--all", "-a", "--graph", "--non-interactive",
         "--terragrunt-non-interactive", "--no-color", "-no-color"}
    ),
)  # fmt: skip

KUBECTL_CHANGING = frozenset(
    {
        "apply", "create", "delete", "replace", "patch", "scale", "edit", "drain", "cordon", "uncordon",
        "label", "annotate", "taint", "set", "autoscale", "expose", "run",
        # they act inside the cluster (a command in a container, files into it, a debug pod) or open it to
        # programs no shim sees (proxy: the API with the user's credentials; port-forward: a service)
        "exec", "cp", "debug", "attach", "port-forward", "proxy",
    }
)  # fmt: skip
KUBECTL_SUBCOMMANDS = KUBECTL_CHANGING | {
    "rollout", "certificate", "get", "describe", "diff", "logs", "explain", "top", "version", "api-resources",
    "api-versions", "config", "cluster-info", "auth", "wait", "events", "kustomize", "plugin", "completion", "alpha",
}  # fmt: skip
KUBECTL_SECOND = {
    "rollout": frozenset({"restart", "undo", "pause", "resume"}),
    "certificate": frozenset({"approve", "deny"}),
    "auth": frozenset({"reconcile"}),
}
KUBECTL_OPTIONS = Options(
    with_value=frozenset(
        {"-n", "--namespace", "-s", "--server", "--as", "--as-group", "--as-uid", "--cache-dir",
         "--certificate-authority", "--client-certificate", "--client-key", "--cluster", "--context",
         "--kubeconfig", "--password", "--profile", "--profile-output", "--request-timeout", "--tls-server-name",
         "--token", "--user", "--username", "-v", "--v", "--vmodule", "--log-flush-frequency"}
    ),
    flags=frozenset(
        {"--insecure-skip-tls-verify", "--match-server-version", "--warnings-as-errors", "--disable-compression",
         "-h", "--help", "--version"}
    ),
)  # fmt: skip
# Where a `--dry-run` is kubectl's own and not an option's value (`--cache-dir --dry-run=server` is a cache
# directory): the subcommands' options too. pflag gives a value-taking option the next word, whatever it is;
# `--dry-run`, `--validate` and `--cascade` take theirs only after `=`.
KUBECTL_ALL_OPTIONS = Options(
    with_value=KUBECTL_OPTIONS.with_value
    | {"-f", "--filename", "-k", "--kustomize", "-o", "--output", "-l", "--selector", "--field-selector", "-p",
       "--patch", "--type", "--field-manager", "--timeout", "--grace-period", "-c", "--container", "--image",
       "--replicas", "--overrides", "--template", "--for", "--prune-allowlist", "--subresource", "--patch-file"},
    flags=KUBECTL_OPTIONS.flags
    | {"--dry-run", "--server-side", "--force", "--force-conflicts", "--prune", "--all", "-A", "--all-namespaces",
       "-R", "--recursive", "--wait", "--overwrite", "--record", "--validate", "--ignore-not-found", "--now",
       "--cascade", "-i", "-t", "--stdin", "--tty", "--rm", "--local", "--save-config"},
)  # fmt: skip
OC_CHANGING = KUBECTL_CHANGING | {
    "new-project", "new-app", "new-build", "start-build", "cancel-build", "import-image", "tag", "rollback", "rsh",
    "rsync",
}  # fmt: skip
OC_SECOND = {
    **KUBECTL_SECOND,
    "adm": frozenset({"cordon", "uncordon", "drain", "taint", "policy", "prune", "groups", "new-project", "certificate",
                      "upgrade", "reboot-machine-config-pool"}),
    "policy": frozenset({"add-role-to-user", "add-role-to-group", "remove-role-from-user", "remove-role-from-group",
                         "add-scc-to-user", "add-scc-to-group", "remove-scc-from-user", "remove-scc-from-group"}),
}  # fmt: skip

HELM_CHANGING = frozenset({"install", "upgrade", "uninstall", "delete", "del", "un", "rollback"})
HELM_SUBCOMMANDS = HELM_CHANGING | {
    "template", "lint", "list", "ls", "status", "get", "history", "hist", "show", "inspect", "repo",
    "dependency", "dep", "search", "pull", "fetch", "package", "plugin", "version", "env", "test", "create",
    "verify", "push", "registry", "completion", "diff",
}  # fmt: skip
HELM_OPTIONS = Options(
    with_value=frozenset(
        {"-n", "--namespace", "--kube-context", "--kubeconfig", "--kube-apiserver", "--kube-as-user",
         "--kube-as-group", "--kube-ca-file", "--kube-token", "--kube-tls-server-name", "--burst-limit", "--qps",
         "--registry-config", "--repository-cache", "--repository-config", "--content-cache"}
    ),
    flags=frozenset({"--debug", "--kube-insecure-skip-tls-verify", "-h", "--help"}),
)  # fmt: skip
HELM_ALL_OPTIONS = Options(
    with_value=HELM_OPTIONS.with_value
    | {"-f", "--values", "--set", "--set-string", "--set-file", "--set-json", "--set-literal", "--version",
       "--timeout", "--description", "--post-renderer", "--post-renderer-args", "--repo", "--username",
       "--password", "-o", "--output", "--history-max", "--max"},
    flags=HELM_OPTIONS.flags
    | {"--dry-run", "--install", "-i", "--atomic", "--rollback-on-failure", "--wait", "--wait-for-jobs", "--force",
       "--reuse-values", "--reset-values", "--reset-then-reuse-values", "--create-namespace", "--devel",
       "--skip-crds", "--dependency-update", "--cleanup-on-fail", "--no-hooks", "--take-ownership",
       "--keep-history", "--plain-http", "--insecure-skip-tls-verify", "--skip-schema-validation"},
)  # fmt: skip

# `down` and `dn` are destroy's aliases
PULUMI_CHANGING = frozenset({"up", "update", "destroy", "down", "dn", "import", "refresh", "watch"})
PULUMI_SUBCOMMANDS = PULUMI_CHANGING | {
    "preview", "stack", "state", "config", "login", "logout", "new", "whoami", "version", "plugin", "about",
    "cancel", "console", "convert", "logs", "org", "package", "policy", "schema", "install", "env",
}  # fmt: skip
PULUMI_SECOND = {
    "state": frozenset(
        {"delete", "move", "rename", "edit", "protect", "unprotect", "taint", "untaint", "repair", "upgrade"}
    ),
    "stack": frozenset({"rm", "rename", "import"}),
}
PULUMI_OPTIONS = Options(
    with_value=frozenset(
        {"-C", "--cwd", "--color", "--memprofilerate", "--profiling", "--tracing", "--tracing-header", "-v",
         "--verbose", "-s", "--stack"}
    ),
    flags=frozenset(
        {"--disable-integrity-checking", "-e", "--emoji", "--logflow", "--logtostderr", "--non-interactive",
         "-h", "--help"}
    ),
)  # fmt: skip

DEPLOY_OPTIONS = Options(  # cdk, cdktf, ros-cdk, sam
    with_value=frozenset(
        {"-a", "--app", "-c", "--context", "-p", "--plugin", "--profile", "--proxy", "--ca-bundle-path", "-o",
         "--output", "-r", "--role-arn", "--toolkit-stack-name", "--region", "--config-file", "--config-env",
         "-t", "--template", "--template-file", "--log-level"}
    ),
)  # fmt: skip
DEPLOY_READ = frozenset(
    {"synth", "synthesize", "diff", "plan", "list", "ls", "build", "validate", "doctor", "docs", "context", "init",
     "acknowledge", "notices", "metadata", "version", "get", "output", "local", "logs", "traces", "package"}
)  # fmt: skip
MICROK8S_CHANGING = frozenset(
    {"enable", "disable", "reset", "join", "leave", "remove-node", "start", "stop", "refresh-certs"}
)
MICROK8S_READ = frozenset({"status", "config", "inspect", "version", "images", "dashboard-proxy", "add-node"})

HELMFILE_CHANGING = frozenset({"apply", "sync", "destroy", "delete", "charts"})
HELMFILE_OPTIONS = Options(
    with_value=frozenset(
        {"-f", "--file", "-e", "--environment", "-n", "--namespace", "--kube-context", "-l", "--selector",
         "--state-values-set", "--state-values-file", "-b", "--helm-binary", "--log-level", "--chart"}
    ),
    flags=frozenset({"-i", "--interactive", "-q", "--quiet", "--debug", "--allow-no-matching-release", "--color"}),
)  # fmt: skip
HELMFILE_READ = frozenset(
    {"diff", "template", "lint", "list", "status", "build", "deps", "repos", "fetch", "write-values", "test",
     "init", "cache", "version", "show-dag", "completion", "help"}
)  # fmt: skip
EKSCTL_CHANGING = frozenset(
    {"create", "delete", "upgrade", "scale", "drain", "set", "unset", "update", "enable", "register", "deregister",
     "associate", "disassociate"}
)  # fmt: skip
EKSCTL_READ = frozenset({"get", "info", "version", "completion", "utils", "anywhere", "help"})

DRY_RUN = frozenset({"", "client", "server", "true", "True", "TRUE", "1", "t", "T"})


def _first_known(args: Sequence[Word], known: frozenset[str]) -> tuple[int, str] | None:
    """Index and name of the first argument that is a known subcommand."""
    for index, word in enumerate(args):
        if word.text in known and not word.dynamic:
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

    known: frozenset[str]  # every subcommand
    changing: frozenset[str]
    options: Options = field(default_factory=Options)  # the global options before the subcommand
    changing_second: Mapping[str, frozenset[str]] = field(default_factory=dict)  # state -> {rm, mv...}
    harmless_second: Mapping[str, frozenset[str]] = field(default_factory=dict)  # apply -> {view-last-applied}
    dry_run_allowed: bool = False  # --dry-run (client or server) makes a changing subcommand harmless
    all_options: Options | None = None  # the subcommands' options too: where a `--dry-run` is an option's value

    def changes(self, args: Sequence[Word]) -> bool:
        readings = operand_readings(args, self.options, 1)
        if readings is None:
            return True
        return any(self._changes_from(args, reading[0]) for reading in readings if reading)

    def _changes_from(self, args: Sequence[Word], start: int) -> bool:
        if args[start].dynamic:
            return True
        index, name = start, args[start].text
        if name not in self.known:  # a plugin (`helm secrets upgrade`) or a typo: the first known word after it
            found = _first_known(args[start + 1 :], self.known)
            if found is None:
                return False
            index, name = start + 1 + found[0], found[1]
        second = _next_word(args, index)
        if name in self.changing:
            if second in self.harmless_second.get(name, ()):
                return False
            dry_run = last_flag_value(args, "--dry-run", options=self.all_options or self.options)
            return not (self.dry_run_allowed and dry_run in DRY_RUN)
        return name in self.changing_second and second in (*self.changing_second[name], "?")


TERRAFORM = _Cli(TERRAFORM_SUBCOMMANDS, TERRAFORM_CHANGING, TERRAFORM_OPTIONS, changing_second=TERRAFORM_SECOND)
KUBECTL = _Cli(
    KUBECTL_SUBCOMMANDS,
    KUBECTL_CHANGING,
    KUBECTL_OPTIONS,
    changing_second=KUBECTL_SECOND,
    harmless_second={"apply": frozenset({"view-last-applied"})},
    dry_run_allowed=True,
    all_options=KUBECTL_ALL_OPTIONS,
)
OC = _Cli(
    KUBECTL_SUBCOMMANDS | OC_CHANGING | {"adm", "policy", "login", "logout", "project", "projects", "whoami"},
    OC_CHANGING,
    KUBECTL_OPTIONS,
    changing_second=OC_SECOND,
    harmless_second={"apply": frozenset({"view-last-applied"})},
    dry_run_allowed=True,
    all_options=KUBECTL_ALL_OPTIONS,
)
HELM = _Cli(HELM_SUBCOMMANDS, HELM_CHANGING, HELM_OPTIONS, dry_run_allowed=True, all_options=HELM_ALL_OPTIONS)
PULUMI = _Cli(PULUMI_SUBCOMMANDS, PULUMI_CHANGING, PULUMI_OPTIONS, changing_second=PULUMI_SECOND)


def _deploy_tool(changing: frozenset[str], second: Mapping[str, frozenset[str]] | None = None) -> _Cli:
    return _Cli(changing | DEPLOY_READ | set(second or {}), changing, DEPLOY_OPTIONS, changing_second=second or {})


# Program base name -> whether a call with these arguments (after the program name) changes infrastructure.
# `tf` and `k` are the usual shell aliases (a line may spell them; no binary of theirs is shimmed).
CHANGE_CHECKS: dict[str, Callable[[Sequence[Word]], bool]] = {
    "terraform": TERRAFORM.changes,
    "tofu": TERRAFORM.changes,
    "terragrunt": TERRAFORM.changes,
    "tf": TERRAFORM.changes,
    "kubectl": KUBECTL.changes,
    "k": KUBECTL.changes,
    "microk8s.kubectl": KUBECTL.changes,
    "oc": OC.changes,
    "helm": HELM.changes,
    "helm3": HELM.changes,
    "microk8s.helm": HELM.changes,
    "microk8s.helm3": HELM.changes,
    "pulumi": PULUMI.changes,
    "cdk": _deploy_tool(frozenset({"deploy", "destroy", "bootstrap", "import", "watch", "rollback", "gc"})).changes,
    "cdktf": _deploy_tool(frozenset({"deploy", "apply", "destroy", "watch"})).changes,
    "ros-cdk": _deploy_tool(frozenset({"deploy", "destroy"})).changes,
    "sam": _deploy_tool(
        frozenset({"deploy", "delete", "sync"}),
        {"remote": frozenset({"invoke"}), "pipeline": frozenset({"bootstrap"})},
    ).changes,
    "microk8s": _Cli(MICROK8S_CHANGING | MICROK8S_READ, MICROK8S_CHANGING).changes,
    "helmfile": _Cli(HELMFILE_CHANGING | HELMFILE_READ, HELMFILE_CHANGING, HELMFILE_OPTIONS).changes,
    "eksctl": _Cli(EKSCTL_CHANGING | EKSCTL_READ, EKSCTL_CHANGING, Options(frozenset({"-C", "--color"}))).changes,
    **CLOUD_CHECKS,
    "gsutil": gsutil_changes,
    "bq": bq_changes,
}

# Which checks a program computed at run time (`$TF apply`) is judged by: each CLI's, once.
# gsutil's and bq's verbs are every tool's (`$GIT mv a b`, `$SUDO rm -rf build`): no guess by them.
GENERIC_VERB_CLIS = frozenset({"gsutil", "bq"})
UNKNOWN_PROGRAM_CHECKS = tuple(
    dict.fromkeys(
        [
            *(check for name, check in CHANGE_CHECKS.items() if name not in {*CLOUD_CHECKS, *GENERIC_VERB_CLIS}),
            *CLOUD_GUESSES,
        ]
    )
)

# The same program under another name: a line's `microk8s.kubectl delete x` is the `kubectl delete x` a shim
# sees; `terraform1.5` and `/usr/local/bin/terraform` are terraform (rule.program_name).
CANONICAL_NAMES = {
    "tf": "terraform",
    "k": "kubectl",
    "microk8s.kubectl": "kubectl",
    "helm3": "helm",
    "microk8s.helm": "helm",
    "microk8s.helm3": "helm",
}
