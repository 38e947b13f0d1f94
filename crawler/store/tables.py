"""SQLAlchemy table definitions. Schema changes go through an Alembic revision in migrations/."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class ProjectSetRow(Base):
    """The list of project names an audit covered, stored once per distinct list."""

    __tablename__ = "project_sets"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    names: Mapped[str] = mapped_column(Text)  # JSON list


class AuditRow(Base):
    __tablename__ = "audits"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    status: Mapped[str] = mapped_column(String(16))  # running | complete | partial | failed
    config_path: Mapped[str] = mapped_column(Text)
    project_set_id: Mapped[int] = mapped_column(ForeignKey("project_sets.id"))
    baseline_audit_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # the projects this audit actually checked (None for audits before revision 0002)
    checked_set_id: Mapped[int | None] = mapped_column(
        ForeignKey("project_sets.id", name="fk_audits_checked_set"), nullable=True
    )
    stats: Mapped[str] = mapped_column(Text, default="{}")  # JSON: requests, points, errors, ...
    # when its report was delivered (sent, or found not worth sending); a finished audit
    # without it is delivered late by the next run
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class SnapshotRow(Base):
    """A distinct observed state of one project; stored once, however often it is seen."""

    __tablename__ = "snapshots"
    __table_args__ = (UniqueConstraint("project", "digest"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project: Mapped[str] = mapped_column(String(200))
    digest: Mapped[str] = mapped_column(String(64))
    data: Mapped[str] = mapped_column(Text)  # ProjectSnapshot.to_dict() as JSON
    first_audit_id: Mapped[int] = mapped_column(ForeignKey("audits.id"))


class ObservationRow(Base):
    """What an audit saw of a project: written only when it differs from the last good state,
    or when the project could not be checked (error, deferred, untracked)."""

    __tablename__ = "observations"
    __table_args__ = (Index("ix_observations_project_audit", "project", "audit_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    audit_id: Mapped[int] = mapped_column(ForeignKey("audits.id"), index=True)
    project: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))  # ok | error | deferred | untracked
    snapshot_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id"), nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)


class FetchErrorRow(Base):
    __tablename__ = "fetch_errors"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    audit_id: Mapped[int] = mapped_column(ForeignKey("audits.id"), index=True)
    project: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(200))
    url: Mapped[str] = mapped_column(Text)
    message: Mapped[str] = mapped_column(Text)


class HttpCacheRow(Base):
    """Validators and body of the last 200 answer per request identity (conditional requests)."""

    __tablename__ = "http_cache"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    etag: Mapped[str | None] = mapped_column(Text, nullable=True)
    last_modified: Mapped[str | None] = mapped_column(Text, nullable=True)
    content_type: Mapped[str | None] = mapped_column(Text, nullable=True)
    body: Mapped[bytes] = mapped_column(LargeBinary)  # zlib-compressed
    stored_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # last time a request used the entry (touched at most every few hours); prune reads it
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class AuditLockRow(Base):
    """Who runs the audit. On SQLite this row is the lock itself (taken over when its process
    is gone or its lease expired); on PostgreSQL an advisory lock is, and the row describes it."""

    __tablename__ = "audit_lock"
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    token: Mapped[str] = mapped_column(String(36))  # identifies one acquisition
    owner: Mapped[str] = mapped_column(Text)
    host: Mapped[str] = mapped_column(Text)
    pid: Mapped[int] = mapped_column(Integer)
    # what tells this PID's process from a later one given the same PID (None before 0006)
    process_start: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    boot_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    backend_pid: Mapped[int | None] = mapped_column(Integer, nullable=True)  # PostgreSQL only
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    lease_until: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class PendingRow(Base):
    """A change the catalog has not taken yet: open from the audit that first saw it until the
    curated catalog holds it (``merged``) or a person acknowledges it (``acknowledged``)."""

    __tablename__ = "pending_changes"
    __table_args__ = (Index("ix_pending_changes_open", "closed_at", "project"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(32))
    value: Mapped[str] = mapped_column(Text)  # what the crawl says: a tag, an SPDX id, a cell...
    # what it replaced (the release the row showed, the SPDX id before…); None: nothing, or
    # opened before revision 0008
    before: Mapped[str | None] = mapped_column(Text, nullable=True)
    summary: Mapped[str] = mapped_column(Text)
    evidence_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    # not a foreign key: pruning old audits keeps what is still pending
    first_audit_id: Mapped[int] = mapped_column(Integer)
    first_seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    closed_how: Mapped[str | None] = mapped_column(String(16), nullable=True)


class LinkCheckRow(Base):
    """One link's history between nights (crawler.diff.links.LinkHistory); keyed by the URL's
    SHA-256, as a URL may be longer than an index allows."""

    __tablename__ = "link_checks"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    outcome: Mapped[str] = mapped_column(String(16))  # ok | moved | broken | unreachable | ...
    last_checked: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_ok: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    failing_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    gone_nights: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    moved_to: Mapped[str | None] = mapped_column(Text, nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    etag: Mapped[str | None] = mapped_column(Text, nullable=True)
    last_modified: Mapped[str | None] = mapped_column(Text, nullable=True)


class LinkFindingRow(Base):
    """What an audit's link step reported, as facts: each change (``change``: the Change's
    fields) and each link failing but not reported yet or refused (``link``), in report order;
    kept so that a re-rendered report (``crawler report``, ``crawler diff``) shows them as the
    audit's own did. Pruned with its audit."""

    __tablename__ = "link_findings"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    audit_id: Mapped[int] = mapped_column(ForeignKey("audits.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # change | link
    project: Mapped[str] = mapped_column(String(200))
    data: Mapped[str] = mapped_column(Text)  # JSON
