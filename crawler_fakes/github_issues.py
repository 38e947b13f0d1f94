"""The issues part of the fake GitHub: list (by state and labels), search, create, edit, comment.

Answers in the REST v3 shapes PyGithub reads. Writes need a token; a body over GitHub's
65,536 characters is refused with the real 422 "Validation Failed" body. Issues live in memory
per repository and may be inspected by tests (``FakeGitHub.issues``).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

MAX_BODY = 65536
_ISSUE_DOC = "https://docs.github.com/rest/issues/issues"


@dataclass
class FakeComment:
    id: int
    body: str
    created_at: str


@dataclass
class FakeIssue:
    number: int
    title: str
    body: str | None
    labels: list[str]
    state: str = "open"
    comments: list[FakeComment] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _user() -> dict[str, Any]:
    return {"login": "crawler-bot", "id": 41898282, "type": "Bot", "site_admin": False}


@dataclass
class IssueAnswer:
    status: int
    body: Any


class IssueTracker:
    """Issues of every repository the fake serves, keyed by lower-case ``owner/name``."""

    def __init__(self) -> None:
        self.by_repo: dict[str, list[FakeIssue]] = {}
        self._lock = threading.Lock()
        self._next_comment = 1000

    def issues(self, full_name: str) -> list[FakeIssue]:
        with self._lock:
            return list(self.by_repo.get(full_name.lower(), []))

    # ---- JSON shapes

    def _issue_json(self, base: str, full_name: str, issue: FakeIssue) -> dict[str, Any]:
        api = f"{base}/repos/{full_name}"
        return {
            "url": f"{api}/issues/{issue.number}",
            "repository_url": api,
            "comments_url": f"{api}/issues/{issue.number}/comments",
            "html_url": f"https://github.com/{full_name}/issues/{issue.number}",
            "id": 7_000_000 + issue.number,
            "node_id": f"I_{issue.number}",
            "number": issue.number,
            "title": issue.title,
            "user": _user(),
            "labels": [
                {
                    "id": 900 + i,
                    "node_id": f"LA_{name}",
                    "url": f"{api}/labels/{name}",
                    "name": name,
                    "color": "ededed",
                    "default": False,
                    "description": None,
                }
                for i, name in enumerate(issue.labels)
            ],
            "state": issue.state,
            "locked": False,
            "comments": len(issue.comments),
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
            "closed_at": None,
            "author_association": "NONE",
            "body": issue.body,
        }

    def _comment_json(
        self, base: str, full_name: str, issue: FakeIssue, comment: FakeComment
    ) -> dict[str, Any]:
        api = f"{base}/repos/{full_name}"
        return {
            "id": comment.id,
            "node_id": f"IC_{comment.id}",
            "url": f"{api}/issues/comments/{comment.id}",
            "html_url": (
                f"https://github.com/{full_name}/issues/{issue.number}#issuecomment-{comment.id}"
            ),
            "issue_url": f"{api}/issues/{issue.number}",
            "body": comment.body,
            "user": _user(),
            "created_at": comment.created_at,
            "updated_at": comment.created_at,
            "author_association": "NONE",
        }

    # ---- requests

    def answer(
        self,
        method: str,
        full_name: str,
        sub: str,
        query: str,
        body: bytes,
        base: str,
        authenticated: bool,
    ) -> IssueAnswer | None:
        """Answer ``/repos/{full_name}/issues…``; None when ``sub`` is not an issues path."""
        match = re.fullmatch(r"/issues(?:/(\d+))?(/comments)?/?", sub)
        if match is None:
            return None
        number = int(match[1]) if match[1] else None
        if method != "GET" and not authenticated:
            return IssueAnswer(401, {"message": "Requires authentication", "status": "401"})
        try:
            payload = json.loads(body) if body else {}
        except ValueError:
            return IssueAnswer(400, {"message": "Problems parsing JSON", "status": "400"})
        with self._lock:
            issues = self.by_repo.setdefault(full_name.lower(), [])
            if number is None:
                if method == "GET":
                    return IssueAnswer(200, self._list(base, full_name, issues, query))
                if method == "POST":
                    return self._create(base, full_name, issues, payload)
                return IssueAnswer(404, {"message": "Not Found", "status": "404"})
            issue = next((i for i in issues if i.number == number), None)
            if issue is None:
                return IssueAnswer(404, {"message": "Not Found", "status": "404"})
            if match[2] and method == "POST":
                return self._comment(base, full_name, issue, payload)
            if match[2] and method == "GET":
                comments = [self._comment_json(base, full_name, issue, c) for c in issue.comments]
                return IssueAnswer(200, comments)
            if method == "GET":
                return IssueAnswer(200, self._issue_json(base, full_name, issue))
            if method == "PATCH":
                return self._edit(base, full_name, issue, payload)
        return IssueAnswer(404, {"message": "Not Found", "status": "404"})

    def search(self, query: str, base: str, known: dict[str, str]) -> IssueAnswer:
        """``GET /search/issues?q=repo:o/r is:issue is:open label:x``; ``known`` maps the
        lower-case names of existing repositories to their spelling."""
        wanted: dict[str, list[str]] = {}
        for term in dict(parse_qsl(query)).get("q", "").split():
            key, colon, value = term.partition(":")
            if colon:
                wanted.setdefault(key, []).append(value.strip('"'))
        repos = [r.lower() for r in wanted.get("repo", [])]
        items = []
        with self._lock:
            for repo, issues in self.by_repo.items():
                if repos and repo not in repos:
                    continue
                for issue in issues:
                    states = [v for v in wanted.get("is", []) if v in ("open", "closed")]
                    if states and issue.state not in states:
                        continue
                    if not set(wanted.get("label", [])) <= set(issue.labels):
                        continue
                    items.append(self._issue_json(base, known.get(repo, repo), issue))
        return IssueAnswer(
            200, {"total_count": len(items), "incomplete_results": False, "items": items}
        )

    def _list(
        self, base: str, full_name: str, issues: list[FakeIssue], query: str
    ) -> list[dict[str, Any]]:
        params = dict(parse_qsl(query))
        state = params.get("state", "open")
        labels = {name for name in params.get("labels", "").split(",") if name}
        found = [
            i for i in issues if (state == "all" or i.state == state) and labels <= set(i.labels)
        ]
        found.sort(key=lambda i: -i.number)  # GitHub's default: newest first
        return [self._issue_json(base, full_name, i) for i in found]

    @staticmethod
    def _too_long(body: Any) -> IssueAnswer | None:
        if isinstance(body, str) and len(body) > MAX_BODY:
            return IssueAnswer(
                422,
                {
                    "message": "Validation Failed",
                    "errors": [
                        {
                            "resource": "Issue",
                            "code": "custom",
                            "field": "body",
                            "message": f"body is too long (maximum is {MAX_BODY} characters)",
                        }
                    ],
                    "documentation_url": _ISSUE_DOC,
                    "status": "422",
                },
            )
        return None

    def _create(
        self, base: str, full_name: str, issues: list[FakeIssue], payload: dict[str, Any]
    ) -> IssueAnswer:
        title = payload.get("title")
        if not isinstance(title, str) or not title:
            return IssueAnswer(422, {"message": "Validation Failed", "status": "422"})
        refused = self._too_long(payload.get("body"))
        if refused:
            return refused
        stamp = _now()
        issue = FakeIssue(
            number=max((i.number for i in issues), default=0) + 1,
            title=title,
            body=payload.get("body"),
            labels=[str(name) for name in payload.get("labels") or []],
            created_at=stamp,
            updated_at=stamp,
        )
        issues.append(issue)
        return IssueAnswer(201, self._issue_json(base, full_name, issue))

    def _edit(
        self, base: str, full_name: str, issue: FakeIssue, payload: dict[str, Any]
    ) -> IssueAnswer:
        refused = self._too_long(payload.get("body"))
        if refused:
            return refused
        if "title" in payload:
            issue.title = str(payload["title"])
        if "body" in payload:
            issue.body = payload["body"]
        if "state" in payload:
            issue.state = str(payload["state"])
        if "labels" in payload:
            issue.labels = [str(name) for name in payload["labels"]]
        issue.updated_at = _now()
        return IssueAnswer(200, self._issue_json(base, full_name, issue))

    def _comment(
        self, base: str, full_name: str, issue: FakeIssue, payload: dict[str, Any]
    ) -> IssueAnswer:
        text = payload.get("body")
        if not isinstance(text, str) or not text:
            return IssueAnswer(422, {"message": "Validation Failed", "status": "422"})
        refused = self._too_long(text)
        if refused:
            return refused
        self._next_comment += 1
        comment = FakeComment(self._next_comment, text, _now())
        issue.comments.append(comment)
        issue.updated_at = comment.created_at
        return IssueAnswer(201, self._comment_json(base, full_name, issue, comment))
