"""gsutil and bq, the Google Cloud SDK's storage and BigQuery CLIs (their command lists: the SDK's
data/cli/gsutil.json and bq.json).

- gsutil: mv, rm, rb, mb, setmeta, compose, rewrite, perfdiag (it writes test objects) change; cp and
  rsync change when they write to `gs://`; a settings group (acl, iam, cors, lifecycle, retention, hmac,
  notification, kms…) changes unless its verb reads (get, list, serviceaccount); ls, cat, du, stat, hash,
  signurl, version, config read.
- bq: mk, rm, load, insert, cp, extract (it writes to Cloud Storage), partition, update, truncate, cancel,
  undelete, shell, the IAM setters, and query — a query may be DML or a script, which the text alone does
  not tell reliably, so it changes unless `--dry_run`; ls, show, head, get-iam-policy, wait, version read.
"""

from __future__ import annotations

from collections.abc import Sequence

from iac_code.infra_commands.cloud_clis import operand_calls, writes_to
from iac_code.infra_commands.options import Options
from iac_code.infra_commands.shell_syntax import Word

GSUTIL_OPTIONS = Options(
    with_value=frozenset({"-u", "-o", "-h", "-i"}), flags=frozenset({"-m", "-q", "-d", "-D", "-DD"})
)
GSUTIL_CHANGING = frozenset({"mv", "rm", "rb", "mb", "setmeta", "compose", "rewrite", "perfdiag"})
GSUTIL_SETTINGS = frozenset(
    {"acl", "autoclass", "bucketpolicyonly", "cors", "defacl", "defstorageclass", "hmac", "iam", "kms", "label",
     "lifecycle", "logging", "notification", "pap", "requesterpays", "retention", "rpo", "ubla", "versioning",
     "web"}
)  # fmt: skip
GSUTIL_SETTINGS_READS = frozenset({"get", "list", "serviceaccount"})
GSUTIL_COPY_OPTIONS = frozenset({"-h", "-z", "-j", "-L", "-s", "-x", "-a", "-c", "-o", "-u", "-i"})

BQ_OPTIONS = Options(
    with_value=frozenset(
        {"--project_id", "--dataset_id", "--location", "--format", "--job_id", "--api", "--api_version",
         "--apilog", "--bigqueryrc", "--ca_certificates_file", "--max_rows_per_request", "--job_property",
         "--proxy_address", "--proxy_port", "--proxy_username", "--proxy_password", "--httplib2_debuglevel",
         "--trace", "--credential_file", "--service_account", "--discovery_file", "--flagfile", "--universe_domain"}
    ),
    flags=frozenset(
        {"-q", "--quiet", "--headless", "--synchronous_mode", "--nosynchronous_mode", "--use_gce_service_account"}
    ),
)  # fmt: skip
BQ_CHANGING = frozenset(
    {"mk", "rm", "load", "insert", "cp", "extract", "partition", "update", "truncate", "cancel", "undelete", "shell",
     "query", "set-iam-policy", "add-iam-policy-binding", "remove-iam-policy-binding"}
)  # fmt: skip


def gsutil_changes(args: Sequence[Word]) -> bool:
    readings = operand_calls(args, GSUTIL_OPTIONS, 2)
    return readings is None or any(_gsutil_call_changes(call.words, call.after(0)) for call in readings if call.words)


def _gsutil_call_changes(operands: Sequence[Word], after_verb: Sequence[Word]) -> bool:
    verb = operands[0]
    if verb.dynamic:
        return True
    if verb.text in ("cp", "rsync"):
        return writes_to(after_verb, "gs://", GSUTIL_COPY_OPTIONS)
    if verb.text in GSUTIL_SETTINGS:
        second = operands[1] if len(operands) > 1 else None
        return second is not None and (second.dynamic or second.text not in GSUTIL_SETTINGS_READS)
    return verb.text in GSUTIL_CHANGING


def bq_changes(args: Sequence[Word]) -> bool:
    readings = operand_calls(args, BQ_OPTIONS, 1)
    if readings is None:
        return True
    for call in readings:
        if not call.words:
            continue
        verb = call.words[0]
        dry_run = any(word.text in ("--dry_run", "--dry_run=true") for word in call.after(0))
        if verb.dynamic or (verb.text in BQ_CHANGING and not (verb.text == "query" and dry_run)):
            return True
    return False
