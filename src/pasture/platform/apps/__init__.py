"""An app's life: deploy, versions on disk, its files and pages, its origin, its secrets."""
