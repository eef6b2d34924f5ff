"""Who is asking: people, sessions, tokens, OAuth grants, client documents, apps' passes."""
