"""Who answers a bash call's shims: the line's own approval covers what it showed; anything else is asked,
once per run, on the call's event loop."""

from __future__ import annotations

import asyncio

import pytest

from iac_code.guard import BashCallDecision, ShimRequest, refuse_changes
from iac_code.guard.calls import CHECK_REFUSAL, USER_REFUSAL


def _request(*argv: str) -> ShimRequest:
    return ShimRequest(argv[0], "/work", list(argv[1:]))


async def _decide(decision: BashCallDecision, *argv: str) -> str | None:
    return await asyncio.to_thread(decision, _request(*argv))


async def test_a_change_the_approved_line_showed_runs_unasked():
    questions: list[str] = []

    async def ask(question: str) -> str | None:
        questions.append(question)
        return None

    decision = BashCallDecision("terraform apply -auto-approve", ask, asyncio.get_running_loop(), patience=5)
    assert await _decide(decision, "terraform", "apply", "-auto-approve") is None
    assert questions == []


async def test_a_change_the_line_did_not_show_is_asked_with_its_exact_argv():
    questions: list[str] = []

    async def ask(question: str) -> str | None:
        questions.append(question)
        return "Permission denied."

    decision = BashCallDecision(None, ask, asyncio.get_running_loop(), patience=5)
    assert await _decide(decision, "kubectl", "delete", "namespace", "my prod") == USER_REFUSAL
    assert await _decide(decision, "kubectl", "get", "pods") is None  # changes nothing: never asked
    assert questions == ["kubectl delete namespace 'my prod'"]


async def test_a_policy_refusal_is_passed_on():
    async def ask(question: str) -> str | None:
        return "Not run: the session is in plan mode"

    decision = BashCallDecision(None, ask, asyncio.get_running_loop(), patience=5)
    assert await _decide(decision, "terraform", "destroy") == "refused: Not run: the session is in plan mode"


async def test_no_answer_in_time_refuses_and_a_closed_call_withdraws_its_question():
    async def never(question: str) -> str | None:
        await asyncio.Event().wait()
        return None

    decision = BashCallDecision(None, never, asyncio.get_running_loop(), patience=0.2)
    assert await _decide(decision, "terraform", "apply") == "refused: no answer in time"
    patient = BashCallDecision(None, never, asyncio.get_running_loop(), patience=60)
    pending = asyncio.ensure_future(_decide(patient, "terraform", "apply"))
    await asyncio.sleep(0.2)
    patient.close()
    assert await pending == USER_REFUSAL
    assert patient.interruption is None  # withdrawn by the call itself: nothing to stop the turn with


async def test_a_cancelled_turn_is_kept_for_the_call_to_raise():
    class TurnCancelled(Exception):
        pass

    async def cancel(question: str) -> str | None:
        raise TurnCancelled

    decision = BashCallDecision(None, cancel, asyncio.get_running_loop(), patience=5)
    assert await _decide(decision, "terraform", "apply") == USER_REFUSAL
    assert isinstance(decision.interruption, TurnCancelled)


async def test_outside_a_turn_a_change_is_refused():
    decision = BashCallDecision(None, None, asyncio.get_running_loop(), patience=5)
    assert (await _decide(decision, "terraform", "apply") or "").startswith("refused")


@pytest.mark.parametrize(("argv", "refusal"), [(("terraform", "apply"), CHECK_REFUSAL), (("terraform", "plan"), None)])
def test_the_checks_commands_never_change_infrastructure(argv, refusal):
    assert refuse_changes(_request(*argv)) == refusal
