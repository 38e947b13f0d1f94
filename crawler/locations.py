"""Where ``sources.yaml`` and the database are when the command line does not say, so that a
cron line needs no ``cd``.

``sources.yaml``: ``--config``, else ``$CRAWLER_CONFIG``, else ``./sources.yaml``, else
``$XDG_CONFIG_HOME/crawler/sources.yaml`` (``~/.config/crawler/sources.yaml``).

The heartbeat (``schedule`` writes it, ``health`` reads it): ``--heartbeat``, else
``$CRAWLER_HEARTBEAT``, else ``$XDG_STATE_HOME/crawler/heartbeat.json``.

The database: ``--db``, else ``$CRAWLER_DB_URL``, else ``./db/crawler.sqlite`` if it exists,
else ``$XDG_DATA_HOME/crawler/crawler.sqlite`` (``~/.local/share/crawler/crawler.sqlite``) if it
exists or if ``sources.yaml`` was found in the user's config folder (a per-user setup keeps its
data there), else ``./db/crawler.sqlite`` (created).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from crawler.store.database import DEFAULT_DB_URL
from crawler.xdg import xdg_dir

CONFIG_ENV = "CRAWLER_CONFIG"
HEARTBEAT_ENV = "CRAWLER_HEARTBEAT"
HEARTBEAT_NAME = "heartbeat.json"
DB_ENV = "CRAWLER_DB_URL"
CONFIG_NAME = "sources.yaml"
LOCAL_DB = Path(DEFAULT_DB_URL.removeprefix("sqlite:///"))
USER_DB_NAME = "crawler.sqlite"


def user_config_dir(env: Mapping[str, str]) -> Path:
    return xdg_dir(env, "XDG_CONFIG_HOME", ".config") / "crawler"


def user_data_dir(env: Mapping[str, str]) -> Path:
    return xdg_dir(env, "XDG_DATA_HOME", ".local/share") / "crawler"


def heartbeat_path(explicit: str | None, env: Mapping[str, str]) -> Path:
    """The heartbeat `crawler schedule` writes and `crawler health` reads: ``--heartbeat``,
    else ``$CRAWLER_HEARTBEAT``, else ``$XDG_STATE_HOME/crawler/heartbeat.json``
    (``~/.local/state/crawler/heartbeat.json``): the same file for both by default."""
    if explicit:
        return Path(explicit)
    if env.get(HEARTBEAT_ENV):
        return Path(env[HEARTBEAT_ENV])
    return xdg_dir(env, "XDG_STATE_HOME", ".local/state") / "crawler" / HEARTBEAT_NAME


def config_path(explicit: str | None, env: Mapping[str, str]) -> Path:
    """The sources.yaml to read; ``./sources.yaml`` when none is found (the error names it)."""
    if explicit:
        return Path(explicit)
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV])
    local = Path(CONFIG_NAME)
    user = user_config_dir(env) / CONFIG_NAME
    return user if not local.exists() and user.is_file() else local


def db_url(explicit: str | None, env: Mapping[str, str]) -> str:
    """The database URL to open (see the module docstring for the order)."""
    if explicit:
        return explicit
    if env.get(DB_ENV):
        return env[DB_ENV]
    if LOCAL_DB.exists():
        return DEFAULT_DB_URL
    user = user_data_dir(env) / USER_DB_NAME
    per_user_config = not env.get(CONFIG_ENV) and config_path(None, env) != Path(CONFIG_NAME)
    if user.exists() or per_user_config:
        return f"sqlite:///{user}"
    return DEFAULT_DB_URL
