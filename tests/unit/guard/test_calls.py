"""Who answers a bash call's shims: the line's own approval covers what it showed, where and as it showed
it; anything else is asked, once per distinct run, on the call's event loop, saying where it runs."""

from __future__ import annotations

import asyncio

from iac_code.guard.approvals import LineApproval
from iac_code.guard.calls import USER_REFUSAL, BashCallDecision
from iac_code.guard.channel import ShimRequest


def _request(*argv: str, cwd: str = "/work") -> ShimRequest:
    return ShimRequest(argv[0], cwd, list(argv[1:]))


async def _decide(decision: BashCallDecision, *argv: str, cwd: str = "/work") -> str | None:
    return await asyncio.to_thread(decision, _request(*argv, cwd=cwd))


async def test_a_change_the_approved_line_showed_runs_unasked():
    questions: list[str] = []

    async def ask(question: str, shown: str) -> str | None:
        questions.append(question)
        return None

    approval = LineApproval("terraform apply -auto-approve", "/work", {})
    decision = BashCallDecision(approval, ask, asyncio.get_running_loop(), patience=5)
    assert await _decide(decision, "terraform", "apply", "-auto-approve") is None
    assert questions == []


async def test_the_same_argv_elsewhere_is_asked_saying_where_it_runs_and_why():
    asked: list[tuple[str, str]] = []

    async def ask(question: str, shown: str) -> str | None:
        asked.append((question, shown))
        return USER_REFUSAL  # the policy's words for a user's reject (agent/policy.shim_refusal)

    approval = LineApproval("terraform apply", "/work/a", {})
    decision = BashCallDecision(approval, ask, asyncio.get_running_loop(), patience=5)
    assert await _decide(decision, "terraform", "apply", cwd="/work/b") == USER_REFUSAL
    assert asked == [("terraform apply", "Runs in /work/b\nAsked on its own: the approved line ran in /work/a.")]


async def test_each_change_an_unreadable_line_runs_is_asked():
    questions: list[str] = []

    async def ask(question: str, shown: str) -> str | None:
        questions.append(question)
        return None

    decision = BashCallDecision(LineApproval("x=(a); sh go.sh", "/work", {}), ask, asyncio.get_running_loop(), 5)
    assert await _decide(decision, "terraform", "apply") is None
    assert await _decide(decision, "terraform", "destroy") is None
    assert questions == ["terraform apply", "terraform destroy"]


async def test_an_answer_holds_for_the_same_run_again_in_the_call_only():
    questions: list[str] = []

    async def ask(question: str, shown: str) -> str | None:
        questions.append(question)
        return USER_REFUSAL  # the policy's words for a user's reject (agent/policy.shim_refusal)

    decision = BashCallDecision(None, ask, asyncio.get_running_loop(), patience=5)
    for _ in range(3):  # a script retrying a refused destroy
        assert await _decide(decision, "terraform", "destroy") == USER_REFUSAL
    assert await _decide(decision, "terraform", "destroy", cwd="/work/prod") == USER_REFUSAL
    assert questions == ["terraform destroy", "terraform destroy"]
    again = BashCallDecision(None, ask, asyncio.get_running_loop(), patience=5)
    assert await _decide(again, "terraform", "destroy") == USER_REFUSAL
    assert len(questions) == 3


async def test_a_change_the_line_did_not_show_is_asked_with_its_exact_argv():
    questions: list[str] = []

    async def ask(question: str, shown: str) -> str | None:
        questions.append(question)
        return USER_REFUSAL  # the policy's words for a user's reject (agent/policy.shim_refusal)

    decision = BashCallDecision(None, ask, asyncio.get_running_loop(), patience=5)
    assert await _decide(decision, "kubectl", "delete", "namespace", "my prod") == USER_REFUSAL
    assert await _decide(decision, "kubectl", "get", "pods") is None  # changes nothing: never asked
    assert questions == ["kubectl delete namespace 'my prod'"]


async def test_a_policy_refusal_is_passed_on():
    async def ask(question: str, shown: str) -> str | None:
        return "refused: Not run: the session is in plan mode"  # agent/policy.shim_refusal's words

    decision = BashCallDecision(None, ask, asyncio.get_running_loop(), patience=5)
    assert await _decide(decision, "terraform", "destroy") == "refused: Not run: the session is in plan mode"


async def test_no_answer_in_time_refuses_and_a_closed_call_withdraws_its_question():
    async def never(question: str, shown: str) -> str | None:
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

    async def cancel(question: str, shown: str) -> str | None:
        raise TurnCancelled

    decision = BashCallDecision(None, cancel, asyncio.get_running_loop(), patience=5)
    assert await _decide(decision, "terraform", "apply") == USER_REFUSAL
    assert isinstance(decision.interruption, TurnCancelled)


async def test_outside_a_turn_a_change_is_refused():
    decision = BashCallDecision(None, None, asyncio.get_running_loop(), patience=5)
    assert (await _decide(decision, "terraform", "apply") or "").startswith("refused")
