"""Whether a shell command line changes real infrastructure (and so must be asked every time).

The line is parsed as bash would (iac_code.iac.shell_syntax), then every simple command in it is looked
through: wrappers are unwrapped (`sudo`, `env VAR=x`, `nohup`, `time`, `timeout`, `nice`, `xargs`,
`watch`, `ssh host ...`, `find -exec`...), shell strings are parsed in turn (`sh -c`, `bash -lc`,
`eval`, a here-document or an `echo ... |` fed to a shell), and the program is recognised by its base
name (`/usr/local/bin/terraform` is terraform). Changing:

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
describe, logs; helm template, lint, diff. A line that cannot be parsed counts as changing, and so does a
program or subcommand computed at run time (`$TF apply`, `terraform $ACTION`) that could be one of these.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from iac_code.iac.shell_syntax import ShellSyntaxError, SimpleCommand, Word, parse_commands

MAX_DEPTH = 8  # shells inside shells: deeper than this is taken as changing

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_VERSIONED = re.compile(r"^(?P<name>[a-z-]+?)(?:[-_]?v?\d+(?:\.\d+)*)?$")
RESERVED_PREFIXES = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "coproc"})
RESERVED_SKIP = frozenset({"for", "select", "case", "[[", "[", "test", "fi", "done", "}", "esac", "]]"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
SHELL_OPTIONS_WITH_VALUE = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})

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


def is_infrastructure_change(command: str) -> bool:
    """Whether running `command` (a bash command line) may change real infrastructure."""
    try:
        commands = parse_commands(command)
    except (ShellSyntaxError, RecursionError):
        return True
    if any(_changes(c, 0) for c in commands):
        return True
    # `CMD="terraform apply"; $CMD`: a program taken from a variable may be any command the line assigns.
    if any(words and words[0].dynamic for words in (_strip_prefixes(c.words) for c in commands)):
        return any(_line_changes(value, 1) for value in _assigned_values(commands))
    return False


def _assigned_values(commands: list[SimpleCommand]) -> list[str]:
    values = []
    for command in commands:
        for word in command.words:
            match = _ASSIGNMENT.match(word.text)
            if match:
                values.append(word.text[match.end() :])
    return values


def _changes(command: SimpleCommand, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return True
    return _words_change(_strip_prefixes(command.words), command, depth)


def _line_changes(line: str, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return True
    try:
        commands = parse_commands(line)
    except (ShellSyntaxError, RecursionError):
        return True
    return any(_changes(c, depth) for c in commands)


def _strip_prefixes(words: list[Word]) -> list[Word]:
    """Drop leading reserved words (`if`, `do`, `!`...) and variable assignments; nothing for `for x in`."""
    index = 0
    while index < len(words):
        text = words[index].text
        if text in RESERVED_SKIP:
            return []
        if text == "function":  # function name { body: the body is read as commands
            index += 2
            continue
        if text in RESERVED_PREFIXES or (not words[index].dynamic and _ASSIGNMENT.match(text)):
            index += 1
            if text == "time":
                while index < len(words) and words[index].text.startswith("-"):
                    index += 1
            continue
        break
    return words[index:]


def _program(word: Word) -> str:
    name = word.text.rsplit("/", 1)[-1]
    match = _VERSIONED.match(name)
    return match.group("name") if match else name


def _words_change(words: list[Word], command: SimpleCommand, depth: int) -> bool:
    if not words:
        return False
    args = words[1:]
    if words[0].dynamic:
        # Which program runs is decided at run time: changing if these arguments would be for any of them.
        return any(check(args) for check in FAMILIES.values())
    program = _program(words[0])
    if program in FAMILIES:
        return FAMILIES[program](args)
    if program in WRAPPERS:
        inner = WRAPPERS[program](args)
        return inner is not None and _words_change(inner, command, depth + 1)
    if program in SHELLS:
        return _shell_changes(program, args, command, depth)
    if program == "eval":
        return _line_changes(" ".join(w.text for w in args), depth + 1)
    if program in ("su", "runuser"):
        script = _option_value(args, ("-c", "--command"))
        return script is not None and _line_changes(script, depth + 1)
    if program == "ssh":
        return _line_changes(" ".join(w.text for w in _after_host(args)), depth + 1)
    if program == "watch":
        return _line_changes(" ".join(w.text for w in _skip_options(args, {"-n", "--interval", "-d"})), depth + 1)
    if program == "find":
        return any(_words_change(part, command, depth + 1) for part in _find_exec(args))
    return False


# --- the infrastructure tools ---------------------------------------------------------------------------


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


FAMILIES: dict[str, Callable[[Sequence[Word]], bool]] = {
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


# --- wrappers: programs that run the rest of their arguments as a command ----------------------------------


def _skip_options(args: Sequence[Word], with_value: set[str] | frozenset[str]) -> list[Word]:
    """The arguments after the wrapper's own options (`--` ends them; `-x VALUE` for options in `with_value`)."""
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--":
            return list(args[index + 1 :])
        if not text.startswith("-") or text == "-" or args[index].dynamic:
            break
        # `-u admin`, and `-iu admin` (short options bundled, the last one taking the value)
        takes_value = text in with_value or (not text.startswith("--") and f"-{text[-1]}" in with_value)
        index += 2 if takes_value else 1
    return list(args[index:])


