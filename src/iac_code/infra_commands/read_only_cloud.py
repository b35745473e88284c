"""The read-only forms of the cloud CLIs: aws, gcloud, gsutil, bq, az and aliyun (read_only.py).

- aws SERVICE OPERATION: `describe-*`, `list-*`, `get-*`, `head-*`, `wait`, `s3 ls`, `logs tail`,
  `configure list[-profiles]`; not an operation whose name hands out a credential or a secret
  (`sts get-session-token`, `ecr get-login-password`, `eks get-token`, `secretsmanager get-secret-value`,
  `ssm get-parameter --with-decryption`, `rds generate-db-auth-token`: cli_grammar.CREDENTIAL_WORDS), nor one
  of the few that change something under a read's name (cloud_clis.AWS_CHANGING_READS), nor a name an alias
  file defines (`~/.aws/cli/alias` under the home given, the run's HOME and this process's: an alias runs
  anything, `!` aliases a shell).
  No `--endpoint-url`, `--debug`, `--ca-bundle`, `--no-verify-ssl`.
- gcloud: a `list`, `describe` or `get-iam-policy` command, found by the SDK's own command tree
  (gcloud_tree.py: `gcloud compute ssh list` is ssh to a host named "list", no read), after an optional
  release track. No `--log-http`, `--access-token-file`, `--flags-file`, `--verbosity debug`.
- gsutil: ls, cat, du, stat, version, and `get`/`list` of its settings groups (`iam get`); bq: ls, show,
  head, get-iam-policy, version, wait.
- az GROUP… VERB: `list` or `show` as the last command word, no word of the command naming a credential
  (`storage account keys list`, `keyvault secret show`, `acr credential show`); no `--debug`.
- aliyun PRODUCT Api: an API named Describe…, List…, Get…, Query… that names no credential
  (`kms GetSecretValue`, `cs DescribeClusterUserKubeconfig`); `oss ls|stat|du`; no RESTful call (a GET of
  a kubeconfig path reads a credential), no `--endpoint`, no credential of the command's own.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from iac_code.infra_commands.cli_grammar import Grammar, ReadForm, names_a_credential, parse_call
from iac_code.infra_commands.cloud_clis import AWS_CHANGING_READS
from iac_code.infra_commands.gcloud_tree import leaf_index
from iac_code.infra_commands.shell_syntax import Word


def _set(names: str) -> frozenset[str]:
    return frozenset(names.split())


AWS = Grammar(
    with_value=_set(
        "--region --profile --output --query --color --cli-read-timeout --cli-connect-timeout --cli-binary-format"
    ),
    flags=_set("--no-paginate --no-cli-pager --no-sign-request --cli-auto-prompt --no-cli-auto-prompt --version"),
    # --debug logs the signed requests (a session token among the headers)
    denied=_set(
        "--endpoint-url --debug --ca-bundle --no-verify-ssl --with-decryption --include-value --include-values"
    ),
    bundles=False,
)
AWS_READ_PREFIXES = ("describe-", "list-", "get-", "head-")
AWS_READ_CALLS = frozenset({("s3", "ls"), ("logs", "tail"), ("configure", "list"), ("configure", "list-profiles")})
AWS_ALIAS_FILE = Path(".aws", "cli", "alias")


def aws_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    call = parse_call(args, AWS)
    if call is None or len(call.operands) < 2:
        return None
    service, operation = call.operands[:2]
    homes = (home, env.get("HOME"), os.path.expanduser("~"))  # the user's, the run's, this process's
    aliases = _aws_aliases(tuple(sorted({h for h in homes if h})))
    if aliases is None or service in aliases.get("toplevel", ()) or operation in aliases.get(f"command {service}", ()):
        return None
    if (service, operation) in AWS_READ_CALLS:
        return ReadForm.PURE
    if service in ("configure", "s3") or (service, operation) in AWS_CHANGING_READS:
        return None
    if operation != "wait" and (not operation.startswith(AWS_READ_PREFIXES) or names_a_credential(operation)):
        return None
    return ReadForm.PURE


def _aws_aliases(homes: tuple[str, ...]) -> dict[str, frozenset[str]] | None:
    """The names each section of the users' alias files defines; None when one cannot be read."""
    sections: dict[str, frozenset[str]] = {}
    for home in homes:
        path = Path(home, AWS_ALIAS_FILE)
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        try:
            if not path.exists():
                continue
            parser.read_string(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, configparser.Error):
            return None
        for section in parser.sections():
            sections[section] = sections.get(section, frozenset()) | frozenset(parser[section])
    return sections


