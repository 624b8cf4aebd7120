"""The rules of rouba-monte: cards, rule variants, the compiled rules core, the card-level engine, scoring and deal seeds.

Nothing here imports gymnasium, pettingzoo or torch.
"""
