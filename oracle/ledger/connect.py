"""Where the ledger is and how it is opened: a SQLite file (the default, beside the report folders) or a
PostgreSQL URL (a team's shared ledger), brought to the schema's newest migration on first use.

    ledger = open_ledger("postgresql://oracle:pw@db/oracle")    # LedgerError naming the (redacted) URL and why
    with ledger.engine.begin() as c: ...

The URL's password goes to `redaction` before anything is opened, so no message, report or row ever holds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Column, Engine, MetaData, String, Table, create_engine, insert, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from oracle.ledger.schema import HEAD, MIGRATION_LOCK, metadata
from oracle.redaction import public_text, redact_url, remember_secrets

__all__ = ["DEFAULT_NAME", "Ledger", "LedgerError", "OFF", "default_ledger", "failure", "open_ledger", "upgrade"]

DEFAULT_NAME = "ledger.sqlite"
OFF = "off"  # --ledger off: this run appends nowhere
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_SCHEMES = ("sqlite", "postgresql", "postgres")
# Alembic's own version table, as it makes it: a database stamped here is one Alembic upgrades later.
_VERSIONS = Table("alembic_version", MetaData(), Column("version_num", String(32), primary_key=True))


class LedgerError(RuntimeError):
    """The ledger cannot be opened, migrated, read or written; the message names it (redacted) and why."""


@dataclass
class Ledger:
    engine: Engine
    shown: str  # the path or the URL with its password hidden: what messages say

    def close(self) -> None:
        self.engine.dispose()


def default_ledger(report_dir: Path) -> Path:
    """The default ledger: a SQLite file beside the report folders (reports/ledger.sqlite)."""
    return report_dir.parent / DEFAULT_NAME


def open_ledger(where: str | Path, *, existing: bool = False) -> Ledger:
    """The ledger at a path or URL, with the schema brought up to date; LedgerError when that fails.
    existing: a SQLite file must be there already (reading history never makes an empty ledger of a typo)."""
    where = str(where)
    remember_secrets(urls=[where])
    shown = redact_url(where)
    if existing and "://" not in where:
        _check_there(where, shown)
    try:
        url = _url(where)
        args = {"connect_timeout": 5} if url.get_backend_name() == "postgresql" else {"timeout": 30}
        engine = create_engine(url, connect_args=args, pool_pre_ping=False)
    except (ArgumentError, ValueError, ImportError, OSError) as exc:
        raise LedgerError(f"--ledger {shown}: not a ledger ({public_text(str(exc))}); give a file path "
                          "(reports/ledger.sqlite) or a postgresql://user@host/db URL") from None
    ledger = Ledger(engine, shown)
    try:
        _migrate(engine)
    except SQLAlchemyError as exc:
        engine.dispose()
        raise failure(ledger, "opened", exc) from None
    except OSError as exc:
        engine.dispose()
        raise LedgerError(f"the ledger {shown} could not be opened ({public_text(str(exc))})") from None
    return ledger


def failure(ledger: Ledger, doing: str, exc: Exception) -> LedgerError:
    """A database error as one public line: the ledger (redacted), what failed and the driver's own reason."""
    reason = getattr(exc, "orig", None) or exc
    first = (str(reason).strip().splitlines() or [type(reason).__name__])[0]
    return LedgerError(f"the ledger {ledger.shown} could not be {doing} ({public_text(first)})")


def _check_there(where: str, shown: str) -> None:
    """A ledger to read must be there: a file (or a folder's ledger.sqlite) that is not empty."""
    path = _file(where)
    if not path.is_file():
        inside = f" (no {DEFAULT_NAME} in that folder)" if Path(where).expanduser().is_dir() else ""
        raise LedgerError(f"--ledger {shown}: no ledger there{inside}; every run appends to the one beside its report "
                          "folders (reports/ledger.sqlite), `oracle ledger add REPORT_DIR...` imports older ones")
    if path.stat().st_size == 0:
        # an empty file (`touch`ed, or a typo naming another empty file) would be made a ledger by a read
        raise LedgerError(f"--ledger {shown}: an empty file, not a ledger; give the ledger.sqlite a run appended "
                          "to (reports/ledger.sqlite), or add reports to a new one with `oracle ledger add "
                          "REPORT_DIR... --ledger FILE`")


def _file(where: str) -> Path:
    """A ledger given as a path: the file, or a folder's ledger.sqlite (as `ledger add --ledger DIR` writes it)."""
    path = Path(where).expanduser()
    return path / DEFAULT_NAME if path.is_dir() else path


def _url(where: str):
    if "://" not in where:  # a file path
        path = _file(where).resolve()
        if not path.parent.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
        return make_url(f"sqlite:///{path}")
    url = make_url(where)
    scheme = url.get_backend_name()
    if scheme not in _SCHEMES:
        raise ValueError(f"scheme {url.drivername!r} is neither sqlite nor postgresql")
    if scheme in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")  # psycopg 3, whatever the URL named
    return url


def _version(engine: Engine) -> str | None:
    with engine.connect() as c:
        if not inspect(c).has_table(_VERSIONS.name):
            return None
        return c.execute(select(_VERSIONS.c.version_num)).scalar()


def _migrate(engine: Engine) -> None:
    """Bring the database to HEAD: an empty one gets the tables at once, stamped HEAD (Alembic's "create_all,
    then stamp"; a unit test checks the migrations build the same), one that is behind is upgraded by Alembic.
    Another process doing the same at that moment is fine once the version reads HEAD."""
    if _version(engine) == HEAD:
        return
    try:
        with engine.connect() as c:
            empty = not inspect(c).get_table_names()
        _create(engine) if empty else upgrade(engine)
    except SQLAlchemyError:
        if _version(engine) != HEAD:
            raise


def _create(engine: Engine) -> None:
    with engine.begin() as c:
        if c.dialect.name == "postgresql":  # two first runs on one fresh shared ledger: one creates, one waits
            c.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"))
        if inspect(c).has_table(_VERSIONS.name):
            return
        metadata.create_all(c)
        _VERSIONS.create(c)
        c.execute(insert(_VERSIONS).values(version_num=HEAD))


def upgrade(engine: Engine) -> None:
    """Run Alembic's migrations up to HEAD (imported here only: a run's usual path reads one row)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
