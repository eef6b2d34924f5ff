"""What an app's versions may take on disk: how many are kept, and how much a space may hold.

Deploying needs no trust, and every version of an app may be 64 MB, so neither the
versions nor their bytes can be left to grow:

- **Versions kept.** An app keeps its newest `versions_kept` versions (20 unless `pasture
  serve --versions-kept` or `$PASTURE_VERSIONS_KEPT` says otherwise), and rollback
  reaches those. A deploy that makes a version past them forgets the oldest, in the
  transaction that makes the new one current: the platform database's rows (and, on
  PostgreSQL, its copy of the files) go with the commit, and the folders after it
  (`forget`; a folder a crash left behind is swept by the next deploy, `keep_only`, and
  another server sharing the database sweeps its own when it hears of the deploy).
- **A space's quota.** The files of every version a space's apps keep are at most
  `space_quota` megabytes together (1,024 unless `--space-quota` or
  `$PASTURE_SPACE_QUOTA` says otherwise). A deploy that would take the space past it is
  refused before anything is written, with how much is used and by which apps, counting
  what the deploy itself would let go.

What each version's files weigh is kept with the version (`versions.bytes`); a version
kept before that was recorded is weighed from its files the first time it is asked.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pasture.errors import DeployRefused, UsageError
from pasture.platform.apps import versions as _versions
from pasture.platform.db.platform_db import Conn, PlatformDB

VERSIONS_KEPT = 20
SPACE_QUOTA = 1024  # megabytes
_MB = 1024 * 1024


def _setting(name: str, given: int | None, default: int, option: str, what: str) -> int:
    """An option's value, else the environment's, else the default: a whole number from 1."""
    if given is None:
        text = os.environ.get(name, "").strip()
        if not text:
            return default
        try:
            given = int(text)
        except ValueError:
            raise UsageError(
                f"${name} is {what}: a whole number like {default}, not {text[:40]!r}"
            ) from None
    if given < 1:
        raise UsageError(f"{option} is {what}: at least 1, not {given}")
    return given


def megabytes(n: int) -> str:
    """`12.3 MB`, `0.4 MB`, `1,024 MB`: bytes as a sentence says them."""
    mb = n / _MB
    if mb >= 100:
        return f"{mb:,.0f} MB"
    return f"{mb:.1f} MB"


class Disk:
    """The versions an app keeps, and the room a space has for them."""

    def __init__(
        self,
        db: PlatformDB,
        app_dir: Any,
        *,
        versions_kept: int | None = None,
        space_quota: int | None = None,
    ) -> None:
        """`app_dir(space, slug)` is an app's folder in the data directory."""
        self.db = db
        self.app_dir = app_dir
        self.versions_kept = _setting(
            "PASTURE_VERSIONS_KEPT",
            versions_kept,
            VERSIONS_KEPT,
            "--versions-kept",
            "how many versions of each app are kept",
        )
        self.space_quota = _setting(
            "PASTURE_SPACE_QUOTA",
            space_quota,
            SPACE_QUOTA,
            "--space-quota",
            "how many megabytes of files a space's apps may keep",
        )

    # -- the quota ---------------------------------------------------------------------------
    def _weigh(self, space: str, slug: str, version: int) -> int:
        """What a version kept before weights were recorded weighs: weighed from its files
        (the database's copy, or the folder's), and recorded."""
        files = self.db.version_files(space, slug, version)
        if not files:
            files = _versions.read_version(Path(self.app_dir(space, slug)) / f"v{version}")
        weight = sum(len(body) for body in files.values())
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE versions SET bytes = ? WHERE space = ? AND slug = ? AND version = ?",
                (weight, space, slug, version),
            )
        return weight

    def kept(self, space: str) -> dict[str, dict[int, int]]:
        """What each app of a space keeps: slug → version → bytes."""
        found: dict[str, dict[int, int]] = {}
        for row in self.db.all(
            "SELECT slug, version, bytes FROM versions WHERE space = ? ORDER BY slug, version",
            space,
        ):
            slug, version = str(row["slug"]), int(row["version"])
            weight = row["bytes"]
            found.setdefault(slug, {})[version] = (
                int(weight) if weight is not None else self._weigh(space, slug, version)
            )
        return found

    def check_room(self, space: str, slug: str, files: Mapping[str, bytes]) -> None:
        """Refused, saying how much is used and by what, when keeping one more version of
        `space/slug` with these files would take the space past its quota."""
        kept = self.kept(space)
        adding = sum(len(body) for body in files.values())
        own = sorted(kept.get(slug, {}), reverse=True)
        # the oldest it keeps go with this deploy, when it keeps as many as it may
        letting_go = sum(kept[slug][v] for v in own[self.versions_kept - 1 :])
        used = sum(sum(versions.values()) for versions in kept.values())
        after = used - letting_go + adding
        if after <= self.space_quota * _MB:
            return
        weights = {name: sum(v.values()) for name, v in kept.items()}
        by = ", ".join(
            f"{space}/{name} {megabytes(weights[name])} in {len(kept[name])} "
            f"version{'s' if len(kept[name]) != 1 else ''}"
            for name in sorted(kept, key=lambda name: -weights[name])
        )
        raise DeployRefused(
            [
                f"this version ({megabytes(adding)}) would take {space}'s apps to "
                f"{megabytes(after)}, past the space's {self.space_quota:,} MB — it keeps "
                f"{megabytes(used)} now: {by or 'nothing yet'}; deploy fewer or smaller "
                f"files, or ask the server's owner for more room (pasture serve "
                f"--space-quota, --versions-kept)"
            ]
        )

    # -- the versions kept ---------------------------------------------------------------------
    def _newest_first(self, space: str, slug: str) -> list[int]:
        return [
            int(r["version"])
            for r in self.db.all(
                "SELECT version FROM versions WHERE space = ? AND slug = ? ORDER BY version DESC",
                space,
                slug,
            )
        ]

    def let_go(self, conn: Conn, space: str, slug: str, newest: int) -> list[int]:
        """In the deploy's transaction, once `newest` is recorded: forget the versions past
        the newest `versions_kept`. The versions forgotten, for `forget` after the commit."""
        rows = conn.execute(
            "SELECT version FROM versions WHERE space = ? AND slug = ? ORDER BY version DESC",
            (space, slug),
        ).fetchall()
        numbers = sorted({int(r[0]) for r in rows} | {newest}, reverse=True)
        gone = numbers[self.versions_kept :]
        for version in gone:
            conn.execute(
                "DELETE FROM versions WHERE space = ? AND slug = ? AND version = ?",
                (space, slug, version),
            )
            self.db.forget_files(conn, space, slug, version)
        return gone

    def forget(self, space: str, slug: str, versions: list[int]) -> None:
        """The folders of versions no longer kept."""
        root = Path(self.app_dir(space, slug))
        for version in versions:
            shutil.rmtree(root / f"v{version}", ignore_errors=True)

    def keep_only(self, space: str, slug: str) -> None:
        """Sweep the folders of versions older than the oldest the database keeps (another
        server let them go, or a crash came between the commit and their removal)."""
        kept = self._newest_first(space, slug)
        if kept:
            _versions.forget_older(Path(self.app_dir(space, slug)), min(kept))


__all__ = ["SPACE_QUOTA", "VERSIONS_KEPT", "Disk", "megabytes"]
