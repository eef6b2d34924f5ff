"""Who may do what, and how fast: reaching an app, spaces and members, limits, the audit."""
