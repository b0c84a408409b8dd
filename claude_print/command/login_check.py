"""Whether Claude Code will get past its start-up screens, read from its files alone
(no request spent): onboarding done, and a login or API key it uses without asking.

What the TUI shows otherwise (measured, 2.1.197 and 2.1.331): with no `~/.claude.json`
or `hasCompletedOnboarding` false, the welcome screen and then a login it cannot do
offline; with an `ANTHROPIC_API_KEY` whose last 20 characters are in neither list of
`customApiKeyResponses`, the "Detected a custom API key" question, a billing decision
claude-print never answers; with neither a key, a token nor stored credentials, the
login screen. Each is an exit 2 at start-up; `--check` says so beforehand.
"""

from __future__ import annotations

import os
from typing import Mapping, NamedTuple

from claude_print.jsonfile import read_object

# Logins that need neither the key question nor stored credentials.
TOKEN_VARS = ("CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN")
PROVIDER_VARS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")


# A stored login is renewed with a single-use refresh token; a run killed with SIGKILL
# while its Claude Code renews it logs out every run on that login (claude-print waits
# out a renewal before its own SIGTERM, see oauth_refresh, but cannot outlive a SIGKILL).
RENEWED_LOGIN_HINT = (
    "; its access token is renewed with a single-use refresh token, so a run killed with "
    "SIGKILL mid-renewal logs out every run on it: for a fleet, `claude setup-token` "
    "makes a one-year token to set as CLAUDE_CODE_OAUTH_TOKEN, with nothing to renew"
)


class Verdict(NamedTuple):
    ok: bool
    detail: str


def config_paths(environ: Mapping[str, str]) -> tuple[str, str]:
    """(the global config `.claude.json`, the config dir holding `.credentials.json`)."""
    home = environ.get("HOME") or os.path.expanduser("~")
    config_dir = environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        return os.path.join(config_dir, ".claude.json"), config_dir
    return os.path.join(home, ".claude.json"), os.path.join(home, ".claude")


def startup_verdict(environ: Mapping[str, str]) -> Verdict:
    config_path, config_dir = config_paths(environ)
    config = read_object(config_path)
    if not config or not config.get("hasCompletedOnboarding"):
        return Verdict(
            False,
            f"Claude Code is not set up for this user ({config_path} has no completed "
            "onboarding): run `claude` once and log in, or `claude setup-token`",
        )
    key = environ.get("ANTHROPIC_API_KEY", "")
    if key:
        answers = config.get("customApiKeyResponses")
        answers = answers if isinstance(answers, dict) else {}
        tail = key[-20:]
        if tail in (answers.get("approved") or []):
            return Verdict(True, "ANTHROPIC_API_KEY, approved in Claude Code's config")
        if tail in (answers.get("rejected") or []):
            return Verdict(
                False,
                "ANTHROPIC_API_KEY was rejected in Claude Code's config: it would run with "
                "its own login instead (unset the key, or approve it in `claude`)",
            )
        return Verdict(
            False,
            "ANTHROPIC_API_KEY is set but Claude Code has never been told to use it: it "
            "would ask (a billing decision claude-print never makes); run `claude` once "
            "and answer, or unset the key to use your login",
        )
    for name in TOKEN_VARS + PROVIDER_VARS:
        if environ.get(name):
            return Verdict(True, f"{name} is set")
    credentials = read_object(os.path.join(config_dir, ".credentials.json"))
    if credentials and credentials.get("claudeAiOauth"):
        return Verdict(
            True, f"a subscription login ({config_dir}/.credentials.json){RENEWED_LOGIN_HINT}"
        )
    if config.get("primaryApiKey") or (config.get("oauthAccount") and credentials):
        return Verdict(True, "a login stored in Claude Code's config")
    return Verdict(
        False,
        "no login: no API key, no CLAUDE_CODE_OAUTH_TOKEN and no stored credentials "
        f"({config_dir}/.credentials.json); run `claude` and /login, or `claude setup-token`",
    )
