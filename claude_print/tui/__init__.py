"""The terminal side: Claude Code's TUI on a pseudo-terminal, and what goes in and out.

The binary and its release (release), the child on its PTY (pty_session, oauth_refresh),
the screen model (terminal) and the window read from it (tui_screen, probes), the
startup screens (screens) and the boot phase that answers them (boot), keys on their
way in (keys), a prompt into the input box (delivery, with images pasted by the
clipboard way), and the permission mode switched by Shift+Tab (mode_switch).

May import: ground.
"""
