"""The redactor: each form of a known value, at every base64 alignment, wrapped over lines, overlapping
secrets, short values left alone, big outputs; the credential shapes, and ordinary Terraform left as it is."""

from __future__ import annotations

import base64
import hashlib
import random
from pathlib import Path
from urllib.parse import quote

import pytest

from iac_code.redaction import SHAPES, Digested, Redactor, Shapes, Values, encoded_forms, marker

FIXTURES = Path(__file__).parents[1] / "fixtures"
KEY = "sk-live-Q2hhbmdlTWUxMjM0NTY3ODkw"
# its base64 holds `+` and `/` (">>>" and "???"), so the standard and URL-safe forms differ
SYMBOLS = "key>>>???~~~0123"


def values(**secrets: str) -> Redactor:
    return Redactor([Values(secrets)])


def test_the_value_itself_is_replaced_by_its_name_wherever_it_is():
    text = f"OPENAI_API_KEY={KEY}\nagain: {KEY}{KEY}."
    assert values(OPENAI_API_KEY=KEY).redact(text) == (
        "OPENAI_API_KEY=[redacted: OPENAI_API_KEY]\nagain: [redacted: OPENAI_API_KEY][redacted: OPENAI_API_KEY]."
    )


@pytest.mark.parametrize(
    "form",
    [
        pytest.param(KEY[::-1], id="reversed"),
        pytest.param(KEY.encode().hex(), id="hex"),
        pytest.param(KEY.encode().hex().upper(), id="HEX"),
        pytest.param(quote(SYMBOLS, safe=""), id="url-encoded"),
        pytest.param(base64.b64encode(SYMBOLS.encode()).decode(), id="base64"),
        pytest.param(base64.urlsafe_b64encode(SYMBOLS.encode()).decode(), id="base64-url-safe"),
    ],
)
def test_each_encoding_is_replaced(form):
    assert form not in (KEY, SYMBOLS)
    redactor = values(A=KEY, B=SYMBOLS)
    assert redactor.redact(f"<{form}>") in ("<[redacted: A]>", "<[redacted: B]>")


def test_the_standard_and_url_safe_base64_differ_for_the_symbols_value():
    standard, url_safe = base64.b64encode(SYMBOLS.encode()), base64.urlsafe_b64encode(SYMBOLS.encode())
    assert b"+" in standard and b"/" in standard and standard != url_safe


