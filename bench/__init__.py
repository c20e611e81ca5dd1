"""paicli's benchmark suite: `python -m bench [NAME ...]` (see bench/README.md for what each one measures).

Everything runs on this machine against the fake OpenAI-compatible server of tests/fakellm.py on
127.0.0.1; no API key, no network. Results go to stdout as a table and to bench/results/*.json.
"""
