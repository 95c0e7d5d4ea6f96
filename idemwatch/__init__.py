"""The ``idemwatch`` command: its root and what every command shares.

- :mod:`idemwatch.cli`: the root group and the one command table (name, help, extra, where the command lives).
- :mod:`idemwatch.errors`: the one error handler (one ``Error:`` line, exit codes 0 / 1 / 2).
- :mod:`idemwatch.options`: time and duration options, environment defaults; :mod:`idemwatch.timerange` parses them.
- :mod:`idemwatch.logs`: ``--verbose``/``--quiet`` logging on stderr.
- :mod:`idemwatch.extras`: which optional dependencies each extra provides.
- :mod:`idemwatch.terminal`: the one sanitiser for text printed to a terminal.
- :mod:`idemwatch.aws`: the one boto3 session builder (Region, profile, role, endpoint) and its errors.

Each part (``collector``, ``dashboard``, ``alarms``) owns its commands; the root imports a part only when one of its
commands runs, so ``idemwatch --help`` imports no pandas, DuckDB, Streamlit or boto3. The emitter never imports
this package.
"""
