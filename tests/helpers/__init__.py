"""What the tests of every folder share, kept once: `from helpers.<module> import …`.

The test folders are not packages; pytest puts each test's own folder on sys.path, and
tests/conftest.py puts tests/ there as well, so this package is importable from every
folder (and from the files those folders share among themselves):

- `club`: the run club (the examples' folders, its vocabulary) and acting as a person
- `processes`: `pasture …` in a process of its own, and `pasture serve` until a block ends
- `command_line`: `pasture …` through `pasture.cli.main` in this process, answering as a
  process would (its exit code, what it printed)
- `needs`: what a test needs of the machine (Chromium, tmux, PostgreSQL…): skipped
  without it, failed without it under CI
- `browser`: Debian's Chromium driven by Playwright, and uvicorn on loopback for it
- `mcp_answers`: reading a tool's answer
- `pages`: reading a served page's tags as a browser does
- `pg_server`: a throwaway PostgreSQL server
- `databases`: the platform databases a test runs on, and `sqlite_only`
- `code_apps`: apps with a worker.py written in the test
- `oauth_flow`: an agent's OAuth sign-in done in this process
- `platform_db`: what the platform's database holds, read straight from it
- `cart`: a registry with a provider of its own
- `streams`: a page's subscription read as a browser reads it
- `bearer_proxy`: a loopback proxy that adds a bearer, for a client with no header option
- `conformance`: the official MCP conformance suite, installed in the tests' cache and run
"""
