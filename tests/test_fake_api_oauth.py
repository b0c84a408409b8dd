"""The fake API's subscription (OAuth) side, without Claude Code: bearer auth, the quota
check, the pre-connect HEADs and the usage-limit directive (tests/test_e2e_oauth.py)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, Optional, Tuple

from fake_api import FAKE_OAUTH_TOKEN, FakeApiServer, subscription_env


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
