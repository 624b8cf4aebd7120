"""Play against any players and watch recorded games in the browser (see `rouba_env.web.server`)."""
