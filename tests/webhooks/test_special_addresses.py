"""A subscription's host is refused when it resolves to an address the IANA special-purpose
address registries (IPv4 and IPv6) mark "Globally Reachable: False", whatever this Python's
`ipaddress` tables say (3.11's lag the registries: they take the IPv4 dummy address 192.0.0.8
for a global one), and accepted when the registries mark it globally reachable (192.0.0.9, a
PCP anycast address, which the same tables take for a private one in IPv6's 2001:1::1).
The host's name resolves to the address through a patched getaddrinfo, as DNS would."""

from __future__ import annotations

import socket

import pytest

from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

HOST = "target.hooks.test"


@pytest.fixture
def resolves_to(settings, monkeypatch):
    """`HOST` resolves to the address given; private targets are refused (production)."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False

    def point(address: str) -> None:
        def fake(host, port, *args, **kwargs):
            assert host == HOST, host
            if ":" in address:
                return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))]
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

        monkeypatch.setattr(socket, "getaddrinfo", fake)

    return point


@pytest.mark.parametrize(
    "address",
    [
        "192.0.0.8",  # IPv4 dummy address (RFC 7600)
        "192.0.0.100",  # IETF protocol assignments, no more specific entry (RFC 6890)
        "192.0.0.255",
        "192.0.0.171",  # NAT64/DNS64 discovery (RFC 8880)
        "0.1.2.3",  # "this network"
        "198.18.0.1",  # benchmarking
        "203.0.113.7",  # documentation
        "255.255.255.255",
        "3fff::1",  # IPv6 documentation (RFC 9637)
        "5f00::1",  # SRv6 SIDs (RFC 9602)
        "100::1",  # discard-only
        "100:0:0:1::1",  # dummy IPv6 prefix (RFC 9780)
        "64:ff9b:1::1",  # local-use IPv4/IPv6 translation (RFC 8215)
        "2001:2::1",  # benchmarking
        "2001:db8::1",
        "2001::1",  # Teredo: not "globally reachable: true"; it wraps an IPv4 address
        "fd00::1",
    ],
)
def test_an_address_not_globally_reachable_is_refused(api, resolves_to, address):
    resolves_to(address)
    refused = api.post("/v1/webhooks", {"url": f"https://{HOST}/hook"}, format="json")
    assert [(e["field"], e["message"]) for e in assert_problem(refused, 400)["errors"]] == [
        ("url", "The host resolves to a private, loopback, link-local or multicast address.")
    ], address


@pytest.mark.parametrize(
    "address",
    [
        "192.0.0.9",  # Port Control Protocol anycast (RFC 7723)
        "192.0.0.10",  # TURN anycast (RFC 8155)
        "192.31.196.1",  # AS112-v4
        "192.175.48.1",  # AS112 direct delegation
        "2001:1::1",  # PCP anycast
        "2001:1::2",  # TURN anycast
        "2001:1::3",  # DNS-SD service registration protocol anycast (RFC 9665)
        "2001:3::1",  # AMT
        "2001:4:112::1",  # AS112-v6
        "2001:20::1",  # ORCHIDv2
        "2620:4f:8000::1",  # AS112 direct delegation
        "93.184.216.34",
        "64:ff9b::5db8:d822",  # NAT64 of 93.184.216.34
    ],
)
def test_a_globally_reachable_special_purpose_address_is_accepted(api, resolves_to, address):
    resolves_to(address)
    created = api.post("/v1/webhooks", {"url": f"https://{HOST}/hook"}, format="json")
    assert created.status_code == 201, (address, created.content)
