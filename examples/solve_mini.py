"""Solve the `mini` deck exactly: an equilibrium by CFR+, and how far from one each player is (NashConv).

    python examples/solve_mini.py
"""

import rouba_env
from rouba_env.solve.exploitability import CFRPlus, exploitability, head_to_head, policy_strategy
from rouba_env.solve.game_tree import GameTree

rules = rouba_env.preset("mini")
tree = GameTree(rules, reward="outcome")  # +1 win, 0 tie, -1 loss: what win rates count
print(f"mini: {tree.num_deals} deals, {tree.num_histories} histories, {tree.num_infosets} information sets")

solver = CFRPlus(tree)
for iteration in range(1, 301):
    measured = solver.iterate(measure=iteration % 100 == 0)
    if measured is not None:
        print(f"CFR+ iteration {iteration}: NashConv {measured:.6f}")
equilibrium = solver.average_strategy()

for name in ("random", "greedy", "heuristic"):
    strategy, exact = policy_strategy(tree, rouba_env.make_policy(name, rules))
    result = exploitability(tree, strategy)
    versus = head_to_head(tree, strategy, equilibrium)  # its expected outcome in each seat against the equilibrium
    win_rate = (1 + sum(versus) / len(versus)) / 2
    print(f"{name:<9} NashConv {result.nash_conv:.4f}; wins {win_rate:.1%} against the equilibrium (exact)")
