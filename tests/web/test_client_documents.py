"""Client ID Metadata Documents: fetched from public addresses only, checked, kept a while.

The fetch is the server reaching out to an address a stranger chose, so it is
tried as an attacker would: every address of a private, loopback, link-local,
reserved or multicast network is refused (IPv4, IPv6 and IPv4 written in
IPv6), a real HTTPS server on loopback is refused unless the server's own
address is loopback, and so is a name (`localhost`) that resolves there. Any
address a client_id may not be, and any document that does not name itself
or carries a secret, is refused with a sentence.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_server import Answer, Documents, serving
from hypothesis import given
from hypothesis import strategies as st

from pasture.platform.auth.client_documents import (
    ClientDocuments,
    DocumentRefused,
    _public,
    check_address,
    client_of,
)

NOT_PUBLIC = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "::1/128",
    "fc00::/7",
    "64:ff9b::/96",
    "2002::/16",
    "2001::/32",
    "fe80::/10",
    "ff00::/8",
    "::ffff:10.0.0.0/104",
    "::ffff:127.0.0.0/104",
    "::ffff:192.168.0.0/112",
]


@st.composite
def address_in(draw: st.DrawFn, network: str) -> str:
    net = ipaddress.ip_network(network)
    offset = draw(st.integers(0, net.num_addresses - 1))
    return str(net.network_address + offset)


@given(st.sampled_from(NOT_PUBLIC).flatmap(address_in))
def test_no_address_of_a_private_or_special_network_is_fetched_from(address: str) -> None:
    assert not _public(address, loopback=False)


@given(st.sampled_from(["127.0.0.0/8", "::1/128", "::ffff:127.0.0.0/104"]).flatmap(address_in))
def test_loopback_only_when_the_server_itself_is_on_loopback(address: str) -> None:
    assert _public(address, loopback=True)
    assert not _public(address, loopback=False)


def test_public_addresses_are_fetched_from() -> None:
    for address in ("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "1.1.1.1"):
        assert _public(address, loopback=False)


SAFE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)


@given(
    st.one_of(
        st.builds("http://{}.example/{}.json".format, SAFE, SAFE),
        st.builds("https://{}:pw@{}.example/c.json".format, SAFE, SAFE),
        st.builds("https://{}@{}.example/c.json".format, SAFE, SAFE),
        st.builds("https://{}.example/c.json#{}".format, SAFE, SAFE),
        st.builds("https://{}.example".format, SAFE),
        st.builds("https://{}.example/".format, SAFE),
        st.builds("https://{}.example/a/../{}".format, SAFE, SAFE),
        st.builds("ftp://{}.example/{}".format, SAFE, SAFE),
    )
)
def test_an_address_a_client_id_may_not_be_is_refused_with_a_sentence(address: str) -> None:
    with pytest.raises(DocumentRefused) as refused:
        check_address(address)
    assert refused.value.sentence.startswith("the client ")
    assert "cannot be used: " in refused.value.sentence


@given(SAFE, SAFE)
def test_a_good_address_is_its_host_and_port(host: str, path: str) -> None:
    assert check_address(f"https://{host}.example/{path}") == (f"{host}.example", 443)
    assert check_address(f"https://{host}.example:8443/{path}") == (f"{host}.example", 8443)


URL = "https://agent.example/client.json"
GOOD = {"client_id": URL, "client_name": "Agent", "redirect_uris": ["http://127.0.0.1:9/cb"]}


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({**GOOD, "client_id": "https://other.example/c.json"}, "exactly the address"),
        ({k: v for k, v in GOOD.items() if k != "client_id"}, "exactly the address"),
        ({**GOOD, "client_secret": "s"}, "no client_secret"),
        ({**GOOD, "token_endpoint_auth_method": "client_secret_basic"}, "public clients"),
        ({**GOOD, "redirect_uris": []}, "redirect_uris"),
        ({**GOOD, "redirect_uris": "http://127.0.0.1:9/cb"}, "redirect_uris"),
        ({**GOOD, "redirect_uris": ["not an address"]}, "is not valid"),
        ([GOOD], "not a JSON object"),
    ],
)
def test_a_document_that_does_not_hold_is_refused(document: object, says: str) -> None:
    with pytest.raises(DocumentRefused) as refused:
        client_of(URL, json.dumps(document).encode())
    assert says in refused.value.sentence


@given(st.binary(max_size=200))
def test_any_bytes_are_a_client_or_a_sentence(body: bytes) -> None:
    try:
        client = client_of(URL, body)
    except DocumentRefused as e:
        assert e.sentence.startswith(f"the client {URL} cannot be used: ")
    else:
        assert client.client_id == URL and client.token_endpoint_auth_method == "none"


def test_a_good_document_is_a_public_client() -> None:
    client = client_of(URL, json.dumps(GOOD).encode())
    assert client.client_id == URL and client.client_name == "Agent"
    assert client.token_endpoint_auth_method == "none" and client.client_secret is None


# -- real fetches, from a real HTTPS server on loopback -----------------------------------------
@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Documents]:
    with serving(tmp_path) as running:
        monkeypatch.setenv("SSL_CERT_FILE", str(running.ca_file))
        yield running


def test_a_document_is_fetched_checked_and_kept(docs: Documents) -> None:
    url = docs.document("/agent.json", client_name="Agent", redirect_uris=["http://127.0.0.1:9/cb"])
    documents = ClientDocuments(loopback=True)
    assert documents.fetch(url).client_name == "Agent"
    assert documents.fetch(url).client_name == "Agent"
    assert docs.asked == ["/agent.json"]  # kept: fetched once


def test_max_age_says_how_long_it_is_kept(docs: Documents) -> None:
    url = docs.document("/agent.json", redirect_uris=["http://127.0.0.1:9/cb"])
    docs.answers["/agent.json"].headers["Cache-Control"] = "max-age=0"
    documents = ClientDocuments(loopback=True)
    documents.fetch(url)
    assert documents.kept(url) is not None  # a minute at least, whatever it says


def test_loopback_is_refused_unless_the_server_is_there(docs: Documents) -> None:
    url = docs.document("/agent.json", redirect_uris=["http://127.0.0.1:9/cb"])
    by_name = url.replace("127.0.0.1", "localhost")
    for address in (url, by_name):
        with pytest.raises(DocumentRefused) as refused:
            ClientDocuments(loopback=False).fetch(address)
        assert "is not a public address" in refused.value.sentence
    assert docs.asked == []  # nothing was even asked


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (Answer(302, b"", {"Location": "https://127.0.0.1:1/x.json"}), "answered 302"),
        (Answer(404, b"{}"), "answered 404"),
        (Answer(200, b"x" * (17 * 1024)), "over 16 KiB"),
        (Answer(200, b"<html>"), "not JSON"),
    ],
)
def test_what_a_document_server_answers_wrongly_is_a_sentence(
    docs: Documents, answer: Answer, says: str
) -> None:
    docs.answers["/agent.json"] = answer
    with pytest.raises(DocumentRefused) as refused:
        ClientDocuments(loopback=True).fetch(docs.url("/agent.json"))
    assert says in refused.value.sentence


def test_a_server_not_there_or_not_trusted_is_a_sentence(
    docs: Documents, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = docs.document("/agent.json", redirect_uris=["http://127.0.0.1:9/cb"])
    gone = ClientDocuments(loopback=True)
    with pytest.raises(DocumentRefused) as refused:
        gone.fetch("https://127.0.0.1:1/agent.json")
    assert "could not be fetched from 127.0.0.1" in refused.value.sentence
    monkeypatch.delenv("SSL_CERT_FILE")  # the test's authority is no longer trusted
    with pytest.raises(DocumentRefused) as refused:
        ClientDocuments(loopback=True).fetch(url)
    assert "valid certificate" in refused.value.sentence
