"""Secrets out of a text: each known secret value, in the forms a command commonly prints it in, and a few
credential shapes, replaced by `[redacted: <name>]`.

A value is found as itself, reversed, in hex (lower and upper case), URL-encoded, and in base64 (standard
and URL-safe) at each of the three byte alignments, so that a value inside a longer base64 blob (`base64
.env`) is found too: only the characters that depend on the value's bytes alone are looked for, the one or
two at each edge that mix in a neighbour's bits are left. Base64 and hex wrapped over lines (`base64`,
`xxd -p`) are read across the line ends. Values shorter than MIN_SECRET_CHARS are not looked for: they
would cut ordinary words out of every output.

The shapes (SHAPES) are credentials a command prints from a file the agent never knew: an AWS access key
id, a named secret key (`aws_secret_access_key = …`), a private key block, a kubeconfig token, a bearer
token. Each is narrow on purpose: a Terraform plan (`(sensitive value)`) or an HCL reference
(`var.secret_key`) is not one.

What this does not do: a program that cuts a secret into pieces or transforms it otherwise (rot13, an
encryption) prints something no table can recognise. Redaction keeps an accidental print out of the model,
the store and the logs; the boundary is that commands cannot read the secrets (cloud_credentials.py,
credentials.py).

Values are found with `str.find`, one pass per form (a C search: ten values, ~80 forms, take ~7 ms per MB);
one regular expression of their alternatives measured ~95 ms per MB. The whole, with the shapes and a
tokens file: ~30 ms per MB (bench/redaction.py).
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple, Protocol
from urllib.parse import quote, quote_plus

MIN_SECRET_CHARS = 8


def marker(name: str) -> str:
    return f"[redacted: {name}]"


class Span(NamedTuple):
    start: int
    end: int
    name: str


class Finder(Protocol):
    def spans(self, text: str) -> Iterable[Span]:
        """Where secrets are in `text` (spans may overlap)."""
        ...


class Redactor:
    """Replaces what its finders find; spans that overlap (two secrets sharing characters) become one
    marker naming both."""

    def __init__(self, finders: Iterable[Finder]) -> None:
        self._finders = tuple(finders)

    def adding(self, secrets: Mapping[str, str]) -> Redactor:
        """This redactor, and the values `secrets` (name → value) too."""
        return Redactor([*self._finders, Values(secrets)]) if secrets else self

    def redact(self, text: str) -> str:
        spans = sorted(span for finder in self._finders for span in finder.spans(text))
        if not spans:
            return text
        pieces: list[str] = []
        done = 0
        for start, end, names in _merged(spans):
            pieces += [text[done:start], marker(", ".join(names))]
            done = end
        pieces.append(text[done:])
        return "".join(pieces)


def _merged(spans: list[Span]) -> Iterator[tuple[int, int, list[str]]]:
    """Sorted spans joined where they overlap, with the names of what they held."""
    start, end, names = spans[0].start, spans[0].end, [spans[0].name]
    for span in spans[1:]:
        if span.start < end:
            end = max(end, span.end)
            if span.name not in names:
                names.append(span.name)
            continue
        yield start, end, names
        start, end, names = span.start, span.end, [span.name]
    yield start, end, names


# ---------------------------------------------------------------------------------------------- values

# Lines that may be one base64 or hex text wrapped (76 characters a line for `base64`, 64 for PEM, 60 for
# `xxd -p`): whole lines of its alphabet, the last one possibly shorter.
_WRAPPED = re.compile(r"^(?:[A-Za-z0-9+/_=-]{16,}\r?\n)+[A-Za-z0-9+/_=-]+$", re.MULTILINE)


class Values:
    """Known secret values (name → value), in every form `encoded_forms` lists."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        forms: dict[str, str] = {}
        for name, value in secrets.items():
            if len(value) >= MIN_SECRET_CHARS:
                for form in encoded_forms(value):
                    forms.setdefault(form, name)
        self._forms = forms

    def spans(self, text: str) -> Iterator[Span]:
        if not self._forms:
            return
        yield from self._found(text)
        for block in _WRAPPED.finditer(text):
            yield from self._across_lines(block.group(), block.start())

    def _found(self, text: str) -> Iterator[Span]:
        for form, name in self._forms.items():
            at = text.find(form)
            while at != -1:
                yield Span(at, at + len(form), name)
                at = text.find(form, at + 1)

    def _across_lines(self, block: str, offset: int) -> Iterator[Span]:
        """Found in `block` read without its line ends, as spans of the text (from `offset`)."""
        lines = block.splitlines(keepends=True)
        starts: list[int] = []  # where each line starts, in the joined block
        origins: list[int] = []  # and in the text
        joined, at = 0, offset
        for line in lines:
            starts.append(joined)
            origins.append(at)
            joined += len(line.rstrip("\r\n"))
            at += len(line)

        def original(index: int) -> int:
            line = bisect.bisect_right(starts, index) - 1
            return origins[line] + index - starts[line]

        for start, end, name in self._found("".join(line.rstrip("\r\n") for line in lines)):
            yield Span(original(start), original(end - 1) + 1, name)


