"""The exact solver of small decks: the whole game tree (`GameTree`), CFR+ and magnetic mirror descent on it, and
exploitability (NashConv) of any player that gives its move probabilities."""
