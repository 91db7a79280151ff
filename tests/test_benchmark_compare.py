"""benchmarks.compare: the side-by-side harness runs both trees in their own processes and reports finite ratios."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.compare import FIGURES, TREE

BARS = {"battles_line_advance": 5.0, "battles_random": 5.0, "decisions": 8.0, "env_steps": 5.0, "ppo_steps": 3.0,
        "ppo_steps_x8": 3.0}


def _in_git_checkout() -> bool:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=TREE, capture_output=True, timeout=10, check=False)
    except OSError:
        return False
    return out.returncode == 0


def test_bad_flags_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from benchmarks.compare import main

    report = tmp_path / "r.json"
    for kwargs, message in [
        ({"repetitions": 0, "out": report}, "error: --repetitions must be at least 1, got 0\n"),
        ({"ppo_steps": 4, "out": report}, "error: --ppo-steps must be at least 8, got 4\n"),
        ({"baseline_dir": tmp_path / "nope", "out": report}, f"error: --baseline-dir {tmp_path / 'nope'}: not a directory\n"),
        ({"out": tmp_path}, f"error: --out {tmp_path}: is a directory (give a file name)\n"),
    ]:
        with pytest.raises(SystemExit) as info:
            main(**kwargs)
        assert info.value.code == 2
        assert capsys.readouterr().err == message
    if _in_git_checkout():
        with pytest.raises(SystemExit):
            main(baseline="no-such-commit-zz", out=report)
        assert capsys.readouterr().err == f"error: --baseline no-such-commit-zz: not a commit of {TREE}\n"
    assert not report.exists()


def _tree(root: Path, files: dict[str, str]) -> Path:
    """A folder of Python files (relative path -> source)."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_baseline_with_a_syntax_error_is_one_line_naming_the_file(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    """--baseline-dir on a tree that does not compile: one line with the file, its line and the error (and how many
    other files failed); the report already at --out is left as it was."""
    from benchmarks.compare import main

    old = _tree(tmp_path / "old", {"pkg/a.py": "x = 1\n", "pkg/b.py": "def broken(:\n    pass\n",
                                   "pkg/c.py": "\tif True:\n  pass\n"})
    report = tmp_path / "r.json"
    report.write_text('{"kept": true}\n', encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        main(baseline_dir=old, quick=True, out=report)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err == (f"error: byte-compiling {old} failed: {old / 'pkg' / 'b.py'}, line 1: SyntaxError: invalid syntax "
                   "(and 1 more file)\n")
    assert report.read_text(encoding="utf-8") == '{"kept": true}\n'


def test_compile_failure_reads_compileall_reports() -> None:
    from benchmarks.compare import compile_failure

    indent = "*** Error compiling '/t/b.py'...\nSorry: IndentationError: unexpected indent (b.py, line 1)\n"
    assert compile_failure(indent) == "/t/b.py: IndentationError: unexpected indent (b.py, line 1)"
    assert compile_failure("Traceback (most recent call last):\n  ...\nOSError: disk full\n") == \
        "Traceback (most recent call last): | ... | OSError: disk full"


def test_a_tree_under_a_folder_named_out_is_still_compiled(tmp_path: Path) -> None:
    """The tree's own out/, build/ and .venv/ folders are left out, not every file whose path passes through a
    folder of that name (a checkout kept under ~/out was once compiled not at all)."""
    from benchmarks.compare import compile_tree

    tree = _tree(tmp_path / "out" / "build" / "tree", {"pkg/a.py": "x = 1\n", "out/skip.py": "x = (\n",
                                                       "build/lib/skip.py": "x = (\n"})
    compile_tree(tree)  # the broken files lie in the tree's own out/ and build/: not compiled
    assert list((tree / "pkg" / "__pycache__").glob("a.*.pyc"))
    assert not list(tree.glob("out/**/*.pyc")) and not list(tree.glob("build/**/*.pyc"))


def test_a_failed_report_write_leaves_the_old_report(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    """The report is written whole or not at all: a write that fails (here the rename of the finished file, as on
    a full disk) is one line naming --out, and the report already there is kept, with no temporary file left."""
    import errno
    import os

    import typer

    import benchmarks.compare as compare
    from battleline.training.cli import writing

    report = tmp_path / "r.json"
    report.write_text('{"kept": true}\n', encoding="utf-8")

    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(src))

    monkeypatch.setattr(compare.os, "replace", full)
    with pytest.raises(typer.Exit) as info, writing("--out", report):
        compare.write_whole(report, '{"new": true}\n')
    assert info.value.exit_code == 2
    assert capsys.readouterr().err.startswith(f"error: --out {report}: cannot write {report} (")
    assert report.read_text(encoding="utf-8") == '{"kept": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    monkeypatch.undo()
    compare.write_whole(report, '{"new": true}\n')
    assert json.loads(report.read_text(encoding="utf-8")) == {"new": True}


@pytest.mark.slow  # 15-30 s: ten measuring processes on a busy machine
@pytest.mark.skipif(not _in_git_checkout(), reason="needs the git checkout to make a worktree of HEAD")
def test_quick_head_against_head(tmp_path: Path) -> None:
    out = tmp_path / "compare.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.compare", "--baseline", "HEAD", "--quick", "--repetitions", "1",
         "--out", str(out)],
        cwd=TREE, capture_output=True, text=True, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["command"] == f"python -m benchmarks.compare --baseline HEAD --quick --repetitions 1 --out {out}"
    assert report["quick"] is True and report["repetitions"] == 1
    assert report["clock"].startswith("time.process_time")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=TREE, capture_output=True, text=True, check=True)
    assert report["old"]["commit"] == report["new"]["commit"] == head.stdout.strip()
    # each side imported its own files: the old one from the temporary worktree, the new one from this tree
    assert not Path(report["old"]["engine_file"]).is_relative_to(TREE)
    assert Path(report["new"]["engine_file"]).is_relative_to(TREE)
    assert Path(report["old"]["benchmarks_file"]).name == "run.py"
    assert [row["figure"] for row in report["figures"]] == [f.key for f in FIGURES] == list(BARS)
    for row in report["figures"]:
        assert row["bar"] == BARS[row["figure"]]
        for side in ("old", "new"):
            assert len(row[side]["values"]) == 1 and row[side]["median"] > 0
        assert math.isfinite(row["ratio"])
        assert row["ratio"] == pytest.approx(row["new"]["median"] / row["old"]["median"])
        assert 0.25 < row["ratio"] < 4.0, row  # the same code on both sides: near 1, loosely (not a timing test)
        assert row["met"] is (row["ratio"] >= row["bar"])
    assert report["bars_met"] == sum(row["met"] for row in report["figures"])
    assert "ratio" in proc.stdout and "bars met" in proc.stdout
    # the temporary worktree is gone
    listing = subprocess.run(["git", "worktree", "list"], cwd=TREE, capture_output=True, text=True, check=True).stdout
    assert str(Path(report["old"]["engine_file"]).parents[2]) not in listing


@pytest.mark.skipif(not _in_git_checkout(), reason="needs the git checkout (the baseline is a worktree of it)")
def test_sigterm_removes_the_baseline_worktree(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `kill` of the run (SIGTERM) exits with 143 and leaves no worktree behind."""
    import os
    import signal

    import benchmarks.compare as compare

    monkeypatch.setattr(compare, "build_core", lambda path: None)  # the core's build is not what this pins
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=TREE, capture_output=True, text=True, check=True).stdout.strip()
    seen: list[Path] = []
    with pytest.raises(SystemExit) as info:
        with compare.baseline_tree(head) as path:
            seen.append(path)
            assert path.is_dir()
            os.kill(os.getpid(), signal.SIGTERM)
    assert info.value.code == 143
    assert seen and not seen[0].exists()
    listed = subprocess.run(["git", "worktree", "list"], cwd=TREE, capture_output=True, text=True, check=True).stdout
    assert str(seen[0]) not in listed
    assert signal.getsignal(signal.SIGTERM) is not compare._exit_on_term
