"""A one-off migration: adds the arms' facts to a run measured before
meta.json recorded them, so that the report renders it from the run alone.

Since issue 24 the campaign writes each arm's facts into meta.json ("arms":
its variant, mode, options, partners, claims and study places, from
acceptlab/arms.py's meta_facts), and the report reads them there instead of
today's table. An older run has none, and the report refuses it with a line
that names this command. It writes two keys into the run's meta.json and
nothing else:

  "arms"             every arm of the table as meta_facts gives them now
                     (the table the report read for that run until then)
  "arm_facts_added"  that they were added after the run, by this command,
                     from which commit of acceptlab/arms.py

The measured data (the rows, raw/, every other key of meta.json) are left
as they are: a meta.json the campaign wrote (indent 2, sorted keys) is
written the same way with the two keys in their sorted place; any other
layout keeps its bytes and gets the keys before its closing brace.

usage: /usr/bin/python3 -m ci.add_arm_facts RUN_DIR [RUN_DIR ...]

Exit 0: every run has its facts (a run that already had them is left
alone, and said so); 1: a run's meta.json cannot be read or is not an
object, or acceptlab/arms.py has changes not committed (the note could not
name the table); 2: usage.
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("add_arm_facts.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m ci.add_arm_facts\n")
    sys.exit(2)

import argparse
import json
import subprocess
from pathlib import Path

from acceptlab import arms
from acceptlab.paths import ROOT

TABLE = "acceptlab/arms.py"


def table_commit():
    """The last commit that changed the arms table, or None when the table has
    changes not committed (or git cannot say)."""
    git = ["git", "-C", ROOT]
    dirty = subprocess.run(git + ["status", "--porcelain", "--", TABLE], capture_output=True, text=True)
    commit = subprocess.run(git + ["log", "-1", "--format=%H", "--", TABLE], capture_output=True, text=True)
    if dirty.returncode or dirty.stdout.strip() or commit.returncode or not commit.stdout.strip():
        return None
    return commit.stdout.strip()


def note(commit):
    return ("added after the run by ci/add_arm_facts.py: every arm of %s at commit %s, the table the report "
            "read for this run until the run recorded its own; the measured data are untouched" % (TABLE, commit))


def with_facts(text, facts, added):
    """meta.json's text with "arms" and "arm_facts_added" added, every other
    byte as it was (see the module's docstring)."""
    obj = json.loads(text)
    extra = {"arm_facts_added": added, "arms": facts}
    if text == json.dumps(obj, indent=2, sort_keys=True) + "\n":  # as the campaign writes it
        return json.dumps(dict(obj, **extra), indent=2, sort_keys=True) + "\n"
    keys = json.dumps(extra, indent=2, sort_keys=True).split("\n")[1:-1]  # indented as top-level keys
    body = text.rstrip()  # ends with the object's closing brace: it parsed as an object
    return body[:-1].rstrip() + ",\n" + "\n".join(keys) + "\n}\n"


class Refused(Exception):
    pass


def add(run_dir, commit):
    """Adds the facts to run_dir/meta.json; returns the line to print."""
    path = Path(run_dir) / "meta.json"
    try:
        text = path.read_text(encoding="utf-8")
        obj = json.loads(text)
    except (OSError, ValueError) as e:
        raise Refused("%s: cannot read: %s" % (path, e)) from None
    if not isinstance(obj, dict):
        raise Refused("%s: not a JSON object" % path)
    if "arms" in obj:
        return "%s: has its arm facts already; left as it is" % path
    path.write_text(with_facts(text, arms.meta_facts(arms.names()), note(commit)), encoding="utf-8")
    return "%s: added the facts of %d arms (%s at %s)" % (path, len(arms.names()), TABLE, commit[:12])


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="add_arm_facts", description="Add the arms' facts (meta.json \"arms\") to runs measured before "
        "meta.json recorded them, from the arms table as committed; the measured data are untouched.",
        epilog="Example: /usr/bin/python3 -m ci.add_arm_facts results/linux/STAMP")
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="a run directory (holding meta.json)")
    args = parser.parse_args(argv)
    commit = table_commit()
    if commit is None:
        sys.stderr.write("add_arm_facts: %s has changes not committed: commit the table first, so the note can "
                         "name it\n" % TABLE)
        return 1
    try:
        for run in args.runs:
            print(add(run, commit))
    except Refused as e:
        sys.stderr.write("add_arm_facts: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