@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode], ids=["standard", "url-safe"])
@pytest.mark.parametrize("before", range(7))
@pytest.mark.parametrize("after", range(4))
def test_inside_a_base64_blob_only_the_characters_mixing_a_neighbour_are_left(encode, before, after):
    """The value at every alignment: what is left is the blob up to the first character made of the
    value's bits alone, and from the first one after it that holds another byte's (none when the value ends
    the blob from a group's start: its own padded base64 is found whole)."""
    prefix, suffix = random.Random(before).randbytes(before), random.Random(after).randbytes(after)
    data = SYMBOLS.encode()
    blob = encode(prefix + data + suffix).decode()
    first, last = -(-8 * before // 6), 8 * (before + len(data)) // 6
    ends_it_whole = before % 3 == 0 and not after
    expected = f"{blob[:first]}[redacted: B]{'' if ends_it_whole else blob[last:]}"
    assert values(B=SYMBOLS).redact(blob) == expected


def test_base64_and_hex_wrapped_over_lines_are_read_across_the_line_ends():
    for before in range(3):
        data = b"#" * (70 + before) + f"OPENAI_API_KEY={KEY}\n".encode() + b"." * 200
        wrapped_base64 = base64.encodebytes(data).decode()  # 76 characters a line, as `base64` prints
        hex_text = data.hex()
        xxd = "\n".join(hex_text[i : i + 60] for i in range(0, len(hex_text), 60))  # as `xxd -p` prints
        for text in (wrapped_base64, xxd):
            redacted = values(OPENAI_API_KEY=KEY).redact(text)
            assert "[redacted: OPENAI_API_KEY]" in redacted
            assert not any(form in redacted.replace("\n", "") for form in encoded_forms(KEY))


def test_two_secrets_that_overlap_become_one_marker_naming_both():
    first, second = "abcdefgh12345678", "12345678ZYXWVUTS"
    redactor = values(FIRST=first, SECOND=second)
    assert redactor.redact("x abcdefgh12345678ZYXWVUTS y") == "x [redacted: FIRST, SECOND] y"
    assert redactor.redact("x 12345678ZYXWVUTS abcdefgh12345678 y") == "x [redacted: SECOND] [redacted: FIRST] y"


def test_a_value_inside_a_longer_one_is_covered_by_the_longer_marker():
    redactor = values(SHORT="token-1234", LONG="prefix-token-1234-suffix")
    assert redactor.redact("[prefix-token-1234-suffix]") == "[[redacted: LONG, SHORT]]"


def test_values_under_eight_characters_are_not_looked_for():
    redactor = values(SEVEN="abc1234", EIGHT="abc12345")
    assert redactor.redact("abc1234 and abc12345") == "abc1234 and [redacted: EIGHT]"


def test_adding_a_call_s_own_secret_keeps_the_session_s():
    session = values(KEY=KEY)
    with_token = session.adding({"the guard's token": "tok-0123456789abcdef"})
    assert with_token.redact(f"{KEY} tok-0123456789abcdef") == "[redacted: KEY] [redacted: the guard's token]"
    assert session.redact("tok-0123456789abcdef") == "tok-0123456789abcdef"


def test_a_big_output_loses_every_occurrence_and_nothing_else():
    rng = random.Random(36)
    secrets = {f"SECRET_{n}": base64.b64encode(rng.randbytes(30)).decode() for n in range(10)}
    filler = '  + ami = "ami-0c55b159cbfafe1f0"\n' * 1000
    pieces, expected = [], []
    for n in range(150):  # ~5 MB, each secret in a plain or encoded form 15 times
        name = f"SECRET_{n % 10}"
        value = secrets[name]
        form = [value, value[::-1], value.encode().hex(), base64.b64encode(value.encode()).decode()][n % 4]
        pieces += [filler, f"{name}={form}\n"]
        expected += [filler, f"{name}={marker(name)}\n"]
    text = "".join(pieces)
    assert len(text) > 5_000_000
    assert values(**secrets).redact(text) == "".join(expected)


# ------------------------------------------------------------------------------------------------ shapes

SHAPED = {
    "AWS access key id": (
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_access_key_id = [redacted: AWS access key id]",
    ),
    "session key id": ('"AccessKeyId": "ASIAY34FZKBOKMUTVV7A",', '"AccessKeyId": "[redacted: AWS access key id]",'),
    "credentials file": (
        "[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        "[default]\naws_secret_access_key = [redacted: secret key]\n",
    ),
    "sts output": (
        '"SecretAccessKey": "9drTJvcXLB89EXAMPLELB8923FB892xMFI",\n"SessionToken": "AQoXdzELDDY//////////wEaoAK1EXAMPLE"',
        '"SecretAccessKey": "[redacted: secret key]",\n"SessionToken": "[redacted: secret key]"',
    ),
    "environment": (
        "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "export AWS_SECRET_ACCESS_KEY=[redacted: secret key]",
    ),
    "alicloud": (
        '"access_key_secret": "abcdefghijklmnopqrstuvwxyz1234"',
        '"access_key_secret": "[redacted: secret key]"',
    ),
    "service account": (
        '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\nBKcwggSjAgEAAoIBAQC7\\n'
        '-----END PRIVATE KEY-----\\n", "client_email": "ci@p.iam.gserviceaccount.com"',
        '"private_key": "-----BEGIN PRIVATE KEY-----[redacted: private key]-----END PRIVATE KEY-----\\n", '
        '"client_email": "ci@p.iam.gserviceaccount.com"',
    ),
    "PEM file": (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
        "-----END OPENSSH PRIVATE KEY-----\nnext line",
        "-----BEGIN OPENSSH PRIVATE KEY-----[redacted: private key]-----END OPENSSH PRIVATE KEY-----\nnext line",
    ),
    "PEM cut short": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n\n[... 4,000 bytes of output cut ...]",
        "-----BEGIN RSA PRIVATE KEY-----[redacted: private key][... 4,000 bytes of output cut ...]",
    ),
    "kubeconfig": (
        "users:\n- name: ci\n  user:\n    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJzdWIiOiJjaSJ9.c2ln\n"
        "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=\n",
        "users:\n- name: ci\n  user:\n    token: [redacted: kubeconfig credential]\n"
        "    client-key-data: [redacted: kubeconfig credential]\n",
    ),
    "auth provider": (
        "        id-token: eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwcyJ9.abc",
        "        id-token: [redacted: kubeconfig credential]",
    ),
    "curl -v": (
        "> Authorization: Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a\n> Accept: */*",
        "> Authorization: Bearer [redacted: bearer token]\n> Accept: */*",
    ),
}


