"""The rules of rouba-monte: cards, rule variants, the pure reference engine, scoring and deal seeds.

Nothing here imports gymnasium, pettingzoo or torch.
"""
