"""The cloud CLIs: aws, gcloud, az and aliyun, whose calls on every service can change infrastructure.

- aws SERVICE OPERATION: reads are `describe-*`, `list-*`, `get-*`, `batch-get-*`, `search-*`, `lookup-*`,
  `head-*`, `validate-*`, `estimate-*`, `detect-*`, `simulate-*`, `filter-*`, `generate-*`, `download-*`,
  `assume-role*`, `help`, `wait`, `scan`, `query`, `tail`, encrypt/decrypt/sign/verify, and a few that only
  write local files (`eks update-kubeconfig`, `codeartifact login`, `cloudformation package`); every other
  operation changes (create-*, delete-*, put-*, update-*, terminate-*, run-instances, start-*, stop-*,
  modify-*, attach-*, invoke, tag-*, deploy…: the safe side for one not listed). `configure`, `sso` and
  `history` touch local files only. `aws s3`: rm, mv, mb, rb, website change; cp and sync change when they
  write to `s3://`; `--dryrun` (s3) and `--dry-run` (ec2…; the last of it and `--no-dry-run`) do not.
- gcloud … VERB and az … VERB: the first word that is a known verb decides: create, delete, update, deploy,
  set, add, remove, start, stop, restart… change; describe/show, list, get-*, what-if… read. A call with no
  verb known here reads (`gcloud compute ssh`); the local groups (gcloud config/auth/components, az
  login/account/config/extension…) read. `gcloud storage cp|rsync` change when they write to `gs://`;
  `az rest` changes unless its method is GET.
- aliyun PRODUCT API: any API that does not start with a read prefix (Describe, List, Get, Query, Check,
  Search, Preview, Validate, Detect, Generate, Verify; kebab-case alike) changes, on every product; a
  RESTful call reads only with GET; `aliyun oss` reads with ls/stat/cat/du…, cp and sync change when they
  write to `oss://`, the rest change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from iac_code.infra_commands.gcloud_tree import leaf_index, leaf_reads
from iac_code.infra_commands.options import Options, is_option, last_flag_value, operand_readings
from iac_code.infra_commands.shell_syntax import Word

AWS_OPTIONS = Options(
    with_value=frozenset(
        {"--region", "--profile", "--output", "--endpoint-url", "--query", "--color", "--ca-bundle",
         "--cli-read-timeout", "--cli-connect-timeout", "--cli-binary-format"}
    ),
    flags=frozenset(
        {"--debug", "--no-verify-ssl", "--no-paginate", "--no-sign-request", "--no-cli-pager", "--cli-auto-prompt",
         "--no-cli-auto-prompt", "--version", "--dry-run", "--no-dry-run"}
    ),
)  # fmt: skip
AWS_READ_PREFIXES = (
    "describe-", "list-", "get-", "batch-get-", "search-", "lookup-", "head-", "validate-", "estimate-", "detect-",
    "simulate-", "filter-", "generate-", "download-", "assume-role",
)  # fmt: skip
# Operations named like reads that create or change something: the read-prefixed operations of botocore
# 1.43.11's service models reviewed (those of a REST service sent with POST/PUT/DELETE, and every generate-,
# download-, detect-, validate-…): a client certificate, a backend's models, a data set written to S3, ids.
AWS_CHANGING_READS = frozenset(
    {("apigateway", "generate-client-certificate"), ("amplifybackend", "generate-backend-api-models"),
     ("marketplacecommerceanalytics", "generate-data-set"), ("lexv2-models", "generate-bot-element"),
     ("entityresolution", "generate-match-id"), ("cognito-identity", "get-id")}
)  # fmt: skip
AWS_READ_OPERATIONS = frozenset(
    {"help", "wait", "scan", "query", "tail", "encrypt", "decrypt", "re-encrypt", "sign", "verify", "ls",
     "presign", "update-kubeconfig", "login", "get-login-password"}
)  # fmt: skip
# What a changing operation looks like, for when the program itself is computed at run time (`$X ec2
# terminate-instances`): "any operation not a read" would make `$PYTHON -m pytest tests` an aws call.
AWS_CHANGING_PREFIXES = (
    "create-", "delete-", "put-", "update-", "terminate-", "run-", "start-", "stop-", "reboot-", "modify-",
    "attach-", "detach-", "associate-", "disassociate-", "register-", "deregister-", "authorize-", "revoke-",
    "invoke", "tag-", "untag-", "import-", "restore-", "reset-", "replace-", "set-", "enable-", "disable-", "add-",
    "remove-", "cancel-", "execute-", "deploy", "purge-", "change-", "copy-", "send-", "publish", "upload-",
    "release-", "allocate-", "accept-", "reject-", "rotate-", "apply-", "promote-", "failover-",
)  # fmt: skip
ALIYUN_CHANGING_PREFIXES = (
    "create", "delete", "update", "modify", "run", "start", "stop", "reboot", "release", "allocate", "attach",
    "detach", "associate", "unassociate", "add", "remove", "set", "enable", "disable", "tag", "untag", "install",
    "uninstall", "cancel", "execute", "deploy", "import", "restore", "reset", "replace", "renew", "join", "leave",
    "apply", "upgrade", "purge", "publish", "invoke",
)  # fmt: skip
AWS_LOCAL_SERVICES = frozenset({"configure", "sso", "history", "help"})
AWS_S3_CHANGING = frozenset({"rm", "mv", "mb", "rb", "website"})
S3_TRANSFER_OPTIONS = frozenset(
    {"--exclude", "--include", "--acl", "--sse", "--sse-c", "--sse-c-key", "--sse-kms-key-id", "--sse-c-copy-source",
     "--sse-c-copy-source-key", "--storage-class", "--grants", "--website-redirect", "--content-type",
     "--cache-control", "--content-disposition", "--content-encoding", "--content-language", "--expires",
     "--metadata", "--metadata-directive", "--expected-size", "--page-size", "--source-region", "--request-payer",
     "--checksum-algorithm", "--copy-props", *AWS_OPTIONS.with_value}
)  # fmt: skip

GCLOUD_OPTIONS = Options(
    with_value=frozenset(
        {"--account", "--billing-project", "--configuration", "--flags-file", "--flatten", "--format",
         "--impersonate-service-account", "--project", "--verbosity", "--trace-token", "--access-token-file",
         "--region", "--zone", "--filter", "--limit", "--page-size", "--sort-by"}
    ),
    flags=frozenset({"--quiet", "-q", "--log-http", "--user-output-enabled", "--help", "-h", "--uri"}),
)  # fmt: skip
GCLOUD_LOCAL = frozenset(
    {"config", "auth", "components", "info", "init", "help", "version", "topic", "cheat-sheet", "feedback",
     "survey", "emulators", "docker", "interactive"}
)  # fmt: skip
CLOUD_CHANGING_VERBS = frozenset(
    {"create", "delete", "update", "deploy", "patch", "apply", "replace", "resize", "start", "stop", "reset",
     "restart", "suspend", "resume", "import", "restore", "undelete", "enable", "disable", "submit", "execute",
     "call", "publish", "rollback", "cancel", "promote", "failover", "upgrade", "move", "rename", "clone",
     "reboot", "set", "add", "remove", "rm", "mv", "invoke", "purge", "recover", "scale", "assign", "attach",
     "detach", "swap", "sync", "upload", "upload-batch", "delete-batch", "reimage", "redeploy", "deallocate",
     "generalize", "capture", "rotate", "renew", "regenerate", "grant", "revoke", "approve", "reject",
     "copy", "convert", "reconcile", "abandon-instances", "recreate-instances", "up", "config-zip",
     # reviewed against gcloud's command tree (gcloud_tree.py) and az's verbs
     "destroy", "link", "unlink", "open-port", "invoke-action", "tag", "untag", "reapply", "simulate-eviction",
     "install-patches", "admin-consent", "auto-shutdown", "abandon", "ack", "seek", "pause", "switchover",
     "perform-maintenance", "reschedule-maintenance", "deprecate", "register", "unregister", "enroll", "unenroll",
     "lock", "unlock", "snapshot", "backup", "trigger-backup", "undeploy", "uninstall", "unset", "terminate", "kill",
     "drain", "authorize", "deauthorize", "allow", "deny", "provision", "relocate", "unmanage", "instantiate",
     "bulk-delete", "promote-replica", "reencrypt", "repair", "revert", "replicate", "write", "train"}
)  # fmt: skip
CLOUD_CHANGING_PREFIXES = (
    "set-", "add-", "remove-", "create-", "delete-", "update-", "attach-", "detach-", "enable-", "disable-", "reset-",
    "rotate-", "start-", "stop-", "resume-", "suspend-", "mark-", "modify-", "deploy-", "undeploy-", "upsert-",
    "accept-", "reject-", "renew-", "restore-", "retry-", "simulate-maintenance",
)  # fmt: skip
CLOUD_READ_VERBS = frozenset(
    {"describe", "show", "list", "ls", "cat", "read", "tail", "browse", "explain", "what-if", "wait", "exists",
     "check", "validate", "query", "download", "export", "diff", "search", "help"}
)  # fmt: skip
CLOUD_READ_PREFIXES = ("get-", "list-", "describe-", "show-", "print-", "search-", "check-", "validate-")
VERB_SEARCH_DEPTH = 8  # the verb is among the first operands (`az network vnet subnet update`)

AZ_OPTIONS = Options(
    with_value=frozenset({"--subscription", "--output", "-o", "--query", "--resource-group", "-g", "--name", "-n"}),
    flags=frozenset({"--debug", "--verbose", "--only-show-errors", "--help", "-h", "--yes", "-y"}),
)
AZ_LOCAL = frozenset(
    {"login", "logout", "account", "config", "configure", "extension", "cloud", "version", "upgrade",
     "interactive", "find", "feedback", "bicep", "self-test", "init", "survey", "cache"}
)  # fmt: skip

ALIYUN_OPTIONS = Options(
    with_value=frozenset(
        {"--profile", "-p", "--region", "--mode", "--access-key-id", "--access-key-secret", "--sts-token",
         "--ram-role-name", "--ram-role-arn", "--role-session-name", "--config-path", "--endpoint",
         "--read-timeout", "--connect-timeout", "--retry-count", "--language", "--output", "--header"}
    ),
    flags=frozenset({"--force", "--insecure", "--secure", "--dryrun", "--quiet", "--help"}),
)  # fmt: skip
ALIYUN_READ_PREFIXES = (
    "describe", "list", "get", "query", "check", "search", "preview", "validate", "detect", "generate", "verify",
)  # fmt: skip
ALIYUN_LOCAL = frozenset({"configure", "version", "help", "auto-completion", "plugin"})
ALIYUN_OSS_READ = frozenset({"ls", "stat", "cat", "du", "sign", "hash", "probe", "read-symlink", "help", "config"})
HTTP_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class _Call:
    """One reading of a call: its first operands (service and operation, or groups and verb) as words."""

    def __init__(self, args: Sequence[Word], reading: tuple[int, ...]) -> None:
        self.args = args
        self.indices = reading
        self.words = [args[index] for index in reading]
        self.texts = [word.text for word in self.words]

    def after(self, position: int) -> Sequence[Word]:
        """The arguments after the operand at `position`."""
        return self.args[self.indices[position] + 1 :]


def operand_calls(args: Sequence[Word], options: Options, count: int) -> list[_Call] | None:
    readings = operand_readings(args, options, count)
    return None if readings is None else [_Call(args, reading) for reading in readings]


def writes_to(args: Sequence[Word], scheme: str, with_value: frozenset[str]) -> bool:
    """Whether a copy's operands after the first (its source) name a `scheme` URL, or one computed at run time."""
    operands: list[Word] = []
    skip = False
    for word in args:
        if skip:
            skip = False
        elif is_option(word):
            skip = word.text in with_value
        else:
            operands.append(word)
    return any(w.dynamic or w.text.lower().startswith(scheme) for w in operands[1:])


