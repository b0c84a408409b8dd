"""A fake claude.ai OAuth server on 127.0.0.1, for the stored-login refresh tests.

Claude Code refreshes a stored subscription login (`~/.claude/.credentials.json`) at
`https://platform.claude.com/v1/oauth/token` and reads the account at
`https://api.anthropic.com/api/oauth/profile`. Public builds cannot be pointed at another
host: `USE_LOCAL_OAUTH` is compiled out (the environment selector returns "prod") and
`CLAUDE_CODE_CUSTOM_OAUTH_URL` only takes three approved https hosts. So this is an
intercepting HTTPS proxy: Claude Code gets `HTTPS_PROXY=<this>` and
`NODE_EXTRA_CA_CERTS=<a test CA>`; CONNECTs to the OAuth hosts are answered here, over
TLS with a certificate of that CA, and every other host is refused at once (as the dead
proxy port of fake_api.subscription_env does).

The token endpoint rotates like the real one: each refresh token works once and yields
a new access token and a new refresh token; a refresh token used before gets HTTP 400
``invalid_grant``. `TokenAuthority.access_ok` is what the fake Messages API asks
(FakeApiServer.authority): only access tokens this authority issued and that have not
expired pass, others get 401 as from the real API. Every token request is logged in
`TokenAuthority.requests`.
"""

from __future__ import annotations

import http.server
import json
import os
import socketserver
import ssl
import subprocess
import threading
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

TOKEN_HOST = "platform.claude.com"
API_HOST = "api.anthropic.com"
INTERCEPTED = (TOKEN_HOST, API_HOST, "claude.ai", "console.anthropic.com")
ACCESS_LIFETIME = 8 * 3600  # seconds, what the real endpoint grants
SCOPES = ["user:inference", "user:profile", "user:sessions:claude_code"]
ACCOUNT_UUID = "00000000-0000-4000-8000-0000000000a1"
ORG_UUID = "00000000-0000-4000-8000-0000000000b2"
EXPIRED_MESSAGE = (
    "OAuth token has expired. Please obtain a new token or refresh your existing token."
)


