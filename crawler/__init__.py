"""The crawler: upstream releases, tags, licenses and vendor pages audited nightly."""

# The one place the version is written: pyproject.toml reads it from here (setuptools'
# dynamic version), so the installed metadata says the same; a literal, not
# importlib.metadata.version("crawler"), which costs every start some 25 ms of CPU (the
# metadata machinery's imports and a walk over sys.path's distributions).
__version__ = "0.1.0"