def _aws(args: Sequence[Word]) -> bool:
    calls = operand_calls(args, AWS_OPTIONS, 2)
    if calls is None:
        return True
    if last_flag_value(args, "--dry-run", negation="--no-dry-run") == "":
        return False  # ec2's dry run (the services without one reject the option: nothing runs)
    return any(_aws_call_changes(call) for call in calls)


def _aws_call_changes(call: _Call) -> bool:
    if any(word.dynamic for word in call.words):
        return True
    if len(call.words) < 2 or call.texts[0] in AWS_LOCAL_SERVICES:
        return False
    service, operation = call.texts
    if service == "s3":
        if "--dryrun" in (word.text for word in call.args):
            return False
        if operation in ("cp", "sync"):
            return writes_to(call.after(1), "s3://", S3_TRANSFER_OPTIONS)
        return operation in AWS_S3_CHANGING
    if service == "cloudformation" and operation == "package":
        return False
    if (service, operation) in AWS_CHANGING_READS:
        return True
    return not (operation in AWS_READ_OPERATIONS or operation.startswith(AWS_READ_PREFIXES))


class _VerbCli:
    """gcloud's and az's shape: groups, then a verb, then its arguments; the first known verb decides."""

    def __init__(
        self,
        options: Options,
        local: frozenset[str],
        groups_named_as_verbs: frozenset[str] = frozenset(),
        special: Callable[[_Call], bool | None] = lambda call: None,
    ) -> None:
        self.options = options
        self.local = local  # groups that only touch local files (`gcloud config set`)
        self.groups_named_as_verbs = groups_named_as_verbs  # `gcloud deploy releases list`
        self.special = special

    def changes(self, args: Sequence[Word]) -> bool:
        calls = operand_calls(args, self.options, VERB_SEARCH_DEPTH)
        return calls is None or any(self._call_changes(call) for call in calls)

    def with_special(self, special: Callable[[_Call], bool | None]) -> _VerbCli:
        """The same CLI, `special` asked first."""
        first = self.special
        return _VerbCli(
            self.options, self.local, self.groups_named_as_verbs, lambda call: _first_decided(call, first, special)
        )

    def _call_changes(self, call: _Call) -> bool:
        if call.words and not call.words[0].dynamic and call.texts[0] in self.local:
            return False
        decided = self.special(call)
        if decided is not None:
            return decided
        for position, word in enumerate(call.words):
            if word.dynamic:
                return True
            verb = word.text
            if position == 0 and verb in self.groups_named_as_verbs and len(call.words) > 1:
                continue
            if verb in CLOUD_READ_VERBS or verb.startswith(CLOUD_READ_PREFIXES):
                return False
            if verb in CLOUD_CHANGING_VERBS or verb.startswith(CLOUD_CHANGING_PREFIXES):
                return True
        return False


