"""Other people's code: an app's worker.py run in confined processes of its own."""
