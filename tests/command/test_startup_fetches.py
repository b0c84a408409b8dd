"""`--check` warns where Claude Code's start-up fetches would hang (a proxy that black-holes
Anthropic's other hosts: the TUI then waits ~5 s before it takes the prompt)."""

from __future__ import annotations

import io
import socket
import threading
from typing import Dict, Iterator, List

import pytest

from claude_print import contract
from claude_print.command import doctor

VAR = contract.NONESSENTIAL_TRAFFIC_VAR


@pytest.fixture
def black_hole() -> Iterator[str]:
    """A proxy that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: List[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def closed_port() -> str:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"http://127.0.0.1:{port}"


def report_for(environ: Dict[str, str]) -> str:
    out = io.StringIO()
    doctor.check_startup_fetches(doctor.Report(out), environ, timeout=1.0)
    return out.getvalue()


def test_a_black_holed_host_is_a_warning_naming_the_variable(black_hole: str) -> None:
    text = report_for({"HTTPS_PROXY": black_hole})
    assert text.startswith(
        "warn startup fetches: a connection to api.anthropic.com through "
        f"the proxy {black_hole} did not answer within 1s"
    )
    assert f"export {VAR}=1" in text


def test_a_proxy_that_refuses_at_once_costs_no_wait() -> None:
    text = report_for({"HTTPS_PROXY": closed_port()})
    assert text.startswith("ok   startup fetches: api.anthropic.com through the proxy")
    assert "fails at once" in text


def test_the_variable_set_skips_the_probe(black_hole: str) -> None:
    text = report_for({"HTTPS_PROXY": black_hole, VAR: "1"})
    assert text == f"ok   startup fetches: {VAR} is set: Claude Code skips them\n"


def test_no_proxy_bypasses_the_proxy() -> None:
    env = {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "localhost,.anthropic.com"}
    assert doctor.proxy_for("api.anthropic.com", env) is None
    assert doctor.proxy_for("api.anthropic.com", {"https_proxy": "p:1"}) == "p:1"


def test_quiet_switches_reach_the_tui() -> None:
    """Motion, tips and the title request off; the user's own value of the variable wins."""
    from claude_print.tui.pty_session import child_environment

    assert child_environment({})["CLAUDE_CODE_DISABLE_TERMINAL_TITLE"] == "1"
    assert child_environment({})["CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL"] == "1"
    assert (
        child_environment({"CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "0"})[
            "CLAUDE_CODE_DISABLE_TERMINAL_TITLE"
        ]
        == "0"
    )
