"""The exact solver of small decks: the whole game tree (`GameTree`), CFR+ and magnetic mirror descent on it, and
exploitability (NashConv) of any player that gives its move probabilities."""

# The function exploitability is not lifted here: its name would hide the module rouba_env.solve.exploitability.
from rouba_env.solve.exploitability import (
    CFRPlus, Exploitability, MagneticMirrorDescent, best_response, check_strategy, counterfactual_action_values,
    expected_values, head_to_head, mmd_step, nash_conv, policy_strategy, reach_probabilities,
)
from rouba_env.solve.game_tree import (
    MAX_DEALS, MAX_HISTORIES, GameTree, check_solvable, estimate_histories, solvable_tree,
)

__all__ = [
    "GameTree", "solvable_tree", "check_solvable", "estimate_histories", "MAX_DEALS", "MAX_HISTORIES",
    "nash_conv", "Exploitability", "best_response", "expected_values", "head_to_head",
    "counterfactual_action_values", "check_strategy", "policy_strategy", "CFRPlus", "MagneticMirrorDescent",
    "mmd_step", "reach_probabilities",
]
