"""asv benchmarks of spca (run from asv_benchmarks/: ``asv run``)."""
