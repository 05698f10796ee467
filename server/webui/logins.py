"""Who is asking: web UI logins (a session cookie) and HTTP Basic auth, as accounts of the
catalog with their privileges.

The login form checks the user and password as the MySQL port does (server/auth.py:
login_password); success keeps a `WebLogin` under a random token sent as the cookie
`PALO_SESSION_ID` (Doris FE's name; HttpOnly, SameSite=Strict) and gives the login a CSRF token
that every state-changing request sent with the cookie must carry in `X-CSRF-Token`. A wrong
password is 401 and creates nothing. The account is looked up again on every request: a dropped
user or a changed password ends the login, and privileges are always the current ones.
A request with an `Authorization: Basic` header is checked on its own, without a login.
"""

from __future__ import annotations

import hmac
import itertools
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie

from catalog.access import Access
from catalog.auth import AccessDenied
from server.auth import login_basic, login_password

COOKIE = "PALO_SESSION_ID"
IDLE_SECONDS = 8 * 3600  # a login unused this long is forgotten
# Web sessions get connection ids above mysql-mimic's 32-bit ones (server id << 16 | sequence)
_WEB_IDS = itertools.count((1 << 32) + 1)


def next_connection_id() -> int:
    return next(_WEB_IDS)


@dataclass
class WebLogin:
    name: str
    host: str                  # the account's host pattern
    password: str              # the account's stored password when the login was made
    remote_ip: str
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    connection_id: int = field(default_factory=lambda: next_connection_id())
    used: float = field(default_factory=time.time)
    session: object = None     # the Playground's DorisSession (server/webui/sql.py)
    lock: threading.Lock = field(default_factory=threading.Lock)  # one statement at a time


@dataclass
class Caller:
    """The account of one request; `login` is None for Basic auth."""

    access: Access
    login: WebLogin | None = None

    @property
    def is_admin(self) -> bool:
        return self.access.check_global("ADMIN")

    @property
    def name(self) -> str:
        return self.access.name


class Logins:
    def __init__(self, auth) -> None:
        self.auth = auth
        self._logins: dict[str, WebLogin] = {}
        self._lock = threading.Lock()

    def login(self, name: str, password: str, remote_ip: str) -> WebLogin:
        """A new login, or AccessDenied (nothing is kept)."""
        access = login_password(self.auth, name, password, remote_ip)
        user = access.user
        login = WebLogin(user.name, user.host, user.password, remote_ip)
        with self._lock:
            now = time.time()
            for token in [t for t, w in self._logins.items() if now - w.used > IDLE_SECONDS]:
                del self._logins[token]
            self._logins[login.token] = login
        return login

    def logout(self, token: str) -> None:
        with self._lock:
            self._logins.pop(token, None)

    def caller(self, headers, remote_ip: str, method: str) -> Caller:
        """The request's account: Basic auth if sent, else the login cookie; AccessDenied."""
        if headers.get("Authorization"):
            return Caller(login_basic(self.auth, headers.get("Authorization"), remote_ip))
        token = _cookie(headers.get("Cookie", ""))
        with self._lock:
            login = self._logins.get(token) if token else None
        if login is None:
            raise AccessDenied("not logged in", 1045, prefix=False)
        user = self.auth.get_user(login.name, login.host)
        if user is None or user.password != login.password:  # dropped, or password changed
            self.logout(login.token)
            raise AccessDenied("the login has ended; log in again", 1045, prefix=False)
        if method == "POST" and not hmac.compare_digest(headers.get("X-CSRF-Token", ""),
                                                        login.csrf):
            raise AccessDenied("missing or wrong X-CSRF-Token", 1045, prefix=False)
        login.used = time.time()
        return Caller(Access(self.auth, user, remote_ip), login)


def _cookie(header: str) -> str | None:
    try:
        morsel = SimpleCookie(header).get(COOKIE)
    except CookieError:
        return None
    return morsel.value if morsel is not None else None


def set_cookie(login: WebLogin) -> str:
    return f"{COOKIE}={login.token}; Path=/; HttpOnly; SameSite=Strict"


def clear_cookie() -> str:
    return f"{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
