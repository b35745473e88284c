"""How an MCP tool is judged: the user's trust in its server, its annotations and the words of its name."""

import pytest

from iac_code.mcp.access import name_words, names_infrastructure_change, tool_access


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("terraform_apply", ["terraform", "apply"]),
        ("kubectl-delete", ["kubectl", "delete"]),
        ("helm.uninstall", ["helm", "uninstall"]),
        ("deleteDBInstance", ["delete", "db", "instance"]),
        ("TerminateInstances", ["terminate", "instances"]),
        ("TERRAFORM_APPLY", ["terraform", "apply"]),
        ("s3/rm", ["s", "3", "rm"]),
        ("get pods", ["get", "pods"]),
    ],
)
def test_a_name_splits_the_way_a_reader_splits_it(name, words):
    assert name_words(name) == words


@pytest.mark.parametrize(
    "name",
    [
        "terraform_apply",
        "kubectl-delete",
        "helm.uninstall",
        "helm_upgrade",
        "deleteBucket",
        "TerminateInstances",
        "destroy",
        "cdk_deploy",
        "rollback_release",
        "roll_back_release",
        "tearDownStack",
        "teardown_env",
        "purge_queue",
        "drop_table",
        "remove_node",
        "scale_deployment",
        "drain_node",
        "s3_rm",
    ],
)
def test_names_with_an_infrastructure_verb(name):
    assert names_infrastructure_change(name)


@pytest.mark.parametrize(
    "name",
    [
        "terraform_plan",
        "kubectl_get",
        "describe_region",
        "list_deployments",  # "deployments" is a noun: only the verb's own form counts
        "applications",
        "echo",
        "get_history",
        "modelName",
        "search",
    ],
)
def test_names_without_one(name):
    assert not names_infrastructure_change(name)


# (name, readOnlyHint, destructiveHint, trusted) → access
CASES = [
    ("describe_region", True, False, True, "read"),
    ("describe_region", True, False, False, "claimed_read"),
    ("echo", False, False, True, "external"),
    ("echo", False, False, False, "external"),
    ("rotate_keys", False, True, True, "infra_change"),
    ("rotate_keys", False, True, False, "infra_change"),
    ("terraform_apply", False, False, True, "infra_change"),
    ("terraform_apply", False, False, False, "infra_change"),
    # an untrusted server's read-only claim does not cancel what the name says; a trusted server's does
    ("terraform_apply", True, False, False, "infra_change"),
    ("delete_preview", True, False, True, "read"),
    # a read-only claim beside a destructive one, from an untrusted server: the stricter wins
    ("describe_region", True, True, False, "infra_change"),
]


@pytest.mark.parametrize(("name", "read_only", "destructive", "trusted", "access"), CASES)
def test_the_access_of_a_tool(name, read_only, destructive, trusted, access):
    assert tool_access(name, read_only=read_only, destructive=destructive, trusted=trusted) == access
