"""Repository facets: renamed or transferred (by the forge's stable id), archived. Pure."""

from __future__ import annotations

from crawler.model import Change, ChangeKind, ProjectSnapshot


def repo_changes(
    name: str,
    configured: str | None,
    before: ProjectSnapshot | None,
    after: ProjectSnapshot,
    line: int = 0,
) -> list[Change]:
    """``configured`` is the repository path the project was fetched by (from sources.yaml),
    ``line`` the sources.yaml line of the key that names it (0: unknown)."""
    if after.repo is None:
        return []
    changes = []
    old_name = before.repo.full_name if before and before.repo else configured
    moved = old_name is not None and old_name.lower() != after.repo.full_name.lower()
    replaced = before is not None and before.repo is not None and before.repo.id != after.repo.id
    if moved or replaced:
        changes.append(
            Change(
                project=name,
                kind=ChangeKind.REPO_MOVED,
                before=old_name,
                after=after.repo.full_name,
                evidence_url=after.repo.url,
                details={
                    "before_id": before.repo.id if before and before.repo else None,
                    "after_id": after.repo.id,
                    "moved": moved,
                    "replaced": replaced,
                    "forge": after.repo.forge,
                    **({"line": line} if line else {}),
                },
            )
        )
    if after.repo.archived and not (before and before.repo and before.repo.archived):
        changes.append(
            Change(
                project=name,
                kind=ChangeKind.REPO_ARCHIVED,
                before=False,
                after=True,
                evidence_url=after.repo.url,
                details={"repo": after.repo.full_name},
            )
        )
    return changes
