"""The shim: what runs in place of an infrastructure CLI (terraform, kubectl, aws, …) in every command the
agent runs. guard/shims.py copies this file into the guard's private directory behind a `#!python -IS`
line and links each guarded program's name to it; in a mount namespace it is also bound over the real
binaries' own paths (guard/namespace.py).

It sends its exact argv, directory and environment to the agent over the guard's Unix socket, with the secret
token of the command it belongs to and its own stdin, stdout and stderr, and does what the agent answers:
`run` → exec the real program (here, without cloud credentials); `exit:N` / `signal:N` → the agent ran it with
the credentials on this shim's stdio (guard/handover.py), end the same way; anything else → say why on
stderr and exit 126 (the shell's "found but could not be executed": the program did not run, which a
script can tell from the program's own failures). No socket, no token, no answer, a garbled answer: the
same refusal (fail closed).

Standard library only, no import of iac_code, and only modules that cost nothing to import (`_socket`, not
`socket`; no `re`, no `json`): a non-changing call must stay within a few milliseconds of the real one.
"""

import os
import sys

REFUSED = 126
GUARD_SOCKET = "IAC_CODE_GUARD"
GUARD_TOKEN = "IAC_CODE_GUARD_TOKEN"
# In namespace mode, the directory where each real binary can still be reached, under its own absolute path.
GUARD_REAL = "IAC_CODE_GUARD_REAL"
MAX_ANSWER = 4096


def main() -> None:
    program = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    answer = _ask(program, args)
    if answer.startswith(b"exit:") and answer[5:].isdigit():
        os._exit(int(answer[5:]))
    if answer.startswith(b"signal:") and answer[7:].isdigit():
        _end_by_signal(int(answer[7:]))
    if answer != b"run":
        _refuse(program, _refusal(answer))
    real = _real_program(program)
    if real is None:
        os.write(2, f"iac-code: {program}: command not found\n".encode(errors="replace"))
        os._exit(127)
    try:
        os.execv(real, [program, *args])
    except OSError as exc:
        _refuse(program, f"{real}: {exc.strerror}")


def _ask(program: str, args: list[str]) -> bytes:
    """The agent's answer about running `program` with `args`."""
    path, token = os.environ.get(GUARD_SOCKET), os.environ.get(GUARD_TOKEN)
    if not path or not token:
        return b"refuse:refused: no guard channel in this environment (run it through iac-code)"
    fields = [token, program, os.getcwd(), str(len(args)), *args]
    fields += [f"{name}={value}" for name, value in os.environ.items() if name != GUARD_TOKEN]  # sent first
    request = b"".join(b"%d:%s," % (len(field), field) for field in map(os.fsencode, fields))
    try:
        import _socket

        connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            connection.connect(path)
            # One byte carrying our stdin, stdout and stderr: where the agent runs what needs credentials.
            stdio = [descriptor if _is_open(descriptor) else os.open(os.devnull, os.O_RDWR) for descriptor in (0, 1, 2)]
            rights = b"".join(descriptor.to_bytes(4, sys.byteorder) for descriptor in stdio)
            connection.sendmsg([b"F"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
            connection.sendall(request)
            connection.shutdown(_socket.SHUT_WR)
            answer = b""
            while len(answer) <= MAX_ANSWER:
                chunk = connection.recv(MAX_ANSWER)
                if not chunk:
                    break
                answer += chunk
        finally:
            connection.close()
    except OSError as exc:
        return f"refuse:refused: the agent's guard did not answer ({exc.strerror or exc})".encode(errors="replace")
    return answer


def _is_open(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
    except OSError:
        return False
    return True


def _refusal(answer: bytes) -> str:
    if answer.startswith(b"refuse:") and len(answer) <= MAX_ANSWER:
        return answer[len(b"refuse:") :].decode(errors="replace") or "refused"
    return "refused: the agent's guard gave no answer"


def _end_by_signal(signum: int) -> None:
    """End as the handed run did: killed by the same signal (a rare path: `signal` may cost its import here)."""
    import signal

    try:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)


def _refuse(program: str, reason: str) -> None:
    os.write(2, f"iac-code: {program}: {reason}\n".encode(errors="replace"))
    os._exit(REFUSED)


def _real_program(program: str) -> str | None:
    """The next `program` on PATH that is not this shim (a link to it, or, in a namespace, bound over it)."""
    try:
        shim = os.stat(sys.argv[0])
        me = (shim.st_dev, shim.st_ino)
    except OSError:
        me = None
    real_root = os.environ.get(GUARD_REAL)
    invoked = _covered_copy(sys.argv[0], real_root)
    if invoked is not None:
        return invoked
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or ".", program)
        try:
            found = os.stat(candidate)
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == me:
            kept = _covered_copy(candidate, real_root)
            if kept is not None:
                return kept
            continue
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _covered_copy(path: str, real_root: str | None) -> str | None:
    """The real binary a namespace covered with this shim at `path` (not a link in the guard's own
    directory, not a bare name): its copy in the guard's view of the original file system.

    Called with the path this script was started by first (for a script the kernel passes the path that was
    executed, whatever argv[0] the caller chose): a program that runs a covered binary by its absolute path
    (a wrapper on PATH ending in `exec /usr/local/bin/terraform`) gets that binary, never the next one on
    PATH, which may be the wrapper itself (a loop of execs)."""
    if not real_root or os.sep not in path:
        return None
    resolved = os.path.realpath(path)
    if resolved.startswith(os.path.dirname(real_root) + os.sep):
        return None
    kept = real_root + resolved
    return kept if os.path.isfile(kept) and os.access(kept, os.X_OK) else None


if __name__ == "__main__":
    main()
