"""iac_code's own parsers inside a worker process: each request calls one function of iac_code.

A request is `{"call": "iac_code.module:function", "args": {...}}`; the answer is what the function
returns (JSON). The functions called here read the workspace's files themselves (safe_read), so a hostile
file is parsed only in this process, under its memory and CPU limits. Unlike the other handlers, this one
runs under the agent's own interpreter and may import iac_code.
"""

from __future__ import annotations

import importlib
from typing import Any

ALLOWED_PREFIX = "iac_code."
# Imported when the worker starts (its warm-up) rather than by the first check: ~0.3 s, lark's grammar included.
WARM_IMPORTS = (
    "iac_code.iac.checkers.syntax",
    "iac_code.iac.checkers.ros",
    "iac_code.iac.checkers.kubeconform",
    "iac_code.iac.checkers.yaml_screen",
    "hcl2.api",
)
for _module in WARM_IMPORTS:
    importlib.import_module(_module)


def handle(request: dict[str, Any]) -> Any:
    module_name, _, function_name = str(request["call"]).partition(":")
    if not module_name.startswith(ALLOWED_PREFIX) or not function_name:
        raise ValueError(f"not a function of iac_code: {request['call']!r}")
    function = getattr(importlib.import_module(module_name), function_name)
    return function(**request["args"])