def encoded_forms(value: str) -> set[str]:
    """`value` as itself, reversed, in hex, URL-encoded and in base64 (see the module's docstring)."""
    data = value.encode()
    forms = {value, value[::-1], data.hex(), data.hex().upper(), quote(value, safe=""), quote_plus(value)}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms.add(encode(data).decode())  # the whole of `echo -n "$KEY" | base64`, padding included
        forms.update(_base64_cores(data, encode))
    return forms


def _base64_cores(data: bytes, encode: Callable[[bytes], bytes]) -> Iterator[str]:
    """The characters of `data`'s base64 that no neighbouring byte changes, when it starts at each of the
    three positions of a 3-byte group."""
    for before in range(3):
        encoded = encode(bytes(before) + data).decode()
        first = -(-8 * before // 6)  # the first character without bits of the bytes before
        last = 8 * (before + len(data)) // 6  # the characters made of the data's bits alone end here
        yield encoded[first:last]


# ---------------------------------------------------------------------------------------------- shapes

# The value of a token-like secret: base64, hex, JWT and the like; never `$`, `{`, `(`, a space or a quote.
_TOKEN = r"[A-Za-z0-9._~+/=-]{16,}"


@dataclass(frozen=True)
class Shape:
    """A credential recognised by its form. Its pattern is tried only where one of its keywords starts
    (found with `str.find`, lower case when `ignore_case`; a regular expression scanning every position
    measured ten times slower), and must match from there; what its group `secret` holds is replaced."""

    name: str
    keywords: tuple[str, ...]
    pattern: re.Pattern[str]

    @property
    def ignore_case(self) -> bool:
        return bool(self.pattern.flags & re.IGNORECASE)


SHAPES = (
    Shape(
        "AWS access key id",
        ("AKIA", "ASIA"),
        re.compile(r"(?<![A-Za-z0-9])(?P<secret>A[KS]IA[A-Z0-9]{16})(?![A-Za-z0-9])"),
    ),
    # `aws_secret_access_key = …` (~/.aws/credentials), "SecretAccessKey": "…" (aws sts), the session token,
    # alicloud's `access_key_secret`; the value's alphabet leaves out `.`, so `var.secret_key` is no secret
    Shape(
        "secret key",
        ("secret", "session", "access"),
        re.compile(
            r"(?:secret_?access_?key|session_?token|access_?key_?secret)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9/+=]{16,})(?![A-Za-z0-9/+=._-])",
            re.IGNORECASE,
        ),
    ),
    # a PEM private key, raw or inside JSON ("private_key": "-----BEGIN PRIVATE KEY-----\nMII…"), also cut short
    Shape(
        "private key",
        ("-----BEGIN ",),
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?P<secret>[A-Za-z0-9+/=\s\\:,.-]*?)"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|(?=[^A-Za-z0-9+/=\s\\:,.-])|\Z)"
        ),
    ),
    # kubeconfig: a user's `token:` and `client-key-data:`, an auth provider's `id-token:`, `refresh-token:`…
    # (YAML, or JSON); `token = (sensitive value)` in a plan is not one
    Shape(
        "kubeconfig credential",
        ("token", "client-key-data"),
        re.compile(rf"(?<![A-Za-z0-9_])(?:token|client-key-data)[\"']?[ \t]*:[ \t]*[\"']?(?P<secret>{_TOKEN})"),
    ),
    # `Authorization: Bearer …` and a bearer token anywhere else (curl -v, a debug log)
    Shape("bearer token", ("bearer",), re.compile(rf"(?<![A-Za-z0-9])bearer[ \t]+(?P<secret>{_TOKEN})", re.I)),
)


class Shapes:
    def __init__(self, shapes: Iterable[Shape] = SHAPES) -> None:
        self._shapes = tuple(shapes)

    def spans(self, text: str) -> Iterator[Span]:
        lowered = text.lower()
        if len(lowered) != len(text):  # a character whose lower case is longer: positions would differ
            lowered = "".join(c if len(c.lower()) > 1 else c.lower() for c in text)
        for shape in self._shapes:
            haystack = lowered if shape.ignore_case else text
            for keyword in shape.keywords:
                at = haystack.find(keyword)
                while at != -1:
                    found = shape.pattern.match(text, at)
                    if found is not None and found.end("secret") > found.start("secret"):
                        yield Span(found.start("secret"), found.end("secret"), shape.name)
                    at = haystack.find(keyword, at + 1)


# ---------------------------------------------------------------------------------------------- digests

# A token of the URL-safe alphabet standing alone (`secrets.token_urlsafe` makes them)
_URLSAFE_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,}")  # leftmost and greedy: a whole run of the alphabet


class Digested:
    """Tokens known only by their SHA-256 hex digests (the HTTP tokens file keeps nothing else): a token of
    the URL-safe alphabet standing alone is hashed and compared. Only the token itself is found: an
    encoding cannot be made from a digest."""

    def __init__(self, name: str, digests: Callable[[], Collection[str]]) -> None:
        self._name = name
        self._digests = digests  # asked at each redaction: the file changes while the server runs

    def spans(self, text: str) -> Iterator[Span]:
        digests = self._digests()
        if not digests:
            return
        for found in _URLSAFE_TOKEN.finditer(text):
            if hashlib.sha256(found.group().encode()).hexdigest() in digests:
                yield Span(found.start(), found.end(), self._name)
