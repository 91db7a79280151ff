"""Benchmarks of the engine, the environments and the agents (``python -m benchmarks.<name>``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def flag_errors() -> Iterator[None]:
    """Report a bad flag (a ConfigError or a ``training.cli.UserError``) as one line, ``error: ...`` on stderr,
    and exit with code 2, as the battleline CLI does."""
    from battleline.env.rules.config import ConfigError
    from battleline.training.cli_common import EXIT_USER_ERROR, UserError, print_error

    try:
        yield
    except (ConfigError, UserError) as exc:
        print_error(str(exc))
        raise SystemExit(EXIT_USER_ERROR) from None


def check_at_least(minimum: int, **flags: int | None) -> None:
    """Raise ``training.cli.UserError`` for the first flag below ``minimum``; keywords name flags, ``n_envs`` for
    ``--n-envs`` (None: not given)."""
    from battleline.training.cli_common import UserError

    for name, value in flags.items():
        if value is not None and value < minimum:
            raise UserError(f"--{name.replace('_', '-')} must be at least {minimum}, got {value}")


def check_scenario(scenario: str, siege: bool = False) -> None:
    """Load ``--scenario`` now (ConfigError, one line naming its file); ``siege``: it must take the siege module."""
    from battleline.env.rules.config import load_scenario
    from battleline.training.cli_common import UserError

    if not load_scenario(scenario).siege and siege:
        raise UserError(f"--scenario: '{scenario}' is not a siege (its modules do not include 'siege')")
