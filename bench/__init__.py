"""relay's benchmarks: each ``bench/bench_*.py`` module has a ``main()`` that measures one
thing and prints a table; ``python -m bench [NAME...]`` runs them (``make bench``)."""
