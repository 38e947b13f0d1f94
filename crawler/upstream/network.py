"""How the forges and registries reach the network: the environment's proxies and CA bundle,
with the request deadline kept.

The rule, the same for every source (GitHub through requests, the others through httpx):

* ``HTTPS_PROXY`` for https:// URLs, ``HTTP_PROXY`` for http:// ones, ``ALL_PROXY`` for both
  (lower-case names too), ``NO_PROXY`` (comma-separated hosts, domains, IP addresses, ``*``)
  for hosts reached directly, read as curl reads it;
* a company CA: ``REQUESTS_CA_BUNDLE``, else ``SSL_CERT_FILE`` (a PEM file that replaces the
  default trust store, as it does for curl and requests), else certifi's bundle.

Vendor pages follow their own rule (``crawler.upstream.pages``): fetched directly, never through
a proxy, so that the private-address guard checks the address actually connected to; they do
use the CA bundle.

httpx turns the environment's proxies off once a client is given its own transport (ours, which
enforces the deadline: ``crawler.upstream.deadline``), so the proxy routes are built here, one
``DeadlineTransport`` per route, with httpx's own reading of the environment.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from typing import Any

CA_BUNDLE_VARIABLES = ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")


def ca_bundle(env: Mapping[str, str] | None = None) -> str | None:
    """The CA bundle the environment names, or None for the default."""
    env = os.environ if env is None else env
    return next((env[name] for name in CA_BUNDLE_VARIABLES if env.get(name)), None)


def ssl_context(env: Mapping[str, str] | None = None) -> ssl.SSLContext:
    """The TLS context of every httpx client: the environment's CA bundle, else certifi's."""
    bundle = ca_bundle(env)
    if bundle is None:
        import certifi

        bundle = certifi.where()
    return ssl.create_default_context(cafile=bundle)


def client_transports(*, proxies: bool = True) -> dict[str, Any]:
    """``httpx.Client`` keyword arguments: ``transport`` (direct) and ``mounts`` (one proxied
    route per environment proxy; hosts in NO_PROXY mapped to the direct transport).

    Every transport obeys ``crawler.upstream.deadline.deadline()``; ``proxies=False`` for
    clients that must connect directly (vendor pages)."""
    from httpx._utils import get_environment_proxies  # httpx's reading of *_PROXY and NO_PROXY

    from crawler.upstream.deadline import DeadlineTransport

    context = ssl_context()
    routes = get_environment_proxies() if proxies else {}
    mounts = {
        pattern: None if proxy is None else DeadlineTransport(proxy=proxy, verify=context)
        for pattern, proxy in routes.items()
    }
    return {"transport": DeadlineTransport(verify=context), "mounts": mounts}
