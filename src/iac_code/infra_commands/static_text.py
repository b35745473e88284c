"""Text a line builds at run time, where it can be told without running anything.

`$(echo terraform apply)` runs `terraform apply`; `echo dGVycmFmb3JtIGFwcGx5 | base64 -d | sh` too; so does
`bash <(printf '%s\\n' 'kubectl delete ns prod')` and the brace expansion `{terraform,apply}`. Only `echo`,
`printf` (with `%s` alone), `cat` of a here-document and `base64 -d` of those are followed: anything else
is computed, and left to the guard's shims.
"""

from __future__ import annotations

import base64
import binascii
import re

from iac_code.infra_commands.shell_syntax import (
    ShellSyntaxError,
    SimpleCommand,
    Word,
    ansi_c_unescape,
    parse_commands,
)

_SUBSTITUTION = re.compile(r"^(?:\$\((?!\()(?P<paren>.*)\)|`(?P<tick>.*)`)$", re.S)
_BRACES = re.compile(r"\{(?P<items>[^{}]*,[^{}]*)\}")
_PRINTF_DIRECTIVE = re.compile(r"%.")
MAX_PIPE = 8


def static_substitution(text: str) -> list[Word] | None:
    """The words a command substitution that is the whole word gives, when its output is static."""
    match = _SUBSTITUTION.match(text)
    if match is None:
        return None
    output = static_output(match.group("paren") if match.group("paren") is not None else match.group("tick"))
    return None if output is None else [Word(part) for part in output.split()]


def static_output(source: str | SimpleCommand, depth: int = 0) -> str | None:
    """What a command (or the last command of a text) writes on stdout, when that is known without running it."""
    if isinstance(source, str):
        try:
            commands = parse_commands(source)
        except (ShellSyntaxError, RecursionError):
            return None
        if not commands:
            return None
        source = commands[-1]
    words = source.words
    if not words or depth > MAX_PIPE or any(w.dynamic for w in words):
        return None
    program, args = words[0].text.rsplit("/", 1)[-1], [w.text for w in words[1:]]
    if program == "echo":
        escapes = False
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            escapes = "e" in args[0] or (escapes and args[0] != "-E")
            args = args[1:]
        return ansi_c_unescape(" ".join(args)) if escapes else " ".join(args)
    if program == "printf" and args:
        return _printf(args[0], args[1:])
    if program == "cat" and not args:
        return source.stdin_text
    if program == "base64" and any(a in ("-d", "--decode", "-D") for a in args) and source.piped_from is not None:
        encoded = static_output(source.piped_from, depth + 1)
        try:
            return None if encoded is None else base64.b64decode(encoded.strip()).decode()
        except (binascii.Error, UnicodeDecodeError):
            return None
    return None


def _printf(template: str, args: list[str]) -> str | None:
    """printf's output for a template whose only directives are `%s` (and `%%`); None otherwise."""
    template = template.replace("\\n", "\n").replace("\\t", "\t")
    if any(directive not in ("%s", "%%") for directive in _PRINTF_DIRECTIVE.findall(template)):
        return None
    slots = template.count("%s")
    if not slots:
        return template.replace("%%", "%")
    values = list(args) or [""]
    values += [""] * (-len(values) % slots)  # the template is repeated until the arguments are used up
    pieces = iter(values)
    output = []
    for _ in range(len(values) // slots):
        output.append(_PRINTF_DIRECTIVE.sub(lambda m: "%" if m.group() == "%%" else next(pieces), template))
    return "".join(output)


def brace_expanded(text: str) -> str:
    """`{terraform,apply}` as bash expands it, `terraform apply` (the words joined by spaces)."""
    match = _BRACES.search(text)
    if match is None:
        return text
    before, after = text[: match.start()], text[match.end() :]
    return " ".join(brace_expanded(before + item + after) for item in match.group("items").split(","))
