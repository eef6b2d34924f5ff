"""The platform's own database: its tables, SQLite and PostgreSQL, the bus, tool lists."""
