"""What each optional extra brings, and the install line that works from wherever the user stands.

``pip install "rouba_env[openspiel]"`` works only where rouba_env is published; from a wheel or a
checkout it fails. So every hint names the extra's packages themselves (which installs them beside
any rouba_env), and the checkout's form. `tests/test_packaging.py` checks these lists against
``pyproject.toml``.
"""

from __future__ import annotations

EXTRA_PACKAGES = {
    "train": ("torch>=2.2", "tensorboard>=2.14", "matplotlib>=3.7", "tqdm>=4.60", "gymnasium==1.2.2", "pillow>=10.1,<12"),
    "openspiel": ("open_spiel>=2.0",),
    "docs": ("mkdocs>=1.6", "mkdocs-material>=9.5", "mkdocstrings[python]>=0.26"),
    "ray": ("ray[rllib]>=2.60,<2.61", "gymnasium==1.2.2"),
}
"""The packages of each extra, as ``pyproject.toml`` lists them."""


def install_hint(extra: str) -> str:
    """``pip install 'a' 'b'`` for the extra's packages, then the checkout's ``pip install -e ".[extra]"``."""
    packages = " ".join(f"'{package}'" for package in EXTRA_PACKAGES[extra])
    return f"pip install {packages} (in a checkout of rouba_env: pip install -e \".[{extra}]\")"
