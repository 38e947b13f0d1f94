"""Upstream sources, one module (or package) each; see crawler.upstream.source."""
