"""One GitHub issue per catalog, kept up to date: created once, then its body replaced by the
latest report and a comment added per audit. PyGithub against the configured API URL."""

from __future__ import annotations

from crawler.config import GitHubIssueSettings
from crawler.logs import adopt_library_loggers, redact
from crawler.notify.channels import ChannelResult
from crawler.notify.message import ISSUE_MARKER
from crawler.upstream.http import USER_AGENT
from crawler.upstream.network import ca_bundle


def publish_issue(
    settings: GitHubIssueSettings,
    *,
    api_url: str,
    token: str | None,
    body: str,
    comment: str,
    seconds_between_writes: float | None = 1.0,
) -> ChannelResult:
    """Create or update the catalog issue; never raises, never puts the token in its result.

    ``seconds_between_writes`` keeps PyGithub's pacing of writes, which GitHub asks for to stay
    clear of its secondary rate limits (tests against the loopback fake turn it off).
    """
    from github import Auth, Github, GithubException

    adopt_library_loggers()

    channel = f"github-issue {settings.repo}"
    if not token:
        return ChannelResult(channel, False, "needs GITHUB_TOKEN or GH_TOKEN with issues: write")
    client = Github(
        base_url=api_url,
        auth=Auth.Token(token),
        timeout=30,
        retry=None,  # a failed delivery is reported, and the next audit tries again
        user_agent=USER_AGENT,
        seconds_between_requests=None,
        seconds_between_writes=seconds_between_writes,
        verify=ca_bundle() or True,  # proxies: requests reads the environment
    )
    try:
        repo = client.get_repo(settings.repo)
        issue = next(
            (
                found
                for found in repo.get_issues(state="open", labels=list(settings.labels))
                if found.pull_request is None
                and (ISSUE_MARKER in (found.body or "") or found.title == settings.title)
            ),
            None,
        )
        if issue is None:
            issue = repo.create_issue(title=settings.title, body=body, labels=list(settings.labels))
            action = f"created #{issue.number}"
        else:
            issue.edit(title=settings.title, body=body)
            action = f"updated #{issue.number}"
        issue.create_comment(comment)
        return ChannelResult(channel, True, f"{action}, comment added", issue.html_url)
    except GithubException as exc:
        data = exc.data if isinstance(exc.data, dict) else {}
        details = [str(e.get("message")) for e in data.get("errors") or [] if isinstance(e, dict)]
        message = "; ".join([str(data.get("message") or "no message"), *details])
        reason = f"GitHub answered {exc.status}: {message}"
        return ChannelResult(channel, False, redact(reason, [token]))
    except Exception as exc:  # connection refused, timeout, malformed answer
        return ChannelResult(channel, False, redact(f"{type(exc).__name__}: {exc}", [token]))
    finally:
        client.close()
