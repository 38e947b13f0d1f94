"""The ``crawler`` command and ``python -m crawler``: the command line, imported with the
cyclic garbage collector paused."""

import gc


def main() -> None:
    # Importing the command line makes some hundred thousand objects (modules, classes,
    # functions, SQLAlchemy's and pydantic's tables) and no garbage: the collector's passes over
    # them were a fifth of the imports' CPU (0.15 s of every start). Paused for the imports only,
    # and what they made frozen (kept out of every later collection) before it resumes: else the
    # first allocation after it resumes walks all of them in one young-generation pass (45 ms).
    gc.disable()
    try:
        from crawler.cli import main as run
    finally:
        gc.freeze()
        gc.enable()
    run()


if __name__ == "__main__":
    main()
