"""ci/add_arm_facts.py: a run measured before meta.json recorded the arms'
facts gets them, once, from the arms table as committed, and says so
("arm_facts_added"); the measured data are left as they are.

The command runs in-process here on copies of the fixture run, with the
table's commit stood in for (a working tree under test may hold changes
not committed); one test runs it as a user does, for --help.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from acceptlab import arms
from acceptlab.paths import ROOT, module_cmd
from ci import add_arm_facts
from report import common

FIXTURE_RESULTS = Path(ROOT) / "tests" / "fixtures" / "report" / "results" / "linux"
STAMP = "20261129T081500Z"

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def without_facts(text):
    """A meta.json's text as the campaign wrote it before it recorded the facts."""
    obj = json.loads(text)
    obj.pop("arms")
    obj.pop("arm_facts_added", None)
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


@pytest.fixture
def old_run(tmp_path):
    """A copy of the fixture run whose meta.json has no facts, written as the campaign writes it."""
    run = tmp_path / STAMP
    shutil.copytree(FIXTURE_RESULTS / STAMP, run)
    meta = run / "meta.json"
    meta.write_text(without_facts(meta.read_text()))
    return run


@pytest.fixture
def committed(monkeypatch):
    monkeypatch.setattr(add_arm_facts, "table_commit", lambda: COMMIT)


def test_the_report_refuses_a_run_without_facts_and_names_the_fix(old_run):
    with pytest.raises(common.InputError) as e:
        common.read_meta(old_run)
    assert e.value.line is None
    assert e.value.message == (f'run {STAMP} has no arm facts ("arms": it was measured before meta.json recorded '
                               f"them); add them from the arms table, once, with /usr/bin/python3 -m "
                               f"ci.add_arm_facts {old_run}")


def test_it_adds_the_facts_and_says_so(old_run, committed, capsys):
    before = json.loads((old_run / "meta.json").read_text())
    assert add_arm_facts.main([str(old_run)]) == 0
    assert capsys.readouterr().out == (f"{old_run / 'meta.json'}: added the facts of {len(arms.names())} arms "
                                       f"(acceptlab/arms.py at {COMMIT[:12]})\n")
    text = (old_run / "meta.json").read_text()
    after = json.loads(text)
    assert after.pop("arms") == arms.meta_facts(arms.names())
    assert COMMIT in after.pop("arm_facts_added")
    assert after == before, "the migration changed a key other than the two it adds"
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n", "not written as the campaign writes"
    meta = common.read_meta(old_run)
    assert meta.arm_facts.names() == arms.names() and COMMIT in meta.arm_facts.added


def test_a_meta_json_in_another_layout_keeps_its_bytes(old_run, committed):
    """A hand-laid meta.json (the fixture's) keeps every byte it had; the two
    keys go before its closing brace."""
    meta = old_run / "meta.json"
    laid = json.dumps(json.loads(meta.read_text()), indent=1) + "\n"
    meta.write_text(laid)
    assert add_arm_facts.main([str(old_run)]) == 0
    text = meta.read_text()
    assert text.startswith(laid.rstrip()[:-1].rstrip() + ",\n")
    assert json.loads(text)["arms"] == arms.meta_facts(arms.names())


def test_a_run_with_facts_is_left_alone(old_run, committed, capsys):
    assert add_arm_facts.main([str(old_run)]) == 0
    once = (old_run / "meta.json").read_bytes()
    capsys.readouterr()
    assert add_arm_facts.main([str(old_run)]) == 0
    assert (old_run / "meta.json").read_bytes() == once
    assert capsys.readouterr().out == f"{old_run / 'meta.json'}: has its arm facts already; left as it is\n"


def test_it_refuses_a_table_not_committed_and_a_meta_it_cannot_read(old_run, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(add_arm_facts, "table_commit", lambda: None)
    assert add_arm_facts.main([str(old_run)]) == 1
    assert "acceptlab/arms.py has changes not committed" in capsys.readouterr().err
    assert "arms" not in json.loads((old_run / "meta.json").read_text())
    monkeypatch.setattr(add_arm_facts, "table_commit", lambda: COMMIT)
    (tmp_path / "empty").mkdir()
    assert add_arm_facts.main([str(tmp_path / "empty")]) == 1
    assert capsys.readouterr().err.startswith(f"add_arm_facts: {tmp_path / 'empty' / 'meta.json'}: cannot read")


def test_it_runs_as_a_module_with_help():
    res = subprocess.run(module_cmd("ci.add_arm_facts", "--help"), cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0 and "RUN_DIR" in res.stdout, res.stderr
