"""The crawler: upstream releases, tags, licenses and vendor pages audited nightly."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("crawler")
except PackageNotFoundError:  # run from a source tree that was not installed
    __version__ = "0+unknown"
