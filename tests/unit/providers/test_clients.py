import asyncio
import ssl

from iac_code.providers.clients import lent_client, tls_context


def test_a_request_borrows_an_idle_client_or_a_new_one_per_key_and_event_loop():
    made = []

    def make():
        made.append(object())
        return made[-1]

    async def requests():
        with lent_client("k", make) as first:
            with lent_client("k", make) as concurrent, lent_client("other", make) as other:
                pass
        with lent_client("k", make) as later:
            pass
        return first, concurrent, other, later

    first, concurrent, other, later = asyncio.run(requests())
    assert concurrent is not first, "a client in use is never lent twice"
    assert other not in (first, concurrent), "another endpoint or option set gets its own clients"
    assert later is first, "the client returned last is lent first: its connection is the likeliest open"
    (fresh, _, _, _) = asyncio.run(requests())
    assert fresh not in (first, concurrent), "a new event loop gets its own clients (connections belong to a loop)"
    assert len(made) == 6


def test_every_client_verifies_with_one_tls_context():
    context = tls_context()
    assert context is tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
