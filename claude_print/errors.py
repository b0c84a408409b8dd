"""Exit codes and the one exception type that carries them to the CLI."""

from __future__ import annotations

from typing import Callable, List

EXIT_OK = 0
EXIT_ASSISTANT_ERROR = 1  # the model or the API reported an error (as `claude -p`)
EXIT_USAGE = 2  # bad input, bad environment, or claude-print could not drive the TUI
EXIT_TIMEOUT = 124  # --timeout elapsed (as coreutils `timeout`)
EXIT_INTERRUPTED = 130  # SIGINT / SIGTERM / SIGHUP


class ClaudePrintError(Exception):
    """A failure with a message for the user, an exit code and a json `subtype`."""

    def __init__(
        self,
        message: str,
        exit_code: int = EXIT_USAGE,
        subtype: str = "error_during_execution",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.subtype = subtype


# A failure read off the screen: (what went wrong, the screen's lines) -> the error to
# raise, with the screen's text and the release in its message.
Fail = Callable[[str, List[str]], ClaudePrintError]
