"""Prints the pinned values of `test_golden.py` from the current code (run by hand, never by tests).

Used once before the layout refactor; rerun only when a change of behaviour is intended.
"""

import json

from tests.golden.trajectories import golden_values

if __name__ == "__main__":
    print(json.dumps(golden_values(), indent=1, sort_keys=True))
