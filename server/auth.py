"""Authentication on the MySQL and HTTP ports, against the accounts of `catalog/auth.py`.

MySQL port: mysql-mimic drives the handshake through an `IdentityProvider`; `DorisIdentity` is
made per connection (it knows the client's address and session) and offers one plugin,
`mysql_native_password`, whose check is Doris's: the account is the user name plus the most
specific host pattern matching the client's address, the scramble is verified against the
stored double SHA-1 (the clear password never reaches the server), and a failure answers 1045
`Access denied for user 'u@ip' (using password: YES|NO)`; the connection is then closed
(`DorisConnection`). A login over the connection limits (`qe_max_connection` for the server,
the user's `max_user_connections` property) is refused with 1203.

HTTP port: `login_basic` checks an `Authorization: Basic` header's user and password the same
way and returns the user's `Access` (Stream Load then needs LOAD_PRIV on its table).

On success the session gets `access` (catalog/access.py) and `username`.
"""

from __future__ import annotations

import asyncio

import base64
import hashlib
import hmac
from typing import Optional, Sequence

from mysql_mimic.auth import (AuthInfo, AuthPlugin, AuthState, Forbidden, IdentityProvider,
                              NativePasswordAuthPlugin, Success, User as MimicUser)
from mysql_mimic import utils

from catalog.access import Access
from catalog.auth import AccessDenied, Auth, scramble_password

TOO_MANY_USER_CONNECTIONS = 1203


def denied_message(name: str, host: str, used_password: bool) -> str:
    return f"Access denied for user '{name}@{host}' (using password: " \
           f"{'YES' if used_password else 'NO'})"


def _client_ip(host: str) -> str:
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class NativePassword(NativePasswordAuthPlugin):
    """mysql_native_password against the catalog's accounts (see the module docstring)."""

    def __init__(self, identity: "DorisIdentity"):
        self.identity = identity

    async def auth(self, auth_info: Optional[AuthInfo] = None) -> AuthState:
        if auth_info and auth_info.handshake_plugin_name == self.name \
                and auth_info.handshake_auth_data:
            nonce = auth_info.handshake_auth_data.rstrip(b"\x00")
        else:
            nonce = utils.nonce(20)
            auth_info = yield nonce + b"\x00"
        # In a worker thread: the accounts share the catalog's lock, which a long statement may
        # hold, and the event loop must never wait for it.
        yield await asyncio.to_thread(self.identity.decide, auth_info.username, auth_info.data,
                                      nonce)


class DorisIdentity(IdentityProvider):
    def __init__(self, services, session, remote_ip: str):
        self.services, self.session, self.remote_ip = services, session, remote_ip
        self.refusal_code: int | None = None  # 1203 instead of 1045 (connection limits)

    @property
    def auth(self) -> Auth:
        return self.services.catalog.auth

    def get_plugins(self) -> Sequence[AuthPlugin]:
        return [NativePassword(self)]

    async def get_user(self, username: str) -> Optional[MimicUser]:
        # Every name gets the native plugin: an unknown user fails in `decide`, with 1045.
        return MimicUser(name=username, auth_plugin=NativePassword.name)

    def decide(self, username: str, scramble: bytes, nonce: bytes):
        self.refusal_code = None
        scramble = scramble[:20]  # a native-password scramble is 20 bytes (see limits.py)
        user = self.auth.find_login(username, self.remote_ip)
        if user is None or not _scramble_ok(user.password, scramble, nonce):
            self.session.access = None
            return Forbidden(denied_message(username, self.remote_ip, bool(scramble)))
        limit = self._over_limit(username)
        if limit is not None:
            self.refusal_code = TOO_MANY_USER_CONNECTIONS
            return Forbidden(limit)
        self.session.access = Access(self.auth, user, self.remote_ip)
        return Success(username)

    def _over_limit(self, username: str) -> str | None:
        sessions = list(getattr(self.services, "sessions", {}).values())
        total = getattr(self.services.config, "qe_max_connection", 0)
        if total and len(sessions) >= total:
            return f"Reach limit of connections (qe_max_connection={total})"
        mine = sum(1 for s in sessions if getattr(getattr(s, "access", None), "name", None)
                   == username)
        per_user = self.auth.max_user_connections(username)
        if mine >= per_user:
            return f"User {username} already has more than 'max_user_connections' active " \
                   "connections"
        return None


def _scramble_ok(stored: str, scramble: bytes, nonce: bytes) -> bool:
    if not stored:
        return not scramble
    if not scramble:
        return False
    sha1_sha1 = bytes.fromhex(stored[1:])
    expected = hashlib.sha1(nonce + sha1_sha1).digest()
    if len(scramble) != len(expected):
        return False
    candidate = bytes(a ^ b for a, b in zip(scramble, expected))
    return hmac.compare_digest(hashlib.sha1(candidate).digest(), sha1_sha1)


def login_basic(auth: Auth, header: str | None, remote_ip: str) -> Access:
    """The Access of an HTTP request's `Authorization: Basic user:password` header (the user
    may carry Doris's `@cluster` suffix), or AccessDenied."""
    kind, _, value = (header or "").partition(" ")
    if kind.lower() != "basic":
        raise AccessDenied("no valid Basic authorization", 1045, prefix=False)
    try:
        name, _, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        raise AccessDenied("no valid Basic authorization", 1045, prefix=False) from None
    return login_password(auth, name.split("@")[0], password, remote_ip)


def login_password(auth: Auth, name: str, password: str, remote_ip: str) -> Access:
    """The Access of `name` logging in with the clear `password` from `remote_ip` (the web
    UI's login form, Basic auth), or AccessDenied (1045)."""
    user = auth.find_login(name, remote_ip)
    if user is None or not hmac.compare_digest(user.password, scramble_password(password)):
        raise AccessDenied(denied_message(name, remote_ip, bool(password)), 1045, prefix=False)
    return Access(auth, user, remote_ip)
