"""provider_schema: the schema of one resource or data source type, for the provider versions a module pins.

Read-only, in every mode. The schemas come from `terraform providers schema -json` (or tofu) run in the module
directory, kept per type by the lock file's digest (iac/schemas/): a warm call reads one row and never runs
terraform. Making the document starts the provider plugins the directory's `.terraform/` holds, code the
repository may ship, so that asks first, as iac_plan does; a stored document needs no plugin and no question.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iac_code.iac.schemas.lookup import ProviderSchemas, SchemaQuery, SchemaUnavailable
from iac_code.iac.schemas.store import SchemaStore
from iac_code.iac.schemas.text import schema_text
from iac_code.tools.base import Access, Category, Kind, ToolContext, ToolError, ToolResult, required_text
from iac_code.tools.iac_plan import ask_for_plugins
from iac_code.tools.workspace import Roots, path_argument_locations, resolve_in_workspace, root_of, shorten

KINDS = ("resource", "data")


class ProviderSchemaTool:
    name = "provider_schema"
    category: Category = "read"
    kind: Kind = "read"
    description = (
        "The schema of a Terraform/OpenTofu resource or data source type for the provider version the module "
        "pins in .terraform.lock.hcl: every argument and attribute with its type, required/optional/computed, "
        "sensitive, deprecated and description, and the nested blocks. Use it before writing or changing a "
        "resource, instead of recalling attributes from memory. The module must be initialized (terraform init); "
        "the built-in terraform_data and terraform_remote_state need no init. Read-only, allowed in every mode."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "description": "The type name, e.g. aws_instance."},
            "kind": {
                "type": "string",
                "enum": list(KINDS),
                "description": "resource (default) or data (a data source).",
            },
            "path": {
                "type": "string",
                "description": "The module directory, relative to the workspace (default: .).",
            },
        },
        "required": ["type"],
    }

    def __init__(self, cache_path: Path | None = None) -> None:
        """`cache_path`: where schemas are kept (Settings.provider_schema_cache_path); None: in memory."""
        self.schemas = ProviderSchemas(SchemaStore(cache_path))

    def access(self, args: dict[str, Any]) -> Access:
        return "read"

    def title(self, args: dict[str, Any]) -> str:
        kind = "data source" if args.get("kind") == "data" else "resource"
        return f"Schema of {kind} {shorten(str(args.get('type') or ''), 60)}"

    def locations(self, args: dict[str, Any], ctx: ToolContext) -> list[str]:
        return path_argument_locations(ctx.roots, args)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = schema_query(args, ctx.roots)

        async def before_plugins(directory: Path) -> str | None:
            return await ask_for_plugins(directory, ctx, self.name, "terraform providers schema")

        try:
            schema = await self.schemas.find(query, before_plugins)
        except SchemaUnavailable as exc:
            raise ToolError(str(exc)) from None
        return ToolResult(text=schema_text(schema), raw_output=schema)


def schema_query(args: dict[str, Any], workspace: Roots) -> SchemaQuery:
    """The arguments as a query for a module directory inside the workspace; ToolError the model can act on."""
    name = required_text(args, "type", blank_ok=False).strip()
    kind = args.get("kind") or "resource"
    if kind not in KINDS:
        raise ToolError('\'kind\' must be "resource" or "data"')
    path = args.get("path") or "."
    if not isinstance(path, str):
        raise ToolError("'path' must be a string")
    directory = resolve_in_workspace(workspace, path)
    if not directory.is_dir():
        raise ToolError(f"not a directory: {path}")
    return SchemaQuery(workspace=root_of(workspace, directory), directory=directory, kind=kind, name=name)