def _first_decided(call: _Call, *specials: Callable[[_Call], bool | None]) -> bool | None:
    return next((decided for special in specials if (decided := special(call)) is not None), None)


def _gcloud_leaf(call: _Call) -> bool | None:
    """By gcloud's command tree: its leaf reads or changes; None when the first word is no group."""
    index = leaf_index(call.words)
    if index is None:
        return None
    if index >= len(call.words):
        return False  # a group alone: its help
    leaf = call.words[index]
    return leaf.dynamic or not leaf_reads(leaf.text)


def _gcloud_storage_copy(call: _Call) -> bool | None:
    """`gcloud storage cp|rsync` change when they write to `gs://` (a download reads)."""
    for position, text in enumerate(call.texts[:-1]):
        if text == "storage" and call.texts[position + 1] in ("cp", "rsync"):
            return writes_to(call.after(position + 1), "gs://", GCLOUD_OPTIONS.with_value)
    return None


def _az_rest(call: _Call) -> bool | None:
    """`az rest` reads with GET, its default without a body; POST (the default with one), PUT… change."""
    if call.texts[:1] != ["rest"]:
        return None
    method: Word | None = None
    for index, word in enumerate(call.args):
        if word.text in ("--method", "-m") and index + 1 < len(call.args):
            method = call.args[index + 1]
        elif word.text.startswith(("--method=", "-m=")):
            method = Word(word.text.split("=", 1)[1], word.dynamic)
    if method is None:
        return any(word.text in ("--body", "-b") or word.text.startswith("--body=") for word in call.args)
    return method.dynamic or method.text.upper() not in HTTP_READ_METHODS


