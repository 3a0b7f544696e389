"""The markdown tables that say what the server says about itself, rendered
from the server so that each fact is written once, in C:

- the variants tables of README.md and docs/server.md, from
  `bin/acceptlab-server --list-variants` (each variant's `mechanism` is
  written in its file in servers/variants/);
- docs/server.md's two environment tables (knobs, test switches), from
  `bin/acceptlab-server --list-environment` (servers/main.c).

Each table sits between two marker comments in its file:

    <!-- BEGIN variants: ... -->
    | variant | mechanism |
    ...
    <!-- END variants -->

usage: /usr/bin/python3 -m ci.server_tables --check | --write [--server PATH] [--root DIR]

--check exits 0 when every table is what the server says, 1 naming each file
and table that differs or whose markers are missing; --write rewrites the
tables in place and names the files it changed. Exit 2: a usage error, or
the server could not be run. Standard library only.
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("server_tables.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m ci.server_tables\n")
    sys.exit(2)

import argparse
import json
import os
import re
import subprocess

from acceptlab.paths import ROOT

SERVER = os.path.join(ROOT, "bin", "acceptlab-server")
MARKERS = re.compile(r"(<!-- BEGIN (?P<name>[\w ]+?):[^>]*-->\n)(?P<body>.*?)(<!-- END (?P=name) -->)", re.S)


def cell(text):
    """text as one markdown table cell: a pipe escaped (also inside a code
    span, as GitHub's tables want), no line break."""
    return text.replace("|", "\\|").replace("\n", " ")


def variants_table(variants, with_knobs):
    if with_knobs:
        rows = ["| variant | mechanism | knob options |", "|---|---|---|"]
        rows += ["| `%s` | %s | %s |" % (v["variant"], cell(v["mechanism"]),
                                         ", ".join("`%s`" % k for k in v["knobs"]) or "-") for v in variants]
    else:
        rows = ["| variant | mechanism |", "|---|---|"]
        rows += ["| `%s` | %s |" % (v["variant"], cell(v["mechanism"])) for v in variants]
    return "\n".join(rows) + "\n"


def environment_table(variables, kind):
    rows = ["| variable | read by | effect |", "|---|---|---|"]
    rows += ["| `%s` | %s | %s |" % (cell("%s=%s" % (e["name"], e["value"])), cell(e["applies"]), cell(e["effect"]))
             for e in variables if e["kind"] == kind]
    return "\n".join(rows) + "\n"


# (file, marker name) -> (the option it is rendered from, how).
TABLES = {
    ("README.md", "variants"): ("--list-variants", lambda v, e: variants_table(v, with_knobs=False)),
    ("docs/server.md", "variants"): ("--list-variants", lambda v, e: variants_table(v, with_knobs=True)),
    ("docs/server.md", "environment knobs"): ("--list-environment", lambda v, e: environment_table(e, "knob")),
    ("docs/server.md", "environment test switches"): ("--list-environment",
                                                      lambda v, e: environment_table(e, "test")),
}


def server_lines(server, option):
    """The JSON lines `server option` prints; exits 2 if it cannot."""
    try:
        res = subprocess.run([server, option], capture_output=True, text=True, timeout=20)
    except OSError as e:
        sys.exit("server_tables: %s %s: %s (run make first)" % (server, option, e.strerror))
    if res.returncode != 0:
        sys.exit("server_tables: %s %s exited %d: %s" % (server, option, res.returncode, res.stderr.strip()))
    return [json.loads(line) for line in res.stdout.splitlines() if line.strip()]


def render(text, path, tables):
    """text with each of path's tables replaced by what tables renders;
    returns (new text, [problem, ...]) where a problem names a table whose
    markers are missing."""
    wanted = {name: body for (f, name), body in tables.items() if f == path}
    found = set()

    def replace(m):
        name = m.group("name")
        if name not in wanted:
            return m.group(0)
        found.add(name)
        return m.group(1) + wanted[name] + m.group(4)

    new = MARKERS.sub(replace, text)
    problems = ["%s: no markers for the %s table (<!-- BEGIN %s: ... --> and <!-- END %s -->)" % (path, n, n, n)
                for n in wanted if n not in found]
    return new, problems


def main(argv=None):
    ap = argparse.ArgumentParser(description="Render the server's tables into README.md and docs/server.md.")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", action="store_true", help="exit 1 naming each table that differs")
    what.add_argument("--write", action="store_true", help="rewrite the tables in place")
    ap.add_argument("--server", default=SERVER, help="the server binary (default bin/acceptlab-server)")
    ap.add_argument("--root", default=ROOT, help="the tree whose files are read and written (default this one)")
    args = ap.parse_args(argv)

    variants = server_lines(args.server, "--list-variants")
    environment = server_lines(args.server, "--list-environment")
    tables = {key: how(variants, environment) for key, (_, how) in TABLES.items()}
    problems, changed = [], []
    for path in sorted({f for f, _ in TABLES}):
        full = os.path.join(args.root, path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        new, missing = render(text, path, tables)
        problems += missing
        if new != text:
            if args.write:
                with open(full, "w", encoding="utf-8") as f:
                    f.write(new)
                changed.append(path)
            else:
                differ = [name for (f, name) in TABLES if f == path
                          and render(text, path, {(path, name): tables[(path, name)]})[0] != text]
                problems += ["%s: the %s table differs from bin/acceptlab-server %s (run /usr/bin/python3 -m ci.server_tables --write)"
                             % (path, name, TABLES[(path, name)][0]) for name in differ]
    for p in problems:
        print(p, file=sys.stderr)
    if args.write and changed:
        print("server_tables: rewrote %s" % ", ".join(changed))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
