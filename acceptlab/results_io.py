"""results_io.py: reading a measured run's files, shared by report.py, its
sections and figures.py (and quicklook.py through figures.py), and by
models/skew.py: one set of errors naming FILE:LINE, one strict JSON reader (no
NaN or Infinity), one JSON Lines reader, and arm_of: a row's arm, named
"arm" (or "variant" in rows written before the rows said arm). Each program prefixes the error with
its own name (InputError.render); one with messages of its own (skew.py) words
them from InputError.reason.
"""

import json
import os
import tempfile
from pathlib import Path
from typing import Callable, Optional


class InputError(Exception):
    """A problem with one input file; `line` is None when the whole file is at fault."""

    program = "report"  # the name render() prefixes; figures.py's subclass says "figures"

    def __init__(self, path: Path, line: Optional[int], message: str, reason: str = "row",
                 strerror: Optional[str] = None):
        super().__init__(message)
        self.path = path
        self.line = line
        self.message = message
        # What went wrong, for a program that words it itself: "read" (the file;
        # strerror: the system's words), "utf8", "json" (a line is not JSON),
        # "object" (a line is JSON but not an object), "row" (the content).
        self.reason = reason
        self.strerror = strerror

    def render(self) -> str:
        where = shown(self.path) if self.line is None else f"{shown(self.path)}:{self.line}"
        return f"{self.program}: {where}: {self.message}"


class RowError(Exception):
    """A row (or a meta.json field) is not what the program needs; the reader adds file:line."""

    def __init__(self, message: str, key_path: tuple = ()):
        super().__init__(message)
        self.message = message
        self.key_path = key_path  # where in meta.json, to find a line for the message


def shown(path: Path) -> str:
    """The path as a user should read it: relative to the current directory when under it."""
    path = Path(path)
    if path.is_absolute():
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)
    return str(path)


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as e:
        raise InputError(path, None, "cannot read: file does not exist", "read", e.strerror) from None
    except IsADirectoryError as e:
        raise InputError(path, None, "cannot read: is a directory", "read", e.strerror) from None
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror or e}", "read", e.strerror or str(e)) from None


def decode_utf8(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, data.count(b"\n", 0, e.start) + 1, "not valid UTF-8", "utf8") from None


def read_text(path: Path) -> str:
    return decode_utf8(path, read_bytes(path))


def _reject_constant(name: str):
    # Python's json accepts NaN and Infinity; JSON does not, and a ratio of
    # Infinity would slip past the "null when a worker got none" contract.
    raise ValueError(f"non-standard JSON constant {name}")


def parse_json(text: str):
    """json.loads without NaN/Infinity. Raises json.JSONDecodeError or ValueError."""
    return json.loads(text, parse_constant=_reject_constant)


def json_kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def read_jsonl(path: Path, parse_row: Callable[[dict, int], object]) -> list:
    """parse_row(obj, lineno) for every non-blank line of a JSON Lines file, in
    file order; a RowError it raises becomes an InputError naming the line."""
    data = read_bytes(path)
    rows = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(path, lineno, "not valid UTF-8", "utf8") from None
        if not line.strip():
            continue
        try:
            obj = parse_json(line)
        except json.JSONDecodeError as e:
            raise InputError(path, lineno, f"invalid JSON: {e.msg}", "json") from None
        except ValueError as e:
            raise InputError(path, lineno, f"invalid JSON: {e}", "json") from None
        if not isinstance(obj, dict):
            raise InputError(path, lineno, f"expected a JSON object, got {json_kind(obj)}", "object")
        try:
            rows.append(parse_row(obj, lineno))
        except RowError as e:
            raise InputError(path, lineno, e.message) from None
    return rows


# A row names the measured configuration it belongs to, its arm
# (acceptlab/arms.py), by "arm". Rows written before the studies said so name
# it "variant", the word now kept for the server's C accept variant: every
# reader takes the arm through arm_of (or arm_key, to name the key in an
# error), so an older run reads as it did.
ARM_KEYS = ("arm", "variant")


def arm_key(row: dict) -> str:
    """The key a row names its arm by: "arm", or "variant" in a row written
    before the rows said arm ("arm" when it has neither)."""
    return next((k for k in ARM_KEYS if k in row), ARM_KEYS[0])


def arm_of(row: dict):
    """The row's arm: row["arm"], or row["variant"] in an older row; None
    when it has neither."""
    return row.get("arm", row.get("variant"))


def write_atomic(path: Path, data: bytes) -> None:
    """Temp file in the same directory, then rename: readers see the old file or the new one
    (with the old one's mode; a new one gets the umask's)."""
    directory = path.parent
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    except OSError as e:
        raise InputError(path, None, f"cannot write: {e.strerror or e}") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise InputError(path, None, f"cannot write: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InputError(path, None, f"cannot write: {e.strerror or e}") from None
