"""Players behind one `Policy` interface: random, scripted, search and trained networks, named by specs."""