def make_certificates(directory: Path) -> Tuple[Path, Path, Path]:
    """A throw-away CA and a server certificate for the intercepted hosts, made with the
    openssl command: (CA certificate, server certificate, server key)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_pem = directory / "ca.key", directory / "ca.pem"
    key, csr, pem = directory / "server.key", directory / "server.csr", directory / "server.pem"
    ext = directory / "server.ext"
    names = ",".join(f"DNS:{h}" for h in INTERCEPTED)
    ext.write_text(
        f"subjectAltName={names}\nbasicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
    )
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    steps = [
        [
            "openssl",
            "req",
            "-x509",
            *ec,
            "-keyout",
            ca_key,
            "-out",
            ca_pem,
            "-days",
            "3",
            "-subj",
            "/CN=claude-print test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
        ["openssl", "req", *ec, "-keyout", key, "-out", csr, "-subj", f"/CN={TOKEN_HOST}"],
        [
            "openssl",
            "x509",
            "-req",
            "-in",
            csr,
            "-CA",
            ca_pem,
            "-CAkey",
            ca_key,
            "-set_serial",
            "2",
            "-out",
            pem,
            "-days",
            "2",
            "-extfile",
            ext,
        ],
    ]
    for step in steps:
        subprocess.run([str(a) for a in step], check=True, capture_output=True)
    return ca_pem, pem, key


class TokenAuthority:
    """Issued tokens and their state, shared by the token endpoint and the Messages API."""

    def __init__(self, delay: float = 0.0, revoke_on_rotate: bool = False) -> None:
        self.delay = delay  # seconds a token request takes (a slow or busy server)
        # Whether a refresh also ends the access tokens issued before (stricter than
        # needed: the real server is not known to, but a fleet must survive it).
        self.revoke_on_rotate = revoke_on_rotate
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self.in_flight = 0  # token requests received and not answered yet
        self.arrivals = 0  # token requests received
        self.access: Dict[str, float] = {}  # access token -> server-side expiry (epoch s)
        self.live_refresh: Set[str] = set()
        self.used_refresh: Set[str] = set()
        self.requests: List[Dict[str, Any]] = []  # every token request, in order
        self.rejected_access: List[str] = []  # access tokens the Messages API refused

    def seed(self, expires_in: float) -> Tuple[str, str]:
        """A login as `claude /login` leaves it: (access token, refresh token); the access
        token expires `expires_in` seconds from now (negative: already expired)."""
        with self._lock:
            return self._issue(expires_in)

    def _issue(self, expires_in: float) -> Tuple[str, str]:
        access = "sk-ant-oat01-fake-" + uuid.uuid4().hex
        refresh = "sk-ant-ort01-fake-" + uuid.uuid4().hex
        self.access[access] = time.time() + expires_in
        self.live_refresh.add(refresh)
        return access, refresh

    def refresh(self, token: str) -> Tuple[int, Dict[str, Any]]:
        """One refresh: (HTTP status, JSON body), and the request logged. With `delay`, the
        server takes that long and then rotates, even when the client has gone meanwhile
        (its answer lost, as on a connection cut mid-request)."""
        with self._lock:
            self.in_flight += 1
            self.arrivals += 1
            self._idle.notify_all()
        try:
            time.sleep(self.delay)
            return self._refresh(token)
        finally:
            with self._lock:
                self.in_flight -= 1
                self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Block until no token request is in flight."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self.in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def wait_for_arrival(self, count: int, timeout: float) -> bool:
        """Block until `count` token requests have arrived (answered or not)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self.arrivals < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def _refresh(self, token: str) -> Tuple[int, Dict[str, Any]]:
        with self._lock:
            entry: Dict[str, Any] = {"at": time.time(), "refresh_token": token}
            if token in self.live_refresh:
                self.live_refresh.discard(token)
                self.used_refresh.add(token)
                if self.revoke_on_rotate:
                    self.access = {a: 0.0 for a in self.access}
                access, refresh = self._issue(ACCESS_LIFETIME)
                entry.update(outcome="rotated", access_token=access, new_refresh_token=refresh)
                self.requests.append(entry)
                return 200, {
                    "token_type": "Bearer",
                    "access_token": access,
                    "refresh_token": refresh,
                    "expires_in": ACCESS_LIFETIME,
                    "scope": " ".join(SCOPES),
                    "account": {"uuid": ACCOUNT_UUID, "email_address": "fleet@example.com"},
                    "organization": {"uuid": ORG_UUID},
                }
            entry["outcome"] = "reused" if token in self.used_refresh else "unknown"
            self.requests.append(entry)
            return 400, {
                "error": "invalid_grant",
                "error_description": "Invalid refresh token",
            }

    def access_ok(self, token: str) -> bool:
        with self._lock:
            ok = self.access.get(token, 0.0) > time.time()
            if not ok:
                self.rejected_access.append(token)
            return ok

    def counts(self) -> Dict[str, int]:
        with self._lock:
            out: Dict[str, int] = {}
            for entry in self.requests:
                out[entry["outcome"]] = out.get(entry["outcome"], 0) + 1
            return out


