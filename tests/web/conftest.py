"""The web door's tests share one real Service: see web_site.py."""

from web_site import site

__all__ = ["site"]
