"""Modes and models, exposed both the legacy way (`modes`, `models`) and as `configOptions` selects; the
session's on/off settings (agent/options.py) as boolean `configOptions`, only to a client that advertised
`session.configOptions.boolean` (others never see them).

Built as plain JSON, the wire form of the SDK's SessionModeState, SessionConfigOptionSelect and
SessionConfigOptionBoolean (the unit tests validate them against those models), so that a `session/new` can
be answered before the SDK has loaded (early.py) with the very state the agent answers later.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iac_code.agent.modes import MODES as POLICY_MODES
from iac_code.agent.options import OPTIONS, OptionInfo

# A session's on/off settings, or None for a client that cannot show them (no boolean support).
Toggles = Mapping[str, bool] | None

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


def new_session_toggles(capabilities: Any) -> Toggles:
    """A new session's on/off settings (all off) if the raw `clientCapabilities` advertise
    `session.configOptions.boolean`, else None (read before the SDK loads)."""
    session = capabilities.get("session") if isinstance(capabilities, dict) else None
    config = session.get("configOptions") if isinstance(session, dict) else None
    return {} if isinstance(config, dict) and isinstance(config.get("boolean"), dict) else None


def config_options(mode: str, model: str, models: list[str], toggles: Toggles = None) -> list[dict[str, Any]]:
    booleans = [] if toggles is None else [_boolean(option, toggles) for option in OPTIONS]
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
        *booleans,
    ]


def _boolean(option: OptionInfo, toggles: Mapping[str, bool]) -> dict[str, Any]:
    value = toggles.get(option.id, False)
    return {
        "type": "boolean",
        "id": option.id,
        "name": option.name,
        "description": option.description,
        "currentValue": value,
    }


def session_state(mode: str, model: str, models: list[str], toggles: Toggles = None) -> dict[str, Any]:
    """`modes`, `models` and `configOptions`, as new/load/resume/fork answer them."""
    return {
        "modes": mode_state(mode),
        "models": model_state(model, models),
        "configOptions": config_options(mode, model, models, toggles),
    }