def profile() -> Dict[str, Any]:
    """`GET /api/oauth/profile`: a Max subscriber."""
    return {
        "account": {
            "uuid": ACCOUNT_UUID,
            "email": "fleet@example.com",
            "email_address": "fleet@example.com",
            "display_name": "Fleet",
            "full_name": "Fleet Test",
            "created_at": "2025-01-01T00:00:00Z",
            "has_claude_max": True,
            "has_claude_pro": False,
        },
        "organization": {
            "uuid": ORG_UUID,
            "name": "Fleet org",
            "organization_type": "claude_max",
            "billing_type": "stripe_subscription",
            "rate_limit_tier": "default_claude_max_20x",
            "has_extra_usage_enabled": False,
            "subscription_created_at": "2025-01-01T00:00:00Z",
        },
    }


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeOAuthProxy

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_CONNECT(self) -> None:
        host = self.path.rpartition(":")[0]
        self.server.note({"method": "CONNECT", "host": host})
        if host not in INTERCEPTED:  # anything else fails at once, as with no network
            self.send_response(403, "Forbidden")
            self.send_header("content-length", "0")
            self.end_headers()
            self.close_connection = True
            return
        self.send_response(200, "Connection Established")
        self.end_headers()
        self.wfile.flush()
        try:
            tls = self.server.tls.wrap_socket(self.connection, server_side=True)
        except (ssl.SSLError, OSError):
            self.close_connection = True
            return
        self.connection = tls
        self.rfile = tls.makefile("rb")
        self.wfile = tls.makefile("wb")
        self.tunnel = host
        self.close_connection = False

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.connection.close()

    def _json(self, status: int, body: Dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_fake_oauth")
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Dict[str, Any]:
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        if "json" in self.headers.get("content-type", ""):
            loaded = json.loads(raw or b"{}")
            return loaded if isinstance(loaded, dict) else {}
        return {k: v[-1] for k, v in urllib.parse.parse_qs(raw.decode()).items()}

    def _note(self) -> str:
        path = self.path.split("?")[0]
        self.server.note(
            {"method": self.command, "host": getattr(self, "tunnel", ""), "path": path}
        )
        return path

    def do_POST(self) -> None:
        path = self._note()
        body = self._body()
        if path == "/v1/oauth/token" and body.get("grant_type") == "refresh_token":
            status, answer = self.server.authority.refresh(str(body.get("refresh_token", "")))
            self._json(status, answer)
            return
        self._json(404, {"error": {"type": "not_found_error", "message": path}})

    def do_GET(self) -> None:
        path = self._note()
        token = self.headers.get("authorization", "")[len("Bearer ") :]
        if path == "/api/oauth/profile":
            if not self.server.authority.access_ok(token):
                error = {"type": "authentication_error", "message": EXPIRED_MESSAGE}
                self._json(401, {"type": "error", "error": error})
                return
            self._json(200, profile())
            return
        if path == "/api/oauth/claude_cli/roles":
            self._json(200, {"organization_role": "admin", "workspace_role": None})
            return
        self._json(404, {"error": {"type": "not_found_error", "message": path}})


class FakeOAuthProxy(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, authority: TokenAuthority, certs: Tuple[Path, Path, Path]) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.authority = authority
        self.ca_pem = certs[0]
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.tls.load_cert_chain(str(certs[1]), str(certs[2]))
        self.hits: List[Dict[str, Any]] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up mid-tunnel (telemetry at exit) is no failure here

    def note(self, hit: Dict[str, Any]) -> None:
        with self._lock:
            self.hits.append({**hit, "at": time.time()})

    def env(self) -> Dict[str, str]:
        """What Claude Code needs to reach this server (on top of subscription_env):
        its https traffic through here, the test CA trusted, no CLAUDE_CODE_OAUTH_TOKEN
        (which would win over the stored login)."""
        return {
            "HTTPS_PROXY": self.url,
            "https_proxy": self.url,
            "NODE_EXTRA_CA_CERTS": str(self.ca_pem),
        }

    def start(self) -> FakeOAuthProxy:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self


def seed_login(home: Path, authority: TokenAuthority, expires_in: float) -> Dict[str, Any]:
    """A HOME (fake_api.seed_home'd) logged in as after `claude /login`: the account in
    `.claude.json` instead of an approved API key, and the tokens in `.credentials.json`;
    the access token expires `expires_in` seconds from now (negative: expired). Returns
    the stored login."""
    config = json.loads((home / ".claude.json").read_text())
    config.pop("customApiKeyResponses", None)
    config["oauthAccount"] = {
        "accountUuid": ACCOUNT_UUID,
        "emailAddress": "fleet@example.com",
        "organizationUuid": ORG_UUID,
        "organizationRole": "admin",
        "displayName": "Fleet",
    }
    (home / ".claude.json").write_text(json.dumps(config))
    access, refresh = authority.seed(expires_in)
    write_credentials(home, access, refresh, int((time.time() + expires_in) * 1000))
    return read_login(home)


def write_credentials(
    home: Path, access: str, refresh: str, expires_at_ms: int, config_dir: Optional[Path] = None
) -> Path:
    """`~/.claude/.credentials.json` as `claude /login` leaves it on Linux (0600)."""
    directory = config_dir or home / ".claude"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ".credentials.json"
    login = {
        "claudeAiOauth": {
            "accessToken": access,
            "refreshToken": refresh,
            "expiresAt": expires_at_ms,
            "scopes": SCOPES,
            "subscriptionType": "max",
            "rateLimitTier": "default_claude_max_20x",
        }
    }
    path.write_text(json.dumps(login))
    os.chmod(path, 0o600)
    return path


def read_login(home: Path) -> Dict[str, Any]:
    """The stored login now (`claudeAiOauth`), {} when there is none."""
    try:
        data = json.loads((home / ".claude" / ".credentials.json").read_text())
    except (OSError, ValueError):
        return {}
    login = data.get("claudeAiOauth") if isinstance(data, dict) else None
    return login if isinstance(login, dict) else {}
