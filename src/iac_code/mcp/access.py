"""How an MCP tool is judged by the permission policy (agent/policy.py): from whether the user trusts its
server, its annotations, and its name. Annotations are the server's claims (the MCP spec says a client must
not rely on them from an untrusted server); only the user's config.json vouches for a server.

In this order:
- a trusted server marks it `readOnlyHint: true` → "read" (runs in every mode);
- `destructiveHint: true`, or a name whose words include an infrastructure verb → "infra_change" (asked
  every time, no "always"); an untrusted server's `readOnlyHint` does not cancel the name;
- an untrusted server marks it `readOnlyHint: true` → "claimed_read";
- anything else → "external".

Only hints the server set explicitly count (the spec's defaults, destructive when unsaid, would make every
unannotated tool an infrastructure change).
"""

from __future__ import annotations

import re
from itertools import pairwise

from iac_code.tools.base import Access

# Words in a tool's name that say it applies, destroys or deletes infrastructure (kubectl, helm, terraform,
# cloud and database verbs). A false match costs an "always allow"; a miss leaves the tool "external", which
# is still asked outside the modes that run everything.
INFRASTRUCTURE_VERBS = frozenset(
    {
        "apply",
        "decommission",
        "del",
        "delete",
        "deploy",
        "deprovision",
        "destroy",
        "drain",
        "drop",
        "erase",
        "purge",
        "redeploy",
        "remove",
        "rm",
        "rollback",
        "scale",
        "teardown",
        "terminate",
        "undeploy",
        "uninstall",
        "upgrade",
        "wipe",
    }
)
# The same verbs written as two words ("tear_down", "rollBack").
INFRASTRUCTURE_PHRASES = frozenset({("roll", "back"), ("tear", "down")})

# A run of capitals not followed by a small letter ("DB" in "deleteDBInstance"), a word with an optional
# capital ("delete", "Instance"), or digits: camelCase and PascalCase split the way a reader splits them.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def tool_access(name: str, *, read_only: bool, destructive: bool, trusted: bool) -> Access:
    """The access of every call of tool `name` (MCP tools are judged alike whatever their arguments);
    `read_only` and `destructive` are the hints the server set to true."""
    if trusted and read_only:
        return "read"
    if destructive or names_infrastructure_change(name):
        return "infra_change"
    return "claimed_read" if read_only else "external"


def names_infrastructure_change(name: str) -> bool:
    """Whether the words of `name` (split on `_`, `-`, `.`, any other non-letter and camelCase) include an
    infrastructure verb: `terraform_apply`, `kubectl-delete`, `helm.uninstall`, `deleteBucket`."""
    words = name_words(name)
    return any(word in INFRASTRUCTURE_VERBS for word in words) or any(
        pair in INFRASTRUCTURE_PHRASES for pair in pairwise(words)
    )


def name_words(name: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(name)]
