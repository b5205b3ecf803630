"""The artefacts of ``paper/reproduce.py``, one module each.

An artefact module may define any of these functions, called by ``reproduce.py``
in this order, for the modules of its ``ARTEFACTS`` list in turn:

``prepare(args, results)``
    Work that must happen before any timing (e.g. downloads).
``measure(args, results)``
    Run the experiments (BLAS threads limited) and store the numbers in the
    ``results`` dict, which goes to ``results.json``.
``write(results, args, out) -> list[str]``
    Write CSV files into ``out``; returns their names.
``plot(results, args, out, plt) -> list[str]``
    Write PNGs with ``plt`` (matplotlib.pyplot; not called without matplotlib).
``claims(results, args) -> list[Claim]``
    The paper's claims beside this run's numbers, with verdicts
    (:mod:`.claims`: a claim measured on other data than the paper's is
    "not comparable").
``section(results, args) -> list[str]``
    The artefact's section of ``report.md``, as Markdown lines.

Adding an artefact is one module with these functions and one entry in
``ARTEFACTS``.
"""