def _aliyun(args: Sequence[Word]) -> bool:
    calls = operand_calls(args, ALIYUN_OPTIONS, 2)
    return calls is None or any(_aliyun_call_changes(call) for call in calls)


def _aliyun_call_changes(call: _Call) -> bool:
    if any(word.dynamic for word in call.words):
        return True
    if len(call.words) < 2 or call.texts[0].lower() in ALIYUN_LOCAL:
        return False
    product, operation = call.texts[0].lower(), call.texts[1]
    if product == "oss":
        if operation in ("cp", "sync"):
            return writes_to(call.after(1), "oss://", ALIYUN_OPTIONS.with_value)
        return operation not in ALIYUN_OSS_READ
    if operation.isupper():  # a RESTful API: `aliyun cs GET /clusters`
        return operation not in HTTP_READ_METHODS
    return not operation.replace("-", "").lower().startswith(ALIYUN_READ_PREFIXES)


def _looks_like_a_cloud_change(args: Sequence[Word]) -> bool:
    """For a program computed at run time: whether its second operand is an aws or aliyun changing verb."""
    for reading in operand_readings(args, AWS_OPTIONS, 2) or ():
        operation = args[reading[-1]].text if len(reading) == 2 else ""
        if operation.startswith(AWS_CHANGING_PREFIXES):
            return True
        if operation.replace("-", "").lower().startswith(ALIYUN_CHANGING_PREFIXES) and operation[:1].isupper():
            return True
    return False


# by verbs alone: for a program computed at run time (the tree would take `$NPM run test` for Cloud Run)
GCLOUD_BY_VERBS = _VerbCli(GCLOUD_OPTIONS, GCLOUD_LOCAL, frozenset({"deploy", "run"}), _gcloud_storage_copy)
CLOUD_CHECKS: dict[str, Callable[[Sequence[Word]], bool]] = {
    "aws": _aws,
    "gcloud": GCLOUD_BY_VERBS.with_special(_gcloud_leaf).changes,
    "az": _VerbCli(AZ_OPTIONS, AZ_LOCAL, special=_az_rest).changes,
    "aliyun": _aliyun,
}
# The checks for a program computed at run time, which may be any of them.
CLOUD_GUESSES: tuple[Callable[[Sequence[Word]], bool], ...] = (
    GCLOUD_BY_VERBS.changes,
    CLOUD_CHECKS["az"],
    _looks_like_a_cloud_change,
)
