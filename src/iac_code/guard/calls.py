"""Who answers a shim: the decision registered with each command's token (guard/channel.py).

- A bash tool call (`BashCallDecision`): a run that does not change infrastructure runs; a change the
  call's own line already showed, and the user approved before the call started, runs (asked once, not
  twice), in the directory and under the environment the line showed (guard/approvals.py); any other
  change is asked as the visible line's would be, on the call's event loop, while the shim waits: its
  exact argv, where it runs and why it is asked. The answer holds for the same run (argv, directory, the
  environment that matters) again in the same call: a loop retrying a refused change is not asked anew.
- The commands of checks: the policy's answer (agent/policy.answer_check_command), which the start-up
  registers (guard/install.py): a check never changes infrastructure, so a change is refused unasked.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import shlex
from collections.abc import Awaitable, Callable

from iac_code.guard.approvals import LineApproval, matters
from iac_code.guard.channel import ShimRequest
from iac_code.infra_commands import changes_argv

# The shim's words for a run the user refused (agent/policy.shim_refusal says them too), or whose question
# the user withdrew by cancelling the turn.
USER_REFUSAL = "refused by the user"

# Asks the user about one run (the command, shell-quoted; what the question shows beside it): None to run
# it, else what the shim says: the policy's decision in its words (agent/policy.shim_refusal).
AskUser = Callable[[str, str], Awaitable[str | None]]
# One run as far as an answer goes: its argv, its directory, the environment that changes what it does.
RunKey = tuple[tuple[str, ...], str, frozenset[tuple[str, str]]]


class BashCallDecision:
    """Answers the shims of one bash call. `approval` is the user's approval of the call's command line when
    it was itself judged an infrastructure change (and so approved before it started), else None."""

    def __init__(
        self, approval: LineApproval | None, ask: AskUser | None, loop: asyncio.AbstractEventLoop, patience: float
    ) -> None:
        self._approval = approval
        self._ask = ask
        self._loop = loop
        self._patience = patience  # the call's timeout: its command is killed by then anyway
        self._one_question = asyncio.Lock()  # a pipeline's two changes are asked one after the other
        # What ended a question other than an answer (the turn cancelled): the call raises it once its
        # command has ended, so the turn stops as it would for the visible line.
        self.interruption: BaseException | None = None
        self._pending: set[concurrent.futures.Future[str | None]] = set()
        self._closed = False
        self._answered: dict[RunKey, str | None] = {}  # the policy's answers, by run (on the loop's thread)

    def close(self) -> None:
        """The call is over (or cancelled): a question still open is withdrawn, its shim refused."""
        self._closed = True
        for future in list(self._pending):
            future.cancel()

    def __call__(self, request: ShimRequest) -> str | None:
        argv = request.argv
        if not changes_argv(argv, request.env):
            return None
        why = "the call's line shows no infrastructure change"
        if self._approval is not None:
            uncovered = self._approval.uncovered(request)
            if uncovered is None:
                return None
            why = uncovered
        if self._ask is None:
            return "refused: nobody to ask (a command run outside a turn)"
        details = f"Runs in {request.cwd}\nAsked on its own: {why}."
        question = self._asked(_run_key(request), shlex.join(argv), details)
        future = asyncio.run_coroutine_threadsafe(question, self._loop)
        self._pending.add(future)
        try:
            refusal = future.result(self._patience)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return "refused: no answer in time"
        except BaseException as exc:  # the turn was cancelled meanwhile, or the loop is gone
            if not self._closed:  # (a question the call withdrew on its way out is no interruption)
                self.interruption = exc
            return USER_REFUSAL
        finally:
            self._pending.discard(future)
        return refusal

    async def _asked(self, key: RunKey, command: str, details: str) -> str | None:
        assert self._ask is not None
        async with self._one_question:
            if key not in self._answered:
                self._answered[key] = await self._ask(command, details)
            return self._answered[key]


def _run_key(request: ShimRequest) -> RunKey:
    relevant = frozenset((name, value) for name, value in request.env.items() if matters(name))
    return tuple(request.argv), request.cwd, relevant
