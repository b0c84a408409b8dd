"""The fake API's subscription (OAuth) side, without Claude Code: bearer auth, the quota
check, the pre-connect HEADs and the usage-limit directive (tests/e2e/test_e2e_oauth.py), and
the fake OAuth server's rotating refresh tokens (tests/e2e/test_e2e_oauth_refresh.py)."""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import pytest
from fake_api import FAKE_KEY, FAKE_OAUTH_TOKEN, FakeApiServer, subscription_env
from fake_oauth import API_HOST, TOKEN_HOST, FakeOAuthProxy, TokenAuthority, make_certificates


def call(
    server: FakeApiServer, method: str, path: str, body: Optional[Dict[str, Any]] = None
) -> Tuple[int, Dict[str, str], bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server.url + path, data=data, method=method)
    req.add_header("authorization", f"Bearer {FAKE_OAUTH_TOKEN}")
    req.add_header("content-type", "application/json")
    req.add_header("x-claude-code-session-id", "s-1")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def message(prompt: str, max_tokens: int = 1024) -> Dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": prompt}],
    }


def test_heads_quota_and_bearer_turn(fake_api: FakeApiServer) -> None:
    start = len(fake_api.hits)
    assert call(fake_api, "HEAD", "/")[0] == 200
    assert call(fake_api, "HEAD", "/api/hello")[0] == 200
    status, _, raw = call(fake_api, "POST", "/v1/messages?beta=true", message("quota", 1))
    assert status == 200
    quota = json.loads(raw)
    assert (quota["stop_reason"], quota["usage"]["output_tokens"]) == ("max_tokens", 1)
    status, _, raw = call(fake_api, "POST", "/v1/messages", message("What is 2+2?"))
    assert status == 200
    assert json.loads(raw)["content"][0]["text"] == "The answer is 4."
    hits = fake_api.hits_since(start)
    assert [(h["method"], h["path"], h["kind"]) for h in hits] == [
        ("HEAD", "/", "head"),
        ("HEAD", "/api/hello", "head"),
        ("POST", "/v1/messages", "quota"),
        ("POST", "/v1/messages", "turn"),
    ]
    assert {h["auth"] for h in hits} == {"bearer"}
    assert {h["session"] for h in hits} == {"s-1"}
    assert fake_api.last_prompt_with("quota") == "", "the quota check is no turn"


def test_usage_limit_directive(fake_api: FakeApiServer) -> None:
    reset = 1_900_000_000
    prompt = f"Go on [[usage_limit:seven_day:{reset}]]"
    status, headers, raw = call(fake_api, "POST", "/v1/messages", message(prompt))
    assert status == 429
    lower = {k.lower(): v for k, v in headers.items()}
    assert lower["anthropic-ratelimit-unified-status"] == "rejected"
    assert lower["anthropic-ratelimit-unified-representative-claim"] == "seven_day"
    assert lower["anthropic-ratelimit-unified-reset"] == str(reset)
    assert int(lower["retry-after"]) > 0
    assert json.loads(raw)["error"]["type"] == "rate_limit_error"


def test_subscription_env_drops_the_api_key() -> None:
    env = subscription_env(
        {"ANTHROPIC_API_KEY": "k", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "A": "b"}
    )
    assert "ANTHROPIC_API_KEY" not in env
    assert "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC" not in env
    assert env["CLAUDE_CODE_OAUTH_TOKEN"] == FAKE_OAUTH_TOKEN
    assert env["A"] == "b"
    assert "127.0.0.1" in env["NO_PROXY"]


# --- the rotating token endpoint (tests/support/fake_oauth.py) ----------------------------------


