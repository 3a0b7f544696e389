"""wrk_output: reading wrk 4.x's text report (run with --latency), and its
units. The wrk studies parse every run with parse(); the figures read the
latency distribution's lines through ms(). Running wrk is the harness's
(probes/harness/wrk.py)."""

import re

UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}  # wrk's time units, in ms
TIME_RE = r"([0-9]+(?:\.[0-9]+)?)(us|ms|s|m|h)"  # a wrk time: its number and its unit


def ms(text, digits=6):
    """wrk's time format ("273.00us", "1.21ms", "2.00s", "1.00m") in ms,
    rounded to digits places (None: not rounded). Raises ValueError when
    text is not a wrk time."""
    m = re.fullmatch(TIME_RE, text.strip())
    if not m:
        raise ValueError("wrk output: %r is not a time" % text)
    value = float(m.group(1)) * UNITS_MS[m.group(2)]
    return value if digits is None else round(value, digits)


def parse(text):
    """Parses wrk's text report into {requests_per_s, requests, duration_s,
    latency_ms: {p50, p99}, errors}. errors always carries
    connect/read/write/timeout (wrk's "Socket errors" line, printed only when
    one is non-zero) and non_2xx_3xx (its "Non-2xx or 3xx responses" line,
    likewise). Raises ValueError when a needed line is missing."""
    rps = re.search(r"^Requests/sec:\s*([0-9]+(?:\.[0-9]+)?)\s*$", text, re.M)
    if not rps:
        raise ValueError("wrk output has no Requests/sec line")
    total = re.search(r"^\s*([0-9]+) requests in " + TIME_RE + r",", text, re.M)
    if not total:
        raise ValueError("wrk output has no 'N requests in T' line")
    dist = text.split("Latency Distribution", 1)
    if len(dist) != 2:
        raise ValueError("wrk output has no Latency Distribution (was --latency given?)")
    latency = {}
    for pct in ("50", "99"):
        m = re.search(r"^\s*" + pct + r"(?:\.0+)?%\s+(\S+)\s*$", dist[1], re.M)
        if not m:
            raise ValueError("wrk output has no %s%% latency line" % pct)
        latency["p" + pct] = ms(m.group(1))
    errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "non_2xx_3xx": 0}
    sock = re.search(r"^\s*Socket errors:\s*connect ([0-9]+), read ([0-9]+), write ([0-9]+), "
                     r"timeout ([0-9]+)\s*$", text, re.M)
    if sock:
        for key, value in zip(("connect", "read", "write", "timeout"), sock.groups()):
            errors[key] = int(value)
    elif "Socket errors" in text:
        raise ValueError("wrk output: a Socket errors line this parser does not know")
    status = re.search(r"^\s*Non-2xx or 3xx responses:\s*([0-9]+)\s*$", text, re.M)
    if status:
        errors["non_2xx_3xx"] = int(status.group(1))
    elif "Non-2xx" in text:
        raise ValueError("wrk output: a Non-2xx line this parser does not know")
    return {"requests_per_s": float(rps.group(1)), "requests": int(total.group(1)),
            "duration_s": round(ms(total.group(2) + total.group(3)) / 1000.0, 6),
            "latency_ms": latency, "errors": errors}
