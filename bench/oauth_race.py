"""Measure what N parallel runs do with one stored subscription login whose access token
has expired (or is about to): `claude -p` against claude-print, on the fake API and the
fake OAuth server of tests/ (tests/support/fake_oauth.py: single-use rotating refresh tokens).

    python3 bench/oauth_race.py --binary PATH --mode claude-p --runs 20 --trials 3

Each trial starts from a fresh HOME holding a login whose access token expired
`--expired-ago` seconds ago (negative: expires in that many seconds), runs the batch at
once, then one more run. Prints one JSON line a trial.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from fake_api import FakeApiServer, seed_home, subscription_env  # noqa: E402
from fake_oauth import (  # noqa: E402
    FakeOAuthProxy,
    TokenAuthority,
    make_certificates,
    read_login,
    seed_login,
)

PROMPT = "What is 2+2?"
ANSWER = "The answer is 4."


def sandbox(base: Path, authority: TokenAuthority, expired_ago: float) -> Dict[str, Path]:
    home, project, tmp = base / "home", base / "project", base / "tmp"
    for d in (home, project, tmp):
        d.mkdir(parents=True)
    seed_home(home, trusted=[project])
    seed_login(home, authority, -expired_ago)
    return {"home": home, "project": project, "tmp": tmp}


def environment(box: Dict[str, Path], api: FakeApiServer, proxy: FakeOAuthProxy) -> Dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE_CODE_", "ANTHROPIC_")) and k != "CLAUDECODE"
    }
    env.update(
        HOME=str(box["home"]),
        TMPDIR=str(box["tmp"]),
        ANTHROPIC_BASE_URL=api.url,
        DISABLE_AUTOUPDATER="1",
        PYTHONPATH=str(ROOT),
        XDG_CONFIG_HOME=str(box["home"] / ".config"),
        XDG_RUNTIME_DIR=str(box["tmp"] / "run"),
    )
    env = subscription_env(env)
    del env["CLAUDE_CODE_OAUTH_TOKEN"]  # the stored login is what is measured
    env.update(proxy.env())
    return env


def argv(mode: str, binary: str, timeout: float, prompt: str) -> List[str]:
    if mode == "claude-p":
        return [binary, "-p", "--output-format", "json", prompt]
    return [
        sys.executable,
        "-m",
        "claude_print",
        "--claude-binary",
        binary,
        "--timeout",
        str(int(timeout)),
        "--output-format",
        "json",
        prompt,
    ]


def one_run(
    cmd: List[str], box: Dict[str, Path], env: Dict[str, str], timeout: float
) -> Dict[str, Any]:
    started = time.monotonic()
    try:
        done = subprocess.run(
            cmd,
            cwd=box["project"],
            env=env,
            capture_output=True,
            timeout=timeout + 30,
            stdin=subprocess.DEVNULL,
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = -999, exc.stdout or b"", exc.stderr or b""
    result = ""
    with contextlib.suppress(ValueError):
        result = str(json.loads(out).get("result", ""))
    return {
        "code": code,
        "answered": result in (ANSWER, "Tool turn done."),
        "result": result[:120],
        "stderr": err.decode(errors="replace")[-300:],
        "secs": round(time.monotonic() - started, 1),
    }


def trial(args: argparse.Namespace, api: FakeApiServer, proxy: FakeOAuthProxy) -> Dict[str, Any]:
    authority = api.authority
    assert isinstance(authority, TokenAuthority)
    before = len(authority.requests)
    rejected_before = len(authority.rejected_access)
    base = Path(tempfile.mkdtemp(prefix="oauth-race-"))
    box = sandbox(base, authority, args.expired_ago)
    env = environment(box, api, proxy)
    cmd = argv(args.mode, args.binary, args.kill_after or args.timeout, args.prompt)
    if args.kill_after and args.mode == "claude-p":  # as a caller's time limit would
        cmd = ["timeout", str(args.kill_after), *cmd]
    results: List[Dict[str, Any]] = [{} for _ in range(args.runs)]

    def go(i: int) -> None:
        results[i] = one_run(cmd, box, env, args.timeout)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(args.runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    authority.wait_idle(60)  # a killed run's token request may still be on its way
    batch_requests = authority.requests[before:]
    login = read_login(box["home"])
    after = {
        "has_access": bool(login.get("accessToken")),
        "access_live": bool(login.get("accessToken"))
        and login.get("accessToken") in authority.access
        and authority.access[login["accessToken"]] > time.time(),
        "refresh_live": login.get("refreshToken") in authority.live_refresh,
        "expires_in_s": round((login.get("expiresAt", 0) / 1000) - time.time()),
    }
    mid = len(authority.requests)
    nxt = one_run(argv(args.mode, args.binary, args.timeout, PROMPT), box, env, args.timeout)
    codes: Dict[str, int] = {}
    for r in results:
        codes[str(r["code"])] = codes.get(str(r["code"]), 0) + 1
    outcome: Dict[str, int] = {}
    for e in batch_requests:
        outcome[e["outcome"]] = outcome.get(e["outcome"], 0) + 1
    failures = sorted({(r["result"] or r["stderr"])[:160] for r in results if not r["answered"]})
    row = {
        "mode": args.mode,
        "binary": args.binary.split("/cc-")[-1].split("/")[0],
        "runs": args.runs,
        "expired_ago": args.expired_ago,
        "token_delay": args.token_delay,
        "revoke_on_rotate": args.revoke_on_rotate,
        "kill_after": args.kill_after,
        "exit_codes": codes,
        "answered": sum(r["answered"] for r in results),
        "token_requests": len(batch_requests),
        "token_outcomes": outcome,
        "messages_401": len(authority.rejected_access) - rejected_before,
        "credentials_after": after,
        "next_run": {
            "code": nxt["code"],
            "answered": nxt["answered"],
            "token_requests": len(authority.requests) - mid,
            "result": nxt["result"][:100],
        },
        "secs_max": max(r["secs"] for r in results),
        "failures": failures[:4],
    }
    if not args.keep:
        subprocess.run(["rm", "-rf", str(base)], check=False)
    else:
        row["dir"] = str(base)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--mode", choices=("claude-p", "claude-print"), default="claude-p")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--expired-ago", type=float, default=3600.0)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--prompt", default=PROMPT)
    parser.add_argument(
        "--kill-after",
        type=float,
        default=0.0,
        help="end each batch run after this many seconds (claude-print --timeout; "
        "claude -p under timeout(1), SIGTERM)",
    )
    parser.add_argument("--token-delay", type=float, default=0.0)
    parser.add_argument("--revoke-on-rotate", action="store_true")
    args = parser.parse_args()
    cert_dir = Path(tempfile.mkdtemp(prefix="oauth-certs-"))
    certs = make_certificates(cert_dir)
    authority = TokenAuthority(args.token_delay, args.revoke_on_rotate)
    api = FakeApiServer().start()
    api.authority = authority
    proxy = FakeOAuthProxy(authority, certs).start()
    try:
        for _ in range(args.trials):
            print(json.dumps(trial(args, api, proxy)), flush=True)
    finally:
        shutil.rmtree(cert_dir, ignore_errors=True)
    if os.environ.get("OAUTH_RACE_HITS"):
        print(json.dumps(proxy.hits[-60:]), file=sys.stderr)


if __name__ == "__main__":
    main()
