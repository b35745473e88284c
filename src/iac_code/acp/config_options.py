"""Modes and models, exposed both the legacy way (`modes`, `models`) and as `configOptions` selects."""

from __future__ import annotations

from typing import Any

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption, SessionMode, SessionModeState

from iac_code.agent.policy import MODES as POLICY_MODES

MODES = [SessionMode(id=mode.id, name=mode.name, description=mode.description) for mode in POLICY_MODES]
MODE_IDS = [mode.id for mode in MODES]


def mode_state(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current, available_modes=MODES)


def model_state(current: str, models: list[str]) -> dict[str, Any]:
    """The seed's `models` object (its schema class was removed from ACP; Zed and others still read it)."""
    return {"currentModelId": current, "availableModels": [{"modelId": m, "name": m} for m in models]}


def config_options(mode: str, model: str, models: list[str]) -> list[SessionConfigOptionSelect]:
    return [
        SessionConfigOptionSelect(
            type="select",
            id="mode",
            name="Mode",
            category="mode",
            current_value=mode,
            options=[SessionConfigSelectOption(value=m.id, name=m.name, description=m.description) for m in MODES],
        ),
        SessionConfigOptionSelect(
            type="select",
            id="model",
            name="Model",
            category="model",
            current_value=model,
            options=[SessionConfigSelectOption(value=m, name=m) for m in models],
        ),
    ]
