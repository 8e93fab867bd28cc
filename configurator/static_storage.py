"""Static files with content-hashed names, pre-compressed, cached for a year.

``collectstatic`` writes each file under a name with a hash of its content
(``site.3f2a9c1b.css``), a gzip and a Brotli copy beside it, and the manifest
``staticfiles.json``; WhiteNoise then serves the hashed names with
``Cache-Control: max-age=315360000, immutable`` and the compressed copy the browser
accepts (WhiteNoise's ``CompressedManifestStaticFilesStorage``).

Before ``collectstatic`` has written a manifest (development, the test suite), pages
link the plain names, which WhiteNoise serves from the apps' folders.
"""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class HashedStaticStorage(CompressedManifestStaticFilesStorage):  # type: ignore[misc]  # untyped library
    """WhiteNoise's manifest storage; plain names while there is no manifest yet."""

    def stored_name(self, name: str) -> str:
        """The hashed name of ``name`` from the manifest, or ``name`` without a manifest.

        Raises:
            ValueError: a manifest exists and does not list ``name`` (run collectstatic).
        """
        if not self.hashed_files:
            return name
        return str(super().stored_name(name))
