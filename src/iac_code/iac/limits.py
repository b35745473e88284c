"""Memory and CPU limits for the processes that read untrusted files (parse workers, checkov, cfn-lint,
terraform, tflint, kubeconform), and how to tell from a dead process which limit it hit.

Memory is bounded with RLIMIT_DATA rather than RLIMIT_AS. RLIMIT_DATA counts the heap and the private
writable mappings, which is what a hostile input makes a parser allocate; RLIMIT_AS also counts address
space that is only reserved: a Go program (terraform) cannot even start under 1 GB of it, and the
checkov worker maps 1.4 GB while it uses 170 MB. CPU time is bounded with RLIMIT_CPU: SIGXCPU ends the
process even if whoever watches its clock is gone. Both are set in the child between fork and exec
(`preexec`), so the agent's own limits never change.
"""

from __future__ import annotations

import resource
import signal
from dataclasses import dataclass

MB = 1024 * 1024
# What a Go program prints when the kernel refuses it memory (its runtime then exits with code 2).
GO_OUT_OF_MEMORY = ("fatal error: out of memory", "fatal error: runtime: out of memory")


class LimitExceeded(RuntimeError):
    """A checker's process was stopped by its memory or CPU limit; the message names the limit."""


@dataclass(frozen=True)
class Limits:
    memory_bytes: int
    cpu_seconds: int | None = None  # None: the caller bounds time otherwise (per request, see worker_server)

    @property
    def memory_text(self) -> str:
        return f"{self.memory_bytes // MB:,} MB"

    def preexec(self) -> None:
        """Apply the limits to the current process: meant as `preexec_fn` (runs in the child).
        Only system calls: between fork and exec nothing may take a lock another thread holds."""
        resource.setrlimit(resource.RLIMIT_DATA, (self.memory_bytes, self.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a process killed by a limit leaves no core file
        if self.cpu_seconds is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, resource.RLIM_INFINITY))

    def out_of_memory(self, name: str) -> LimitExceeded:
        return LimitExceeded(f"{name} exceeded its memory limit ({self.memory_text})")

    def exceeded(self, name: str, returncode: int | None, output: str = "") -> LimitExceeded | None:
        """The limit `name`'s process hit, judged from how it ended and what it printed last (None: none)."""
        if returncode == -signal.SIGXCPU:
            seconds = f" ({self.cpu_seconds} s)" if self.cpu_seconds else ""
            return LimitExceeded(f"{name} exceeded its CPU time limit{seconds}")
        if "MemoryError" in output or any(marker in output for marker in GO_OUT_OF_MEMORY):
            return self.out_of_memory(name)
        return None
