"""What a run imports before it spawns Claude Code.

Everything imported before the spawn delays the TUI's start one for one; what is
imported after it overlaps with the TUI's own ~0.7 s boot. So the modules that only
read the transcript and print (and the stdlib modules they pull in) must stay out of
the pre-spawn import graph: cli -> config -> runner -> relay / pty_session / probes /
terminal / screens.
"""

from __future__ import annotations

import subprocess
import sys

from harness import ROOT

LATE = (
    "claude_print.printing.output",
    "claude_print.printing.stream",
    "claude_print.records.transcript",
    "claude_print.records.summary",
    "claude_print.records.pricing",
    "claude_print.command.doctor",
    "dataclasses",  # pulls in inspect, dis, ast, tokenize (~8 ms)
    "uuid",  # ~3 ms; a session id needs only os.urandom
    "calendar",
    "datetime",
    "tomllib",  # only when a config file exists
)


def test_the_modules_a_spawn_needs_import_nothing_late() -> None:
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import claude_print.__main__, claude_print.command.cli, claude_print.command.config\n"
        "import claude_print.run.runner\n"
        f"print(' '.join(sorted(set({LATE!r}) & set(sys.modules))))\n"
    )
    # -S: without site, whatever a site-packages .pth imports does not hide a regression.
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True
    )
    assert proc.stdout.split() == []


# Never imported by a run at all (their CPU, not only their wait, is a cost: the TUI
# keeps a core busy, and a fleet runs on few): a run's own ids come from os.urandom
# (`ids.random_uuid`), and no module of a run is a dataclass.
NEVER = ("dataclasses", "inspect", "uuid", "platform")


def test_a_whole_run_imports_no_module_it_can_do_without() -> None:
    modules = [
        "claude_print.command.cli",
        "claude_print.run.entry",
        "claude_print.run.runner",
        "claude_print.records.summary",
        "claude_print.turns.tui_cost",
        "claude_print.printing.output",
        "claude_print.printing.stream",
        "claude_print.printing.emit",
        "claude_print.turns.slash",
        "claude_print.turns.prompt_gate",
    ]
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        + "".join(f"import {name}\n" for name in modules)
        + f"print(' '.join(sorted(set({NEVER!r}) & set(sys.modules))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True
    )
    assert proc.stdout.split() == []
