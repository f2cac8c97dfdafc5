"""The ``hydrangea`` command line: ``demo`` runs the demo session, ``explore`` prints a saved file
or a session from a store (``--store sqlite:PATH`` or ``--store postgresql://...``).

Every command has ``--help``. A bad argument, or a file that cannot be read or is not a saved
Context or session, gives one line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from hydrangea.errors import HydrangeaError, SerializationError
from hydrangea.gateway import GatewayType

if TYPE_CHECKING:
    from hydrangea.stores import SessionStore

__all__ = ["main"]

EXIT_USAGE = 2
"""Exit status for a bad argument or an unusable input file."""
EXIT_FAILURE = 1
"""Exit status for a run that started and then failed."""

MAX_TURNS = 5000


class _UsageError(Exception):
    """A bad command line; carries the one line to print."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and an exception, not usage plus exit."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{self.prog}: error: {message} (see --help)")


def _turns(value: str) -> int:
    try:
        turns = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--turns must be a whole number, got {value!r}") from None
    if not 1 <= turns <= MAX_TURNS:
        raise argparse.ArgumentTypeError(f"--turns must be between 1 and {MAX_TURNS}, got {turns}")
    return turns


def _threshold(value: str) -> int:
    try:
        threshold = int(value)
    except ValueError:
        message = f"--threshold must be a whole number, got {value!r}"
        raise argparse.ArgumentTypeError(message) from None
    if threshold < 100:
        raise argparse.ArgumentTypeError(f"--threshold must be at least 100, got {threshold}")
    return threshold


def build_parser() -> argparse.ArgumentParser:
    """The parser of the ``hydrangea`` command and its subcommands."""
    from hydrangea.demo.session import DEFAULT_THRESHOLD

    parser = _Parser(
        prog="hydrangea",
        description="hydrangea-context: cooperative, cache-friendly, as-of-safe LLM context.",
    )
    from hydrangea._version import __version__

    parser.add_argument("--version", action="version", version=f"hydrangea-context {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    demo = commands.add_parser(
        "demo",
        help="run the offline demo agent session",
        description=(
            "Run an agent session driven by a deterministic scripted model (no network, no key) "
            "and show what the library does: areas registering and retiring, a fenced prompt "
            "injection, a refused future document, a compaction checkpoint, lifecycle reminders, "
            "and per request the size and the reusable cached prefix."
        ),
    )
    demo.add_argument(
        "--gateway",
        choices=[g.value for g in GatewayType],
        default=GatewayType.anthropic.value,
        help="provider wire format to speak (default: anthropic)",
    )
    demo.add_argument(
        "--turns", type=_turns, default=12, help="user turns to run (default: 12)"
    )
    demo.add_argument(
        "--threshold",
        type=_threshold,
        default=DEFAULT_THRESHOLD,
        help=f"conversation size in tokens that triggers compaction (default: {DEFAULT_THRESHOLD})",
    )
    demo.add_argument(
        "--json", action="store_true", help="print a machine-readable JSON report instead"
    )
    demo.add_argument(
        "--live",
        action="store_true",
        help="send the session to the real provider (needs its API key in the environment)",
    )
    demo.add_argument("--model", help="provider model for --live (default: per gateway)")
    demo.add_argument(
        "--save",
        type=Path,
        metavar="FILE",
        help="save the session at the end, for 'hydrangea explore FILE'",
    )
    _store_options(demo, "save the session after every turn to this store")
    explore = commands.add_parser(
        "explore",
        help="print a saved Context or session as a tree",
        description="Print a saved Context or lifecycle session as the explorer's tree: from a "
        "file, or from a store with --store URL --session ID.",
    )
    explore.add_argument(
        "file", type=Path, nargs="?", help="a file written by Context.save or a session"
    )
    _store_options(explore, "open the session from this store instead of a file")
    return parser


def _store_options(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--store",
        metavar="URL",
        help=f"{what}: sqlite:PATH or postgresql://... (PostgreSQL needs the postgres extra)",
    )
    parser.add_argument(
        "--session", default="demo", metavar="ID", help="the session id in --store (default: demo)"
    )


def _require_rich() -> None:
    try:
        import rich  # noqa: F401
    except ImportError:
        raise _UsageError(
            "hydrangea: error: this command needs rich: pip install 'hydrangea-context[cli]'"
        ) from None


def _run_demo(args: argparse.Namespace) -> int:
    _require_rich()
    from rich.console import Console

    from hydrangea.demo.display import show_report
    from hydrangea.demo.live import LiveModel
    from hydrangea.demo.progress import progress_for
    from hydrangea.demo.scripted import ScriptedModel
    from hydrangea.demo.session import DemoModel, SessionOptions, run_session

    gateway = GatewayType(args.gateway)
    if args.model and not args.live:
        raise _UsageError("hydrangea demo: error: --model is only used with --live (see --help)")
    model: DemoModel = LiveModel(gateway, args.model) if args.live else ScriptedModel(gateway)
    options = SessionOptions(
        gateway=gateway,
        turns=args.turns,
        threshold_tokens=args.threshold,
        tools=not args.live,
        live=args.live,
        save_to=args.save,
        store=None if args.store is None else _open_store(args.store),
        session_id=args.session,
    )
    with progress_for(args.turns, enabled=not args.json) as on_request:
        report = run_session(options, model, on_request)
    if args.json:
        sys.stdout.write(report.to_json() + "\n")
    else:
        show_report(report, Console())
    return 0


def _open_store(url: str) -> SessionStore:
    from hydrangea.stores import open_store

    if not url.startswith(("sqlite:", "postgresql://", "postgres://")):
        raise _UsageError(
            f"hydrangea: error: --store must be sqlite:PATH or postgresql://..., got {url[:40]!r}"
        )
    return open_store(url)


def _run_explore(args: argparse.Namespace) -> int:
    _require_rich()
    from hydrangea.demo.explore_hook import explore_path, explore_stored

    if args.store is not None:
        if args.file is not None:
            raise _UsageError("hydrangea explore: error: give a file or --store, not both")
        if args.store.startswith("sqlite:"):  # reading only: never create an empty database
            found = Path(args.store.removeprefix("sqlite:"))
            if not found.is_file():
                raise _UsageError(
                    f"hydrangea explore: error: there is no SQLite store at {str(found)!r}; "
                    "give the file a session was saved to (for example by "
                    f"'hydrangea demo --store sqlite:{found}')"
                )
        explore_stored(_open_store(args.store), args.session)
        return 0
    if args.file is None:
        raise _UsageError(
            "hydrangea explore: error: the following arguments are required: file (see --help)"
        )
    path: Path = args.file
    explore_path(path)
    return 0


def _first_line(exc: BaseException) -> str:
    lines = str(exc).splitlines()
    return lines[0] if lines else type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise _UsageError("hydrangea: error: choose a command: demo or explore (see --help)")
        if args.command == "demo":
            return _run_demo(args)
        return _run_explore(args)
    except _UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        return EXIT_USAGE
    except SerializationError as exc:
        sys.stderr.write(f"hydrangea: error: {_first_line(exc)}\n")
        return EXIT_USAGE
    except HydrangeaError as exc:  # before OSError: an unreachable store is a ConnectionError
        sys.stderr.write(f"hydrangea: error: {_first_line(exc)}\n")
        return EXIT_FAILURE
    except OSError as exc:
        name = getattr(exc, "filename", None)
        reason = exc.strerror or str(exc)
        sys.stderr.write(f"hydrangea: error: cannot read {name}: {reason}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("hydrangea: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