@pytest.mark.parametrize(("text", "expected"), list(SHAPED.values()), ids=list(SHAPED))
def test_credential_shapes_are_redacted(text, expected):
    assert Redactor([Shapes()]).redact(text) == expected


def test_every_shape_is_tested():
    expected = "".join(redacted for _, redacted in SHAPED.values())
    assert [shape.name for shape in SHAPES if marker(shape.name) not in expected] == []


PLAN_TEXT = """\
Terraform used the selected providers to generate the following execution plan. Resource actions are
indicated with the following symbols:
  + create
  ~ update in-place

Terraform will perform the following actions:

  # aws_iam_access_key.ci will be created
  + resource "aws_iam_access_key" "ci" {
      + create_date                    = (known after apply)
      + encrypted_secret               = (known after apply)
      + id                             = (known after apply)
      + secret                         = (sensitive value)
      + ses_smtp_password_v4           = (sensitive value)
      + status                         = "Active"
      + user                           = "ci-deployer"
    }

  # kubernetes_secret.registry will be updated in-place
  ~ resource "kubernetes_secret" "registry" {
      ~ data = (sensitive value)
        id   = "default/registry-credentials"
        # (2 unchanged attributes hidden)
    }

  # aws_instance.web will be created
  + resource "aws_instance" "web" {
      + ami                          = "ami-0c55b159cbfafe1f0"
      + arn                          = (known after apply)
      + iam_instance_profile         = "arn:aws:iam::123456789012:instance-profile/web-access-token-reader"
      + instance_type                = "t3.micro"
      + user_data                    = "8a8f2b8e0b3f3c6b2d5c0e4a1f9e7d6c5b4a3f2e"
      + tags                         = {
          + "Name" = "web-session-token-test"
        }
    }

Plan: 2 to add, 1 to change, 0 to destroy.

Changes to Outputs:
  + access_key_id     = (known after apply)
  + secret_access_key = (sensitive value)
  + token             = (sensitive value)
"""

HCL = """\
provider "aws" {
  region     = var.region
  access_key = var.access_key
  secret_key = var.secret_key
  token      = var.session_token
}

provider "alicloud" {
  access_key        = var.alicloud_access_key
  access_key_secret = var.alicloud_access_key_secret
}

provider "kubernetes" {
  host                   = data.aws_eks_cluster.main.endpoint
  token                  = data.aws_eks_cluster_auth.main.token
  cluster_ca_certificate = base64decode(data.aws_eks_cluster.main.certificate_authority[0].data)
  client_key             = base64decode(var.client_key_data)
}

variable "session_token" {
  type      = string
  sensitive = true
}

resource "aws_secretsmanager_secret_version" "api" {
  secret_id     = aws_secretsmanager_secret.api.id
  secret_string = jsonencode({ authorization = "Bearer ${var.api_token}" })
}
"""


def ordinary_terraform() -> list[str]:
    files = [*(FIXTURES / "iac" / "terraform").rglob("*.tf"), *(FIXTURES / "terraform_plans").glob("*.json")]
    return [PLAN_TEXT, HCL, *(path.read_text() for path in files)]


def test_ordinary_terraform_output_and_files_are_left_as_they_are():
    redactor = Redactor([Shapes(), Values({"OPENAI_API_KEY": KEY})])
    texts = ordinary_terraform()
    assert len(texts) > 6
    for text in texts:
        assert redactor.redact(text) == text


def test_tokens_known_by_their_digest_are_found_when_they_stand_alone():
    token = "n8Q0aZsVt2pGqkM5Jx1yRb7cWd3eHf9LiOu4oTl6Y_-"
    redactor = Redactor([Digested("a tokens file token", lambda: {hashlib.sha256(token.encode()).hexdigest()})])
    assert redactor.redact(
        f"Authorization: {token}\n{token}x"
    ) == "Authorization: [redacted: a tokens file token]\n" + (f"{token}x")
