"""pasture's version, ground that any layer may read (servers say it in their handshakes)."""

__version__ = "0.1.0"
