"""Cloud and cluster credentials: the one table of what the commands the agent starts do not get.

Every change to real infrastructure needs credentials, so they are the boundary (issue 36): a command runs
without them, and the guard hands them to one run of a guarded CLI only when that run is a known read-only
form or was approved (guard/handover.py). Two kinds:

- environment variables: the names below, and every name starting with one of the prefixes;
- files and folders under the user's home, hidden in the command's mount namespace (an empty folder, or an
  empty file, bound over each) where namespaces can be had (system/reaper.py).

The agent's own secrets (model keys, the HTTP token) are another table: credentials.py.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

CREDENTIAL_PREFIXES = (
    "AWS_",
    "AZURE_",
    "ARM_",  # azurerm's
    "GOOGLE_",
    "CLOUDSDK_",
    "GCLOUD_",
    "ALIBABA_CLOUD_",
    "ALICLOUD_",
    "TF_TOKEN_",
    "OS_",  # OpenStack
    "OCI_",
    "TENCENTCLOUD_",
    "HUAWEICLOUD_",
    "SCW_",  # Scaleway
    "PULUMI_",
    "VAULT_",
    "CONSUL_HTTP_",
    "NOMAD_",
    "DIGITALOCEAN_",
)

CREDENTIAL_VARIABLES = frozenset(
    {
        "KUBECONFIG",
        "TF_CLI_CONFIG_FILE",  # a CLI config holds `credentials` blocks
        "TERRAFORM_CONFIG",  # its older name
        "TFE_TOKEN",
        "ATLAS_TOKEN",
        "HCLOUD_TOKEN",
        "LINODE_TOKEN",
        "CLOUDFLARE_API_TOKEN",
        "CLOUDFLARE_API_KEY",
        "GITHUB_TOKEN",  # the github provider; gh
        "GITLAB_TOKEN",
        "DATADOG_API_KEY",
        "DATADOG_APP_KEY",
        "DD_API_KEY",
        "DD_APP_KEY",
        "HEROKU_API_KEY",
        "SPACELIFT_API_KEY_SECRET",
        "ENV0_API_SECRET",
    }
)

# Variables of the table that only choose among the user's own credentials and places (a profile, a region, a
# project, a subscription): a run the guard hands the credentials to keeps the command's values of these.
SELECTOR_VARIABLES = frozenset(
    {
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_DEFAULT_OUTPUT",
        "AWS_PAGER",
        "ALIBABA_CLOUD_PROFILE",
        "ALIBABA_CLOUD_REGION_ID",
        "ALICLOUD_PROFILE",
        "ALICLOUD_REGION",
        "CLOUDSDK_CORE_PROJECT",
        "CLOUDSDK_COMPUTE_REGION",
        "CLOUDSDK_COMPUTE_ZONE",
        "CLOUDSDK_CORE_DISABLE_PROMPTS",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_REGION",
        "ARM_SUBSCRIPTION_ID",
        "AZURE_SUBSCRIPTION_ID",
        "AZURE_CORE_OUTPUT",
        "OS_REGION_NAME",
        "TENCENTCLOUD_REGION",
        "HUAWEICLOUD_REGION",
        "SCW_DEFAULT_REGION",
        "SCW_DEFAULT_ZONE",
        "PULUMI_CONFIG_PASSPHRASE",
    }
)

# Under the user's home: what a CLI or SDK finds by itself, without any variable.
CREDENTIAL_PATHS = (
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".aliyun",
    ".oci",
    ".pulumi",
    ".tccli",
    ".config/doctl",
    ".config/hcloud",
    ".terraform.d/credentials.tfrc.json",
    ".terraformrc",
    ".vault-token",
)


def is_credential_variable(name: str) -> bool:
    return name in CREDENTIAL_VARIABLES or name.startswith(CREDENTIAL_PREFIXES)


def credential_variables(environment: Mapping[str, str]) -> dict[str, str]:
    """The credential variables `environment` holds."""
    return {name: value for name, value in environment.items() if is_credential_variable(name)}


def without_credentials(environment: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in environment.items() if not is_credential_variable(name)}


def credential_paths(home: str | None = None) -> list[str]:
    """The credential files and folders that exist under `home` (the user's, by default), symlinks resolved.
    (os.path, not pathlib: the warm launcher imports this module on its way to the hand-off.)"""
    base = home if home is not None else os.path.expanduser("~")
    if not base or base == "~" or not os.path.isabs(base):
        return []
    found: list[str] = []
    for relative in CREDENTIAL_PATHS:
        path = os.path.join(base, relative)
        if os.path.exists(path):
            real = os.path.realpath(path)
            if real not in found:
                found.append(real)
    return found