def test_refresh_tokens_are_single_use(tmp_path: Path) -> None:
    """Through the intercepting proxy, as Claude Code reaches it: a refresh token rotates
    once; used again it gets invalid_grant (400); a profile needs a live access token;
    hosts other than the OAuth ones are refused."""
    authority = TokenAuthority(revoke_on_rotate=True)
    proxy = FakeOAuthProxy(authority, make_certificates(tmp_path)).start()
    try:
        context = ssl.create_default_context(cafile=str(proxy.ca_pem))
        opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({"https": proxy.url}),
            urllib.request.HTTPSHandler(context=context),
        )

        def post(body: Dict[str, Any]) -> Tuple[int, Dict[str, Any]]:
            req = urllib.request.Request(
                f"https://{TOKEN_HOST}/v1/oauth/token",
                data=json.dumps(body).encode(),
                headers={"content-type": "application/json"},
            )
            try:
                with opener.open(req, timeout=10) as resp:
                    return resp.status, json.loads(resp.read())
            except urllib.error.HTTPError as err:
                return err.code, json.loads(err.read())

        old_access, first = authority.seed(-60)
        assert not authority.access_ok(old_access)
        status, fresh = post({"grant_type": "refresh_token", "refresh_token": first})
        assert status == 200, fresh
        assert fresh["refresh_token"] != first and fresh["expires_in"] > 0
        assert authority.access_ok(fresh["access_token"])
        status, again = post({"grant_type": "refresh_token", "refresh_token": first})
        assert (status, again["error"]) == (400, "invalid_grant")
        status, _ = post({"grant_type": "refresh_token", "refresh_token": fresh["refresh_token"]})
        assert status == 200
        assert not authority.access_ok(fresh["access_token"]), "revoked by the rotation"
        assert [e["outcome"] for e in authority.requests] == ["rotated", "reused", "rotated"]

        req = urllib.request.Request(f"https://{API_HOST}/api/oauth/profile")
        req.add_header("authorization", f"Bearer {authority.requests[-1]['access_token']}")
        with opener.open(req, timeout=10) as resp:
            assert json.loads(resp.read())["organization"]["organization_type"] == "claude_max"
        with pytest.raises(urllib.error.URLError):
            opener.open("https://example.com/", timeout=10)
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_messages_api_takes_only_live_access_tokens() -> None:
    authority = TokenAuthority()
    server = FakeApiServer().start()
    server.authority = authority
    try:
        live, _ = authority.seed(3600)
        expired, _ = authority.seed(-1)
        for token, status in ((live, 200), (expired, 401), ("sk-ant-oat01-unknown", 401)):
            req = urllib.request.Request(
                server.url + "/v1/messages",
                data=json.dumps(message("What is 2+2?")).encode(),
                headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
            )
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    got, body = resp.status, json.loads(resp.read())
            except urllib.error.HTTPError as err:
                got, body = err.code, json.loads(err.read())
            assert got == status, body
            if status == 401:
                assert body["error"]["type"] == "authentication_error"
    finally:
        server.shutdown()
        server.server_close()


class Finishing(FakeApiServer):
    """A fake API that says when each request's handler is done (error handling included)."""

    def __init__(self) -> None:
        super().__init__()
        self.done = threading.Semaphore(0)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.done.release()


@pytest.mark.parametrize("reset", [False, True])
def test_a_client_gone_mid_answer_prints_no_traceback(
    reset: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    """A run stopped mid-answer closes its connection while the answer streams (the demo's
    sandbox showed a BrokenPipeError traceback that looked like claude-print's crash)."""
    server = Finishing()
    server.start()
    try:
        body = json.dumps({**message("slow [[sleep:0.3]]"), "stream": True}).encode()
        head = (
            f"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            f"x-api-key: {FAKE_KEY}\r\ncontent-length: {len(body)}\r\n\r\n"
        ).encode()
        client = socket.create_connection(("127.0.0.1", server.server_address[1]))
        if reset:  # an RST, as a killed process's socket sends
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.sendall(head + body)
        client.close()
        assert server.done.acquire(timeout=30)
    finally:
        server.shutdown()
        server.server_close()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Error" not in err, err
