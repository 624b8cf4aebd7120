"""What a seat sees and what it can do, as arrays: the observation vector and the action indices."""
