"""Where a webhook may be sent: the checks of its URL and of every address its host stands for.

Players register a webhook URL that the server POSTs signed notifications to, from inside our
network: unchecked, a player could aim it at what only we reach (Redis, the cloud metadata at
169.254.169.254, an admin page on loopback) and use us as a proxy (server-side request
forgery). So a target must be an http(s) URL whose host resolves only to public addresses,
judged by `check_url` (`checked_url` in the event loop) when it is set and again for each
connection made to send it (`workers.webhook_sending`), as DNS answers change. The sender
resolves once and connects to a checked address itself, so no second lookup can slip in
another answer (DNS rebinding). Lookups are bounded in time and threads
(`outbound.lookups`). The operator may allow networks despite the rules
(`PATRICIAN_WEBHOOK_ALLOW`, say for a sink on loopback in tests).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

from outbound.lookups import Busy, lookup

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], list[str]]
"""host, port -> IP address strings, as `getaddrinfo` gives them: [] or `socket.gaierror` with
`EAI_NONAME` or `EAI_NODATA` for a name with no address, another OSError for a failure of the
name servers (`EAI_AGAIN` and the like)."""

MAX_URL_LENGTH = 2048

LOOKUP_SECONDS = 5.0
"""The longest a host's name lookup is waited for where no shorter time is given (the system's
resolver may keep trying for half a minute: `outbound.lookups`)."""

# Ranges that are not public but that Python 3.11's `is_global` tables (older than the IANA
# registries) still call global; multicast is checked on its own.
_ALSO_NOT_PUBLIC: tuple[Network, ...] = tuple(
    ipaddress.ip_network(n) for n in ("192.0.0.0/24", "fec0::/10", "3fff::/20", "5f00::/16")
)
_SHARED = ipaddress.ip_network("100.64.0.0/10")
# NAT64 and the old IPv4-compatible form keep an IPv4 address in their last 32 bits.
_LAST_32_BITS_IPV4 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("::/96"))


class _Reasoned(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TargetRefused(_Reasoned, ValueError):
    """A webhook target that may not be used; `reason` says why in a sentence a player
    understands."""


class DeliveryFailed(_Reasoned):
    """A permitted target that could not be reached or did not answer in time (worth trying
    again later, unlike `TargetRefused`); `reason` says which."""


class LookupFailed(DeliveryFailed):
    """The host's name could not be looked up just now: no answer within the lookup's time, no
    lookup thread free, or a failure of the name servers. Not a verdict on the target: a
    delivery is tried again later, and a URL being set is refused with the advice to try
    again."""


class LookupBusy(LookupFailed):
    """Every lookup thread of this process was taken (`outbound.lookups`): this server's
    state, not the target's failure (a delivery does not count it toward turning a webhook
    off)."""


@dataclass(frozen=True)
class Allowlist:
    """Networks the operator allows despite the rules."""

    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Allowlist:
        """`PATRICIAN_WEBHOOK_ALLOW`: IPs or CIDR networks separated by commas or spaces."""
        networks = []
        for item in text.replace(",", " ").split():
            try:
                networks.append(ipaddress.ip_network(item))
            except ValueError as exc:
                raise ValueError(f"not an IP address or network: {item!r} ({exc})") from None
        return cls(tuple(networks))

    def allows(self, address: IPAddress) -> bool:
        # ::ffff:a.b.c.d reaches a.b.c.d on a dual-stack socket, so it is allowed with it.
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        return any(a in n for n in self.networks for a in (address, mapped) if a is not None)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    # Mapped, compatible, 6to4, NAT64: the IPv4 address is what is reached in the end.
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if any(address in n for n in _LAST_32_BITS_IPV4) and int(address) > 1:  # not :: or ::1
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _not_public(address: IPAddress) -> str | None:
    """Why `address` is not a public internet address, or None if it is."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return _not_public(embedded)
    for kind, flag in (
        ("an unspecified address", address.is_unspecified),
        ("a loopback address", address.is_loopback),
        ("a link-local address", address.is_link_local),
        ("a multicast address", address.is_multicast),
        ("a shared (carrier-grade NAT) address", address in _SHARED),
        ("a reserved address", address.is_reserved),
        ("a private address", address.is_private),
    ):
        if flag:
            return kind
    if not address.is_global or any(address in n for n in _ALSO_NOT_PUBLIC):
        return "not a public address"
    return None


def _literal(host: str) -> IPAddress | None:
    """The address `host` spells, in any form `getaddrinfo` would take (`127.1`, `0x7f.1`,
    `2130706433`, the inet_aton forms): judged as the address, never as a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def system_resolve(host: str, port: int) -> list[str]:
    """The default `Resolver`: every TCP address the system resolver gives."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # ASCII: IDNA-encoded name or IP literal (no brackets)
    port: int
    target: str  # path and query
    host_header: str


