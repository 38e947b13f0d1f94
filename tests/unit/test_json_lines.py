"""Under `--log-format json` stdout and stderr are JsonLines streams: whatever is written to
them leaves as one JSON object a line (tests/e2e/test_json_log_format_every_line.py runs every
command through them)."""

from __future__ import annotations

import io
import json

from crawler.logs import JsonLines

SECRET = "ghp_unit_secret_token_0123456789"


def _stream() -> tuple[io.StringIO, JsonLines]:
    real = io.StringIO()
    return real, JsonLines(real, "crawler.result", "info", lambda: [SECRET])


def test_a_plain_line_becomes_one_object_and_a_json_object_passes_as_it_is() -> None:
    real, lines = _stream()
    lines.write("wrote export/catalog.json\n")
    lines.write('{"time": "t", "level": "info", "logger": "x", "message": "m"}\n')
    first, second = (json.loads(line) for line in real.getvalue().splitlines())
    assert {k: first[k] for k in ("level", "logger", "message")} == {
        "level": "info", "logger": "crawler.result", "message": "wrote export/catalog.json"
    }  # fmt: skip
    assert first["time"].endswith("Z")  # UTC times written one way, as the log records say them
    assert second == {"time": "t", "level": "info", "logger": "x", "message": "m"}


def test_a_line_written_in_parts_is_one_object_blank_lines_none() -> None:
    real, lines = _stream()
    lines.write("report: ")
    lines.flush()  # click flushes after every echo: the line is not cut there
    lines.write("reports/latest/report.md\n\n\n")
    lines.write("a last line without its newline")
    lines.finish()
    assert [json.loads(line)["message"] for line in real.getvalue().splitlines()] == [
        "report: reports/latest/report.md",
        "a last line without its newline",
    ]


def test_a_json_array_or_a_secret_is_not_let_through() -> None:
    real, lines = _stream()
    lines.write('["not", "an", "object"]\n')
    lines.write(f"token {SECRET} in a library's print\n")
    first, second = (json.loads(line) for line in real.getvalue().splitlines())
    assert first["message"] == '["not", "an", "object"]'
    assert second["message"] == "token *** in a library's print"
    assert SECRET not in real.getvalue()


def test_a_reader_that_went_away_ends_the_output_without_an_error() -> None:
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    lines = JsonLines(Closed(), "crawler.result", "info", lambda: [])
    lines.write("first\n")
    lines.write("second\n")
    lines.finish()