def _env(args: Sequence[Word]) -> list[Word] | None:
    rest = _skip_options(args, {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})
    split = _option_value(args, ("-S", "--split-string"))
    if split is not None:  # env -S "terraform apply": the string is split into words
        rest = [Word(part) for part in split.split()] + rest
    while rest and not rest[0].dynamic and _ASSIGNMENT.match(rest[0].text):
        rest = rest[1:]
    return rest


def _command_builtin(args: Sequence[Word]) -> list[Word] | None:
    if any(w.text in ("-v", "-V") for w in args[:2]):
        return None  # `command -v terraform` only looks the program up
    return _skip_options(args, set())


def _timeout(args: Sequence[Word]) -> list[Word]:
    rest = _skip_options(args, {"-s", "--signal", "-k", "--kill-after"})
    return rest[1:]  # the duration


def _xargs(args: Sequence[Word]) -> list[Word] | None:
    with_value = {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args",
                  "--max-procs", "--max-chars", "--max-lines", "--process-slot-var"}  # fmt: skip
    rest = _skip_options(args, with_value)
    return rest or None  # no command: xargs runs echo


def _flock(args: Sequence[Word]) -> list[Word] | None:
    script = _option_value(args, ("-c", "--command"))
    if script is not None:
        return [Word("sh"), Word("-c"), Word(script)]
    rest = _skip_options(args, {"-w", "--timeout", "-E", "--conflict-exit-code"})
    return rest[1:]  # the lock file


WRAPPERS: dict[str, Callable[[Sequence[Word]], list[Word] | None]] = {
    "sudo": lambda a: _skip_options(
        a, {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"}
    ),
    "doas": lambda a: _skip_options(a, {"-u", "-C"}),
    "env": _env,
    "nohup": lambda a: _skip_options(a, set()),
    "setsid": lambda a: _skip_options(a, set()),
    "exec": lambda a: _skip_options(a, {"-a"}),
    "builtin": lambda a: list(a),
    "command": _command_builtin,
    "time": lambda a: _skip_options(a, {"-o", "--output", "-f", "--format"}),
    "timeout": _timeout,
    "nice": lambda a: _skip_options(a, {"-n", "--adjustment"}),
    "ionice": lambda a: _skip_options(a, {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "stdbuf": lambda a: _skip_options(a, {"-i", "-o", "-e"}),
    "chronic": lambda a: _skip_options(a, set()),
    "unbuffer": lambda a: _skip_options(a, set()),
    "xargs": _xargs,
    "flock": _flock,
}


def _shell_changes(program: str, args: Sequence[Word], command: SimpleCommand, depth: int) -> bool:
    if program == "busybox":
        if not args or _program(args[0]) not in SHELLS - {"busybox"}:
            return False
        program, args = _program(args[0]), args[1:]
    run_string = False
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--" or not text.startswith(("-", "+")) or text in ("-", "+"):
            index += text == "--"
            break
        if text in SHELL_OPTIONS_WITH_VALUE:
            index += 2
            continue
        if not text.startswith("--") and "c" in text[1:]:
            run_string = True
        index += 1
    operands = args[index:]
    if run_string:
        return bool(operands) and (operands[0].dynamic or _line_changes(operands[0].text, depth + 1))
    if operands:
        return False  # a script file: what it does cannot be seen from here
    script = _stdin_script(command)
    return script is not None and _line_changes(script, depth + 1)


def _stdin_script(command: SimpleCommand) -> str | None:
    """What a shell reading its stdin gets: a here-document, or the text an `echo`/`printf`/`cat` pipes in."""
    if command.stdin_text is not None:
        return command.stdin_text
    source = command.piped_from
    if source is None or not source.words:
        return None
    name = _program(source.words[0])
    texts = [w.text for w in source.words[1:]]
    if name == "echo":
        return " ".join(t for t in texts if t not in ("-e", "-n", "-E"))
    if name == "printf":
        return " ".join(texts)
    if name == "cat" and not texts:
        return source.stdin_text
    return None


def _option_value(args: Sequence[Word], names: tuple[str, ...]) -> str | None:
    for index, word in enumerate(args):
        for name in names:
            if word.text == name and index + 1 < len(args):
                return args[index + 1].text
            if name.startswith("--") and word.text.startswith(name + "="):
                return word.text[len(name) + 1 :]
    return None


def _after_host(args: Sequence[Word]) -> list[Word]:
    """The remote command of `ssh [options] host command...`."""
    with_value = set("bcDEeFIiJLlmOoPpQRSWw")
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        text = args[index].text
        index += 2 if len(text) == 2 and text[1] in with_value else 1
    return list(args[index + 1 :])


def _find_exec(args: Sequence[Word]) -> list[list[Word]]:
    """The commands of `find ... -exec CMD ... ;` (and -execdir, -ok, -okdir)."""
    commands: list[list[Word]] = []
    index = 0
    while index < len(args):
        if args[index].text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            commands.append(list(args[index + 1 : end]))
            index = end
        index += 1
    return commands
