"""Modes and models, exposed both the legacy way (`modes`, `models`) and as `configOptions` selects.

Built as plain JSON, the wire form of the SDK's SessionModeState and SessionConfigOptionSelect (the unit
tests validate them against those models), so that a `session/new` can be answered before the SDK has
loaded (early.py) with the very state the agent answers later.
"""

from __future__ import annotations

from typing import Any

from iac_code.agent.modes import MODES as POLICY_MODES

MODES = [{"id": mode.id, "name": mode.name, "description": mode.description} for mode in POLICY_MODES]
MODE_IDS = [mode["id"] for mode in MODES]


def mode_state(current: str) -> dict[str, Any]:
    return {"currentModeId": current, "availableModes": MODES}


def model_choices(current: str, configured: list[str]) -> list[str]:
    """The models a session may switch to: the configured ones, and its current one if not among them."""
    return configured if current in configured else [current, *configured]


def model_state(current: str, models: list[str]) -> dict[str, Any]:
    """The seed's `models` object (its schema class was removed from ACP; Zed and others still read it)."""
    return {"currentModelId": current, "availableModels": [{"modelId": m, "name": m} for m in models]}


def config_options(mode: str, model: str, models: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "type": "select",
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "currentValue": mode,
            "options": [{"value": m["id"], "name": m["name"], "description": m["description"]} for m in MODES],
        },
        {
            "type": "select",
            "id": "model",
            "name": "Model",
            "category": "model",
            "currentValue": model,
            "options": [{"value": m, "name": m} for m in models],
        },
    ]


def session_state(mode: str, model: str, models: list[str]) -> dict[str, Any]:
    """`modes`, `models` and `configOptions`, as new/load/resume/fork answer them."""
    return {
        "modes": mode_state(mode),
        "models": model_state(model, models),
        "configOptions": config_options(mode, model, models),
    }
