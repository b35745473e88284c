"""gcloud's own command tree: its groups (data/gcloud_groups.txt), so that a command's leaf is known by
position, not guessed by its name (`gcloud sql export csv` exports to a bucket; `gcloud sql instances list`
lists; `gcloud compute ssh list` is ssh to a host named "list").

The groups file is generated from the Google Cloud SDK's static completion tree (528.0.0,
`data/cli/gcloud_completions.py`, every release track, the track word removed):

    tree = runpy.run_path(".../gcloud_completions.py")["STATIC_COMPLETION_CLI_TREE"]
    # every path whose node has "commands" of its own, alpha/beta/preview dropped from the front

Of the leaves the SDK has (837 names), these read: list, describe, the get-/list-/describe-/show-/search-…
families, logs and predictions, kms's encrypt/decrypt/sign, the local printers; any other leaf changes
(reviewed against the tree: secrets versions destroy, billing projects unlink, pubsub subscriptions ack
and seek, compute ssh/scp (keys into project metadata, commands on the VM), deploy releases abandon,
org-policies allow/deny, sql export csv…). A leaf a newer SDK added under a known group changes until
this table knows it; a command whose first word is no group is left to the verb table (cloud_clis.py).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import resources

from iac_code.infra_commands.shell_syntax import Word

TRACKS = frozenset({"alpha", "beta", "preview"})
READ_LEAVES = frozenset(
    {"list", "describe", "get-iam-policy", "wait", "tail", "read", "log", "browse", "open-console", "diff",
     "status", "version", "search", "lookup", "query", "ls", "cat", "du", "hash", "encrypt", "decrypt",
     "asymmetric-decrypt", "asymmetric-sign", "raw-decrypt", "raw-encrypt", "mac-sign", "mac-verify", "sign-blob",
     "sign-jwt", "sign-url", "explain", "predict", "raw-predict", "direct-predict", "direct-raw-predict",
     "stream-direct-predict", "stream-direct-raw-predict", "stream-raw-predict", "render", "resolve", "watch",
     "troubleshoot", "evaluate", "redact", "recognize", "run-short", "transcribe-speech", "translate-text",
     "classify-text", "suggest-crop", "simulate", "replay-recent-access", "vet", "metrics", "show", "monitor",
     "stream-logs", "test", "test-ip", "validate", "verify", "find-unregistered", "export", "help", "login",
     "apt", "yum", "mvn", "npm", "python", "gradle", "cheat-sheet", "gen-config", "local-run", "proxy-config",
     "proxy-status", "bug-report", "routes", "analyze", "scan", "auth-info", "check-upgrade", "is-upgradeable"}
)  # fmt: skip
READ_LEAF_PREFIXES = (
    "list-", "describe-", "get-", "show-", "search-", "check-", "validate-", "print-", "detect-", "analyze-",
    "query-", "wait-", "export-", "download-", "fetch-", "generate-", "sanitize-", "evaluate-", "tail-",
)  # fmt: skip
# Leaves named like reads that write: to a bucket, a table, a file system.
CHANGING_LEAVES = frozenset({"export-data", "export-logs", "batch-translate-text", "generate-gateway-rbac"})


@functools.cache
def gcloud_groups() -> frozenset[str]:
    """The group paths of data/gcloud_groups.txt ("compute instances")."""
    text = resources.files("iac_code.infra_commands").joinpath("data", "gcloud_groups.txt").read_text("utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


def leaf_index(words: Sequence[Word]) -> int | None:
    """Where the command's leaf is among its operands (a release track first or not): the word after the
    longest run that is a group path; None when the first word is no group (or is computed at run time)."""
    start = 1 if words and not words[0].dynamic and words[0].text in TRACKS else 0
    groups = gcloud_groups()
    end = start
    while end < len(words) and not words[end].dynamic and " ".join(w.text for w in words[start : end + 1]) in groups:
        end += 1
    return None if end == start else end


def leaf_reads(name: str) -> bool:
    return name not in CHANGING_LEAVES and (name in READ_LEAVES or name.startswith(READ_LEAF_PREFIXES))