def parse_target(url: str) -> Target:
    """The checks that need no lookup: scheme, host, no user:password, length, characters."""
    if len(url) > MAX_URL_LENGTH:
        raise TargetRefused(f"The webhook URL is longer than {MAX_URL_LENGTH} characters.")
    # Whitespace and control characters would be dropped or split requests differently by
    # different parsers; a backslash counts as a slash for browsers but not for urllib.
    if any(c <= " " or c in {"\x7f", "\\"} for c in url):
        raise TargetRefused("The webhook URL contains spaces, control characters or '\\'.")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        raise TargetRefused("The webhook URL is not a valid URL.") from None
    if parts.scheme not in ("http", "https"):
        raise TargetRefused("The webhook URL must start with http:// or https://.")
    if "@" in parts.netloc:
        raise TargetRefused("The webhook URL may not contain a user name or password.")
    host = parts.hostname or ""
    if not host:
        raise TargetRefused("The webhook URL has no host name.")
    try:  # IP literals are ASCII, which the codec leaves alone
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise TargetRefused(f"The webhook host {host!r} is not a valid host name.") from None
    default = 443 if parts.scheme == "https" else 80
    bracketed = f"[{host}]" if ":" in host else host
    host_header = bracketed if port in (None, default) else f"{bracketed}:{port}"
    # Non-ASCII path characters are percent-encoded; escapes already there are kept.
    target = urllib.parse.quote(parts.path or "/", safe="/%:@!$&'()*+,;=~")
    if parts.query:
        target += "?" + urllib.parse.quote(parts.query, safe="/%:@!$&'()*+,;=~?")
    return Target(parts.scheme, host, port or default, target, host_header)


def _unanswered(host: str, seconds: float, error: Busy | OSError) -> list[str]:
    """What a lookup that ended in `error` tells: no address ([]) for a name that does not
    exist, else LookupFailed (no answer in time, no lookup thread free, a failure of the name
    servers: none of them a verdict on the name)."""
    if isinstance(error, Busy):
        raise LookupBusy(
            f"The webhook host {host} could not be looked up now (too many look-ups under way "
            "on this server): try again later."
        ) from None
    if isinstance(error, TimeoutError):
        raise LookupFailed(
            f"The webhook host {host} could not be looked up within {seconds:g} s: try again later."
        ) from None
    no_such_name = (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME))
    if isinstance(error, socket.gaierror) and error.errno in no_such_name:
        return []
    raise LookupFailed(
        f"The webhook host {host} could not be looked up just now (a failure of the name "
        "servers): try again later."
    ) from None


def _judged(host: str, answers: list[str], allow: Allowlist) -> list[str]:
    """The addresses of `answers`, each public or allowed; else TargetRefused."""
    if not answers:
        raise TargetRefused(f"The webhook host {host} does not resolve to any address.")
    addresses = []
    for answer in answers:
        try:
            address = ipaddress.ip_address(answer)
        except ValueError:
            raise TargetRefused(f"The webhook host {host} resolves to {answer!r}.") from None
        why = _not_public(address)
        if why is not None and not allow.allows(address):
            shown = host if host == str(address) else f"{host} resolves to {address}, which"
            raise TargetRefused(
                f"The webhook host {shown} is {why}: only public internet addresses may be used."
            )
        addresses.append(str(address))
    return list(dict.fromkeys(addresses))


def checked_addresses(
    host: str, port: int, allow: Allowlist, resolve: Resolver, seconds: float = LOOKUP_SECONDS
) -> list[str]:
    """Every address `host` stands for, each public or allowed; else TargetRefused, or
    LookupFailed when its name could not be looked up within `seconds`."""
    literal = _literal(host)
    if literal is not None:
        return _judged(host, [str(literal)], allow)
    try:
        answers = lookup(resolve, host, port).result(seconds)
    except (Busy, OSError) as error:  # TimeoutError is an OSError
        answers = _unanswered(host, seconds, error)
    return _judged(host, answers, allow)


async def checked_url(
    url: str, allow: Allowlist, resolve: Resolver = system_resolve, seconds: float = LOOKUP_SECONDS
) -> None:
    """`check_url` for the event loop: it waits for the lookup without holding a thread."""
    target = parse_target(url)
    literal = _literal(target.host)
    if literal is not None:
        _judged(target.host, [str(literal)], allow)
        return
    try:
        started = lookup(resolve, target.host, target.port)
        answers = await asyncio.wait_for(asyncio.wrap_future(started), seconds)
    except (Busy, OSError) as error:
        answers = _unanswered(target.host, seconds, error)
    _judged(target.host, answers, allow)


def check_url(url: str, allow: Allowlist, resolve: Resolver = system_resolve) -> None:
    """At set time: refuse (TargetRefused) unless the scheme is http or https, a host is
    present, there is no user:password part, the URL is at most 2048 characters, and EVERY
    address the host resolves to is public (or allowlisted). A host that does not resolve is
    refused too; one whose name cannot be looked up just now raises LookupFailed."""
    target = parse_target(url)
    checked_addresses(target.host, target.port, allow, resolve)
