"""The shim: what runs in place of an infrastructure CLI (terraform, kubectl, aws, …) in every command the
agent runs. guard/shims.py copies this file into the guard's private directory behind a `#!python -IS`
line and links each guarded program's name to it; in a mount namespace it is also bound over the real
binaries' own paths (guard/namespace.py).

It sends its exact argv, its directory and its environment (but the token) to the agent over the guard's
Unix socket, with the secret token of the command it belongs to, and does what the agent answers: `run`
→ exec the real program; anything else → say why on stderr and exit 126 (the shell's "found but could
not be executed": the program did not run, which a script can tell from the program's own failures). No
socket, no token, no answer, a garbled answer: the same refusal (fail closed).

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
    refusal = _ask(program, args)
    if refusal is not None:
        _refuse(program, refusal)
    real = _real_program(program)
    if real is None:
        os.write(2, f"iac-code: {program}: command not found\n".encode(errors="replace"))
        os._exit(127)
    try:
        os.execv(real, [program, *args])
    except OSError as exc:
        _refuse(program, f"{real}: {exc.strerror}")


def _ask(program: str, args: list[str]) -> str | None:
    """None when the agent says run, else why not."""
    path, token = os.environ.get(GUARD_SOCKET), os.environ.get(GUARD_TOKEN)
    if not path or not token:
        return "refused: no guard channel in this environment (run it through iac-code)"
    fields = [os.fsencode(field) for field in (token, program, os.getcwd())]
    fields.append(b"\0".join(k + b"=" + v for k, v in os.environb.items() if k != GUARD_TOKEN.encode()))
    fields.extend(map(os.fsencode, args))
    request = b"".join(b"%d:%s," % (len(field), field) for field in fields)
    try:
        import _socket

        connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            connection.connect(path)
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
        return f"refused: the agent's guard did not answer ({exc.strerror or exc})"
    if answer == b"run":
        return None
    if answer.startswith(b"refuse:") and len(answer) <= MAX_ANSWER:
        return answer[len(b"refuse:") :].decode(errors="replace") or "refused"
    return "refused: the agent's guard gave no answer"


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
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or ".", program)
        try:
            found = os.stat(candidate)
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == me:
            resolved = os.path.realpath(candidate)
            # A real binary the namespace covered with this shim (not a link in the guard's own directory):
            # its copy in the guard's view of the original file system.
            if real_root and not resolved.startswith(os.path.dirname(real_root) + os.sep):
                kept = real_root + resolved
                if os.path.isfile(kept) and os.access(kept, os.X_OK):
                    return kept
            continue
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


if __name__ == "__main__":
    main()