GCLOUD = Grammar(
    with_value=_set(
        "--account --billing-project --configuration --format --project --verbosity --impersonate-service-account "
        "--region --zone --filter --limit --page-size --sort-by --flatten --location"
    ),
    flags=_set("--quiet -q --uri --user-output-enabled --no-user-output-enabled -h --help"),
    denied=_set("--log-http --access-token-file --flags-file --trace-token"),
    bundles=False,
)
GCLOUD_READS = frozenset({"list", "describe", "get-iam-policy"})


def gcloud_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    call = parse_call(args, GCLOUD)
    if call is None or call.value("--verbosity") == "debug":
        return None
    words = [Word(operand) for operand in call.operands]
    index = leaf_index(words)  # by gcloud's own tree (gcloud_tree.py): `compute ssh list` is no list
    if index is None or index >= len(words) or words[index].text not in GCLOUD_READS:
        return None
    return ReadForm.PURE


GSUTIL = Grammar(with_value=_set("-u -o -h -i"), flags=_set("-m -q -d -D -DD"), denied=_set("-o -h -i -d -D -DD"))
GSUTIL_READS = _set("ls cat du stat version")
GSUTIL_SETTINGS = _set(
    "acl autoclass bucketpolicyonly cors defacl defstorageclass hmac iam label lifecycle logging notification pap "
    "requesterpays retention rpo ubla versioning web"
)


def gsutil_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    call = parse_call(args, GSUTIL)
    if call is None or not call.operands:
        return None
    verb, rest = call.operands[0], call.operands[1:]
    if verb in GSUTIL_READS or (verb in GSUTIL_SETTINGS and rest[:1] in (["get"], ["list"])):
        return ReadForm.PURE
    return None


BQ = Grammar(
    with_value=_set("--project_id --dataset_id --location --format --job_id --max_rows_per_request"),
    flags=_set("--quiet -q --headless --nouse_gce_service_account --synchronous_mode --nosynchronous_mode"),
    denied=_set(
        "--api --apilog --bigqueryrc --flagfile --ca_certificates_file --discovery_file --credential_file "
        "--httplib2_debuglevel --trace --proxy_address --proxy_port --proxy_username --proxy_password"
    ),
    bundles=False,
)
BQ_READS = _set("ls show head get-iam-policy version wait")


def bq_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    call = parse_call(args, BQ)
    return ReadForm.PURE if call is not None and call.operands[:1] and call.operands[0] in BQ_READS else None


AZ = Grammar(
    with_value=_set("--subscription --output -o --query"),
    flags=_set("--only-show-errors --verbose -h --help"),
    denied=_set("--debug"),
    bundles=False,
)
AZ_READ_VERBS = _set("list show")


def az_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    call = parse_call(args, AZ)
    if call is None:
        return None
    command = _leading_operands(args, call.first_operand)  # az's command words come before its arguments
    if len(command) < 2 or command[-1] not in AZ_READ_VERBS or names_a_credential(*command):
        return None
    return ReadForm.PURE


def _leading_operands(args: Sequence[str], start: int) -> list[str]:
    """The words from the first operand to the next option (`az vm list -g rg`: vm, list)."""
    if start < 0:
        return []
    command: list[str] = []
    for word in args[start:]:
        if word.startswith("-"):
            break
        command.append(word)
    return command


ALIYUN = Grammar(
    with_value=_set("--profile -p --region --output --read-timeout --connect-timeout --retry-count --language"),
    flags=_set("--quiet --secure --force --dryrun --help"),
    denied=_set(
        "--endpoint --access-key-id --access-key-secret --sts-token --ram-role-name --ram-role-arn "
        "--role-session-name --config-path --header --insecure --mode"
    ),
    bundles=False,
)
ALIYUN_READ_PREFIXES = ("describe", "list", "get", "query")
ALIYUN_OSS_READS = _set("ls stat du")


def aliyun_form(args: Sequence[str], env: Mapping[str, str], home: str | None = None) -> ReadForm | None:
    call = parse_call(args, ALIYUN)
    if call is None or len(call.operands) < 2:
        return None
    product, api = call.operands[0].lower(), call.operands[1]
    if product == "oss":
        return ReadForm.PURE if api in ALIYUN_OSS_READS else None
    if api.isupper() or names_a_credential(api):  # `aliyun cs GET /k8s/<id>/user_config`: a RESTful call
        return None
    return ReadForm.PURE if api.replace("-", "").lower().startswith(ALIYUN_READ_PREFIXES) else None
