"""The outbound policy: which addresses a pipeline of a user who is not an administrator may reach,
by URL (when it is saved) and by address (when a connection opens)."""

import ipaddress

import pytest

from rag.clients.outbound import REFUSED, OutboundPolicy

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8301/", "http://10.0.0.5/v1", "http://[::1]:8080/v1", "http://169.254.169.254/",
    "http://[::ffff:127.0.0.1]/", "http://0.0.0.0:8000/", "http://no-such-host.invalid/v1",
])
def test_private_addresses_and_names_that_resolve_nowhere_get_one_sentence(url):
    assert OutboundPolicy([]).problem(url) == REFUSED


def test_a_public_address_passes():
    assert OutboundPolicy([]).problem("https://93.184.216.34/v1") is None


def test_entries_allow_a_host_a_host_and_port_an_address_or_a_network():
    policy = OutboundPolicy(["llm.internal", "127.0.0.1:8301", "[::1]:8080", "10.0.0.0/8"])
    assert policy.problem("http://llm.internal:9999/v1") is None  # by name: any port
    assert policy.problem("http://127.0.0.1:8301/v1") is None
    assert policy.problem("http://127.0.0.1:8302/v1") == REFUSED  # another port
    assert policy.problem("http://[::1]:8080/v1") is None
    assert policy.problem("http://10.20.30.40/v1") is None


def test_addresses_are_checked_with_their_port_and_none_at_all_is_refused():
    policy = OutboundPolicy(["127.0.0.1:8301"])
    loopback = ipaddress.ip_address("127.0.0.1")
    assert policy.allowed_addresses([loopback], 8301)
    assert not policy.allowed_addresses([loopback], 8302)
    assert not policy.allowed_addresses([], 8301)
    # Every address a name resolves to must be allowed, not just one of them.
    assert not policy.allowed_addresses([ipaddress.ip_address("93.184.216.34"), loopback], 80)
