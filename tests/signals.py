"""Helpers for tests that stop a command with Ctrl-C (SIGINT)."""

import signal


def sigint_as_a_terminal_sends_it() -> None:
    """``preexec_fn`` for a child that is sent SIGINT: its default action, whatever this process inherited.

    A shell starts background jobs with SIGINT ignored, and Python then installs no KeyboardInterrupt
    handler in the child, so a test run from such a job would otherwise see Ctrl-C do nothing.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
