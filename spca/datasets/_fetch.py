"""Download (once) and cache the UCI "Bag of Words" corpora."""

from __future__ import annotations

import http.client
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["UCI_BAG_OF_WORDS", "UCIBagOfWordsFiles", "fetch_uci_bag_of_words", "get_data_home"]

UCI_BASE_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/bag-of-words/"

#: Names of the UCI Bag of Words corpora.
UCI_BAG_OF_WORDS = ("enron", "kos", "nips", "nytimes", "pubmed")


@dataclass(frozen=True)
class UCIBagOfWordsFiles:
    """Local paths of a fetched UCI bag-of-words corpus.

    Attributes
    ----------
    name : str
        Corpus name (``"nytimes"``, ``"pubmed"``, ...).
    docword_path : pathlib.Path
        The gzip-compressed ``docword.<name>.txt.gz``; a valid streaming
        source for :func:`spca.text.word_statistics`.
    vocab_path : pathlib.Path
        The ``vocab.<name>.txt`` file.
    """

    name: str
    docword_path: Path
    vocab_path: Path


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Directory where downloaded corpora are cached (created if missing).

    Parameters
    ----------
    data_home : str or path-like, optional
        Explicit directory.  Default: the ``SPCA_DATA`` environment variable
        if set, else ``~/spca_data``.

    Returns
    -------
    path : pathlib.Path
    """
    if data_home is None:
        data_home = os.environ.get("SPCA_DATA") or Path.home() / "spca_data"
    path = Path(data_home).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _download(url: str, target: Path, timeout: float) -> None:
    """Download ``url`` to ``target`` atomically, checking Content-Length."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                    suffix=".part")
    tmp = Path(tmp_name)
    try:
        # mkstemp's mode is 0600; the download gets the mode open() would give it
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as out:
            try:
                response = urllib.request.urlopen(url, timeout=timeout)  # noqa: S310
            except urllib.error.HTTPError as exc:
                raise OSError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from exc
            except urllib.error.URLError as exc:
                raise OSError(f"download of {url} failed: {exc.reason}") from exc
            with response:
                length = response.headers.get("Content-Length")
                expected = int(length) if length is not None else None
                try:
                    shutil.copyfileobj(response, out, 1 << 20)
                except http.client.IncompleteRead as exc:
                    raise OSError(
                        f"incomplete download of {url}: got {out.tell() + len(exc.partial)} "
                        f"of {expected} bytes"
                    ) from exc
                got = out.tell()
            if expected is not None and got != expected:
                raise OSError(
                    f"incomplete download of {url}: got {got} of {expected} bytes "
                    "(Content-Length)"
                )
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def fetch_uci_bag_of_words(
    name: str,
    data_home: str | os.PathLike | None = None,
    *,
    base_url: str = UCI_BASE_URL,
    download_if_missing: bool = True,
    timeout: float = 60.0,
) -> UCIBagOfWordsFiles:
    """Fetch a UCI "Bag of Words" corpus, downloading it only if not cached.

    Downloads ``docword.<name>.txt.gz`` and ``vocab.<name>.txt`` from
    ``base_url`` into ``data_home``.  Nothing is downloaded unless this
    function is called, and a file already present is never downloaded
    again.

    Parameters
    ----------
    name : {"nytimes", "pubmed", "kos", "nips", "enron"}
        The corpus.  ``nytimes`` (D=300,000 documents, W=102,660 words,
        NNZ=69,679,427) and ``pubmed`` (D=8,200,000, W=141,043,
        NNZ=483,450,157) are the two analysed in the paper.
    data_home : str or path-like, optional
        Cache directory; default ``$SPCA_DATA`` or ``~/spca_data``.
    base_url : str
        Where the files are, default the UCI repository.
    download_if_missing : bool, default True
        If False, raise instead of downloading a missing file.
    timeout : float, default 60
        Socket timeout in seconds.

    Returns
    -------
    files : UCIBagOfWordsFiles
        ``docword_path`` and ``vocab_path`` of the cached files.  Stream them
        with :func:`spca.text.word_statistics` or load them (small corpora)
        with :func:`spca.text.load_uci_bow`.

    Raises
    ------
    ValueError
        For an unknown corpus name.
    FileNotFoundError
        If a file is missing and ``download_if_missing`` is False.
    OSError
        If a download fails or is incomplete (fewer bytes than the server's
        Content-Length).  Downloads go to a temporary file in ``data_home``
        that is renamed into place only when complete, so a failed download
        leaves no partial file.
    """
    if name not in UCI_BAG_OF_WORDS:
        raise ValueError(f"unknown corpus {name!r}; choose from {UCI_BAG_OF_WORDS}")
    home = get_data_home(data_home)
    paths = {}
    for kind, fname in (("docword", f"docword.{name}.txt.gz"), ("vocab", f"vocab.{name}.txt")):
        target = home / fname
        if not target.exists():
            if not download_if_missing:
                raise FileNotFoundError(
                    f"{target} not found and download_if_missing=False"
                )
            _download(base_url.rstrip("/") + "/" + fname, target, timeout)
        paths[kind] = target
    return UCIBagOfWordsFiles(name=name, docword_path=paths["docword"],
                              vocab_path=paths["vocab"])
