"""troupe.python.client: timeline (Chrome traces of a traced step)."""
