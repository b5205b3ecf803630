"""The ``spca`` command on hostile input: one-line errors, exit codes, no lost file.

Every case runs the command in a subprocess (``python -m spca``, from a
directory outside the source tree) and checks its exit status and that
stderr is one line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import spca
from spca.text import write_uci

pytest.importorskip("pyarrow")

SPCA_DIR = Path(spca.__file__).resolve().parent


def run(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spca", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout)


def one_line_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    err = proc.stderr
    assert proc.returncode == 1, err
    assert err.startswith("spca: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for w in words:
        assert w in err, err
    return err


@pytest.fixture
def docword(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    C = sp.random(30, 12, density=0.3, random_state=rng, data_rvs=lambda n: rng.integers(1, 5, n))
    path = tmp_path / "docword.ok.txt"
    write_uci(path, None, sp.csr_array(C))
    return path


def test_version(tmp_path):
    proc = run("--version", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == f"spca {spca.__version__}"


def test_overwrite_refuses_a_directory_that_is_not_a_dataset(tmp_path, docword):
    hz = tmp_path / "hz"
    (hz / "photos").mkdir(parents=True)
    (hz / "_spca.json").write_text("{}")
    (hz / "thesis.tex").write_text("x")
    proc = run("convert", str(docword), str(hz), "--overwrite", cwd=tmp_path)
    one_line_error(proc, "not a dataset written by spca convert")
    assert (hz / "thesis.tex").read_text() == "x" and (hz / "photos").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docword.ok.txt", "hz"]


def test_overwrite_keeps_files_the_manifest_does_not_name(tmp_path, docword):
    out = tmp_path / "pq"
    assert run("convert", str(docword), str(out), cwd=tmp_path).returncode == 0
    (out / "thesis.tex").write_text("x")
    proc = run("convert", str(docword), str(out), "--overwrite", cwd=tmp_path)
    one_line_error(proc, "thesis.tex", "does not name")
    assert (out / "thesis.tex").exists() and (out / "part-00000.parquet").exists()


def test_overwrite_refuses_an_output_holding_its_input(tmp_path, docword):
    hz2 = tmp_path / "hz2"
    hz2.mkdir()
    inside = hz2 / "docword.txt"
    shutil.copy(docword, inside)
    for extra in ([], ["--overwrite"]):
        proc = run("convert", str(inside), str(hz2), *extra, cwd=tmp_path)
        one_line_error(proc, "contains the input")
        assert inside.read_bytes() == docword.read_bytes()
    # also when the directory holds a valid dataset (and the input)
    out = tmp_path / "pq"
    assert run("convert", str(docword), str(out), cwd=tmp_path).returncode == 0
    src = tmp_path / "pq2"
    shutil.copytree(out, src)
    proc = run("convert", str(src / "part-00000.parquet"), str(src), "--overwrite",
               cwd=tmp_path)
    one_line_error(proc, "contains the input")
    assert (src / "part-00000.parquet").exists()


def test_overwrite_replaces_a_dataset_and_only_its_files(tmp_path, docword):
    out = tmp_path / "pq"
    assert run("convert", str(docword), str(out), "--shards", "3", cwd=tmp_path).returncode == 0
    first = json.loads((out / "_spca.json").read_text())
    assert len(first["shards"]) == 3
    proc = run("convert", str(docword), str(out), "--overwrite", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["_spca.json", "part-00000.parquet"]
    # nothing left beside it (the old dataset, the temporary directory)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docword.ok.txt", "pq"]
    assert spca.text.open_parquet(out).nnz == first["nnz"]


def test_a_killed_conversion_leaves_a_tmpdir_that_the_next_run_removes(tmp_path, docword):
    # what a SIGKILLed writer leaves: a hidden directory of partial shards,
    # marked with its host and (now dead) process id
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = int(proc.stdout)
    import socket

    stale = tmp_path / ".pq.abc123.tmp"
    stale.mkdir()
    (stale / "part-00000.parquet").write_bytes(b"PAR1 partial")
    (stale / ".spca-writer").write_text(f"{socket.gethostname()} {dead}\n")
    live = tmp_path / ".pq.live.tmp"  # a writer still running: left alone
    live.mkdir()
    (live / ".spca-writer").write_text(f"{socket.gethostname()} {os.getpid()}\n")
    assert run("convert", str(docword), str(tmp_path / "pq"), cwd=tmp_path).returncode == 0
    assert not stale.exists() and live.exists()


def test_sigint_while_importing_is_one_line(tmp_path):
    # Ctrl-C while `spca` is still importing numpy/scipy: simulated by raising
    # SIGINT from an import hook, in a process that looks like the command
    code = (
        "import builtins, os, signal, sys\n"
        # (Python's own handler, also when the tests run as a background job
        # of a shell, which starts with SIGINT ignored)
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "sys.argv = ['spca', '--version']\n"
        "real = builtins.__import__\n"
        "def hook(name, *a, **k):\n"
        "    if name.startswith('scipy'):\n"
        "        builtins.__import__ = real\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = hook\n"
        "from spca.cli import main\n"
        "sys.exit(main())\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "spca: interrupted\n"


def test_import_from_the_source_tree_says_what_to_do(tmp_path):
    # an unbuilt copy of the package, as in a fresh clone's root directory: the
    # repository's spca/ (with its .pyx sources), not the installed package,
    # which has no sources in a regular (non-editable) install
    source = Path(__file__).resolve().parents[1] / "spca"
    assert (source / "_bca_fast.pyx").is_file(), f"no source tree at {source}"
    shutil.copytree(source, tmp_path / "spca",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    proc = subprocess.run([sys.executable, "-S", "-c", "import spca"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: spca is imported from its source tree")
    assert "another directory" in last and "pip install" in last


def test_cache_rebuild_deletes_only_its_own_files(tmp_path, docword):
    from spca.text import cache_uci_bow

    target = cache_uci_bow(docword, tmp_path / "c")
    (target / "notes.txt").write_text("mine")
    os.utime(docword, ns=(1, 1))  # the source changed: the cache is out of date
    with pytest.raises(FileExistsError, match="not an spca cache .*notes.txt"):
        cache_uci_bow(docword, tmp_path / "c")
    assert (target / "notes.txt").read_text() == "mine"
    (target / "notes.txt").unlink()
    again = cache_uci_bow(docword, tmp_path / "c")
    assert again == target and sorted(p.name for p in target.iterdir()) == [
        "count.npy", "doc.npy", "spca_cache.json", "word.npy"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_killed_conversion_leaves_nothing_for_long(tmp_path, docword, sig):
    import signal
    import time

    env = dict(os.environ, _SPCA_CONVERT_CHUNK_DELAY="60")  # stalls before the first chunk
    proc = subprocess.Popen([sys.executable, "-m", "spca", "convert", str(docword),
                             str(tmp_path / "pq")], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".pq.*.tmp/.spca-writer")):
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.02)
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    left = list(tmp_path.glob(".pq.*"))
    if sig == "SIGTERM":  # unwinds: one line, its temporary directory removed
        assert proc.returncode == 143 and err == "spca: terminated\n"
        assert left == []
    else:  # cannot be caught: the next conversion removes what it left
        # its temporary directory and its lock file (the lock died with it)
        assert proc.returncode == -9 and len(left) == 2
        assert (tmp_path / ".pq.lock") in left
        assert run("convert", str(docword), str(tmp_path / "pq"), cwd=tmp_path).returncode == 0
        assert list(tmp_path.glob(".pq.*")) == [] and (tmp_path / "pq" / "_spca.json").exists()


# --------------------------------------------------------------------------
# issue 28, defect 9: convert --overwrite with an old dataset that cannot be
# deleted, and concurrent conversions
# --------------------------------------------------------------------------


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


def test_overwrite_of_an_undeletable_dataset_changes_nothing(tmp_path, docword, monkeypatch,
                                                             capsys):
    # Tests run as root, to whom a read-only directory is writable: the
    # deletion of the old files is made to fail the way it does for a user
    # whose old dataset directory is read-only (PermissionError).
    from spca.cli import main
    from spca.text import _convert

    out = tmp_path / "pq"
    assert main(["convert", str(docword), str(out), "--shards", "2"]) == 0
    before = _tree(out)

    def refuse(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(_convert, "_unlink", refuse)
    capsys.readouterr()
    assert main(["convert", str(docword), str(out), "--overwrite"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("spca: error: cannot replace the dataset in") and err.count("\n") == 1
    assert "Permission denied" in err and "left unchanged" in err
    # the old dataset is intact, and nothing is left beside it
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docword.ok.txt", "pq"]
    monkeypatch.undo()
    assert main(["convert", str(docword), str(out), "--overwrite"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["_spca.json", "part-00000.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docword.ok.txt", "pq"]


def test_overwrite_of_a_read_only_dataset_is_refused_before_converting(tmp_path, docword,
                                                                       monkeypatch, capsys):
    # a read-only directory, as a user other than root sees it (os.access
    # answers yes to root whatever the mode: it is made to answer no)
    from spca.cli import main
    from spca.text import _convert

    out = tmp_path / "pq"
    assert main(["convert", str(docword), str(out)]) == 0
    before = _tree(out)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == out else real(p, mode))

    def no_conversion(*args, **kwargs):
        raise AssertionError("converted before refusing")

    monkeypatch.setattr(_convert, "_write", no_conversion)
    capsys.readouterr()
    assert main(["convert", str(docword), str(out), "--overwrite"]) == 1
    err = capsys.readouterr().err
    assert "the directory is not writable" in err and err.count("\n") == 1
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docword.ok.txt", "pq"]


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl lock")
@pytest.mark.parametrize("overwrite", [True, False])
def test_concurrent_conversions_one_wins_the_other_is_refused(tmp_path, docword, overwrite):
    import time

    out = tmp_path / "pq"
    extra = ["--overwrite"] if overwrite else []
    if overwrite:
        assert run("convert", str(docword), str(out), "--shards", "2",
                   cwd=tmp_path).returncode == 0
    env = dict(os.environ, _SPCA_CONVERT_CHUNK_DELAY="2")  # the first one stalls
    first = subprocess.Popen([sys.executable, "-m", "spca", "convert", str(docword), str(out),
                              *extra], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".pq.*.tmp/.spca-writer")):
            assert time.monotonic() < deadline and first.poll() is None, first.stderr
            time.sleep(0.02)
        second = run("convert", str(docword), str(out), *extra, cwd=tmp_path)
        _, err = first.communicate(timeout=60)
    finally:
        first.kill()
    assert first.returncode == 0, err
    # was: both exit 0 leaving an .old.tmp (overwrite), or "[Errno 39] Directory not empty"
    one_line_error(second, "another conversion is writing", str(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docword.ok.txt", "pq"]
    assert sorted(p.name for p in out.iterdir()) == ["_spca.json", "part-00000.parquet"]


def test_a_stale_lock_file_does_not_block(tmp_path, docword):
    # a writer killed outright leaves its lock file; the lock itself died with it
    (tmp_path / ".pq.lock").write_text("")
    assert run("convert", str(docword), str(tmp_path / "pq"), cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docword.ok.txt", "pq"]


def test_convert_of_something_that_is_not_a_corpus(tmp_path):
    # was: "no such file: /dev/null"
    proc = run("convert", os.devnull, str(tmp_path / "o"), cwd=tmp_path)
    err = one_line_error(proc, os.devnull, "empty")
    assert "no such file" not in err
    proc = run("convert", str(tmp_path), str(tmp_path / "o"), cwd=tmp_path)
    one_line_error(proc, "is a directory, not a UCI docword file")
    proc = run("convert", str(tmp_path / "missing.txt"), str(tmp_path / "o"), cwd=tmp_path)
    one_line_error(proc, "no such file")
    assert not (tmp_path / "o").exists()


def test_convert_names_the_cli_flag(tmp_path, docword):
    # issue 29: was "(overwrite=True replaces a dataset written by spca convert)"
    out = tmp_path / "pq"
    assert run("convert", str(docword), str(out), cwd=tmp_path).returncode == 0
    err = one_line_error(run("convert", str(docword), str(out), cwd=tmp_path),
                         "--overwrite replaces a dataset")
    assert "overwrite=True" not in err


def test_scale_error_says_what_to_do_with_the_data(tmp_path):
    # issue 28, defect 11: was "multiply Sigma and lam by the same power of two"
    from spca.text import write_parquet

    rng = np.random.default_rng(0)
    C = sp.random(50, 20, density=0.5, random_state=rng, format="csr") * 1e100
    write_parquet(sp.csr_array(C), tmp_path / "big")
    err = one_line_error(run("topics", str(tmp_path / "big"), cwd=tmp_path),
                         "largest word variance", "divide the counts", "--transform")
    assert "Sigma" not in err and "lam" not in err
    # and the advice works
    proc = run("topics", str(tmp_path / "big"), "--transform", "log1p", "--quiet",
               "--components", "1", "--cardinality", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
