"""The web door: an app's pages and API, the sign-in page and the dashboard.

`create_app(service)` is the Starlette app `pasture serve` runs; routes and the
shapes of their answers are listed in `pasture.web.app`.
"""

from pasture.web.app import create_app

__all__ = ["create_app"]
