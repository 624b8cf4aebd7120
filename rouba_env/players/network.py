"""Learned policies: the actor-critic network, saving and loading checkpoints.

The only module of `rouba_env` that imports torch. A shipped checkpoint is a
folder (or the path of its ``model.safetensors``) holding

* ``model.safetensors``: the network weights. safetensors stores raw tensors
  only, so loading a checkpoint can never run code;
* ``metadata.json``: rules, observation-encoding version, padding, network
  sizes, training steps, the command that made it and its evaluation.

`load_policy` checks the metadata against what this version of `rouba_env`
can play and says what is wrong instead of failing deep inside torch.
Checkpoints named without a path (``2p``) are looked up in the project's
``checkpoints/`` folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from torch import nn

from rouba_env.files import write_atomically
from rouba_env.rules.config import RulesConfig
from rouba_env.encoding.actions import action_repadding_index
from rouba_env.encoding.observation import OBSERVATION_VERSION, repadding_index
from rouba_env.players.base import BasePolicy, check_mask

WEIGHTS_FILE = "model.safetensors"
METADATA_FILE = "metadata.json"
CHECKPOINT_FORMAT = "rouba_env-policy-1"
"""Identifies our metadata files; bumped if their meaning changes."""
SHIPPED_DIR = Path(__file__).resolve().parent.parent / "checkpoints"
SHIPPED_ALIASES = {"3p": "mixed", "4p": "mixed"}
"""Shipped names served by another shipped policy (one network plays 2, 3 and 4 players)."""
RULES_THAT_MUST_MATCH = ("take_all", "must_capture", "leftovers_to_last_capturer", "draw_from_deck", "jokers",
                         "table_cards", "hand_size", "decks")
"""Rule fields a policy can only play as trained; the table size may differ within its padding."""
MASKED_LOGIT = -1e8
"""Logit given to illegal actions: far below any real logit, still finite in float32."""


class ActorCritic(nn.Module):
    """An MLP trunk with a policy head (one logit per action) and a value head."""

    def __init__(self, obs_size: int, num_actions: int, hidden_sizes: tuple[int, ...] = (256, 256)):
        super().__init__()
        layers: list[nn.Module] = []
        width = obs_size
        for size in hidden_sizes:
            linear = nn.Linear(width, size)
            nn.init.orthogonal_(linear.weight, gain=float(np.sqrt(2)))
            nn.init.zeros_(linear.bias)
            layers += [linear, nn.ReLU()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, num_actions)
        nn.init.orthogonal_(self.policy_head.weight, gain=0.01)
        nn.init.zeros_(self.policy_head.bias)
        self.value_head = nn.Linear(width, 1)
        nn.init.orthogonal_(self.value_head.weight, gain=1.0)
        nn.init.zeros_(self.value_head.bias)
        self.obs_size, self.num_actions, self.hidden_sizes = obs_size, num_actions, tuple(hidden_sizes)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits[B, A], value[B]) for observations[B, D]."""
        hidden = self.trunk(obs)
        return self.policy_head(hidden), self.value_head(hidden).squeeze(-1)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions' logits set to `MASKED_LOGIT`."""
    return torch.where(mask.bool(), logits, torch.full_like(logits, MASKED_LOGIT))


class NetworkPolicy(BasePolicy):
    """A `Policy` backed by an `ActorCritic`: samples (or takes the argmax of) the masked distribution.

    ``max_players`` is the padding of the observations it will be given; when
    the network was trained with another padding (``network_players``), the
    observations and masks are re-padded on the way in and the actions mapped
    back on the way out, so one checkpoint serves any table it can seat.
    """

    def __init__(self, network: ActorCritic, rules: RulesConfig, max_players: int | None = None,
                 network_players: int | None = None, deterministic: bool = False, name: str = "network",
                 device: str | None = None):
        super().__init__(rules, max_players)
        env_players = self.encoder.max_players
        network_players = env_players if network_players is None else network_players
        if network_players < rules.num_players:
            raise ValueError(f"network seats {network_players} players, the table has {rules.num_players}")
        self._obs_index = None if network_players == env_players else repadding_index(env_players, network_players)
        self._action_index = None
        if network_players != env_players:
            # network action -> env action
            self._action_index = action_repadding_index(rules.num_players, env_players, network_players)
        expected_obs = len(self._obs_index) if self._obs_index is not None else self.encoder.size
        expected_actions = len(self._action_index) if self._action_index is not None else self.actions.size
        if network.obs_size != expected_obs or network.num_actions != expected_actions:
            raise ValueError(
                f"network expects observations of {network.obs_size} and {network.num_actions} actions, "
                f"but {network_players}-seat padding gives {expected_obs} and {expected_actions}"
            )
        self.network = network
        self.deterministic = deterministic
        self.name = name
        self.device = torch.device(device) if device is not None else next(network.parameters()).device

    @torch.no_grad()
    def act_batch(self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal = check_mask(mask)
        obs = np.asarray(obs, dtype=np.float32).reshape(len(legal), -1)
        if self._obs_index is not None:
            obs = np.where(self._obs_index >= 0, obs[:, self._obs_index], np.float32(0.0))
            legal = np.where(self._action_index >= 0, legal[:, self._action_index], False)
        logits, _ = self.network(torch.as_tensor(obs, device=self.device))
        logits = masked_logits(logits, torch.as_tensor(legal, device=self.device)).double().cpu().numpy()
        if self.deterministic:
            choice = logits.argmax(axis=1)
        else:
            # Gumbel-max sampling with the caller's generator keeps play reproducible.
            gumbel = -np.log(-np.log(rng.random(logits.shape).clip(1e-300, 1.0)))
            choice = np.where(legal, logits + gumbel, -np.inf).argmax(axis=1)
        if self._action_index is not None:
            choice = self._action_index[choice]
        return choice.astype(np.int64)


def save_policy(folder: str | Path, network: ActorCritic, rules: RulesConfig, max_players: int | None,
                extra: dict | None = None) -> Path:
    """Write ``model.safetensors`` and ``metadata.json`` into ``folder`` (each atomically)."""
    from safetensors.torch import save

    folder = Path(folder)
    tensors = {name: tensor.detach().cpu().contiguous() for name, tensor in network.state_dict().items()}
    metadata = {
        "format": CHECKPOINT_FORMAT,
        "observation_version": OBSERVATION_VERSION,
        "rules": rules.to_dict(),
        "max_players": max_players if max_players is not None else rules.num_players,
        "obs_size": network.obs_size,
        "num_actions": network.num_actions,
        "hidden_sizes": list(network.hidden_sizes),
        **(extra or {}),
    }
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(folder / WEIGHTS_FILE, save(tensors))
    write_atomically(folder / METADATA_FILE, json.dumps(metadata, indent=2) + "\n")
    return folder


def resolve_checkpoint(path_or_name: str | Path) -> Path:
    """The checkpoint folder for a path (folder or weights file) or a shipped name such as ``2p``."""
    path = Path(path_or_name)
    if path.is_file():
        path = path.parent
    if path.is_dir():
        return path
    shipped = SHIPPED_DIR / SHIPPED_ALIASES.get(str(path_or_name), str(path_or_name))
    if shipped.is_dir():
        return shipped
    names = sorted(p.name for p in SHIPPED_DIR.iterdir() if (p / METADATA_FILE).is_file()) if SHIPPED_DIR.is_dir() else []
    raise FileNotFoundError(f"no checkpoint at {str(path_or_name)!r}: not a folder or file, nor a shipped checkpoint "
                            f"({names + sorted(SHIPPED_ALIASES)})")


def read_metadata(folder: Path) -> dict:
    meta_path = folder / METADATA_FILE
    if not meta_path.is_file():
        raise ValueError(f"{folder} is not a rouba_env checkpoint: {METADATA_FILE} is missing")
    try:
        metadata = json.loads(meta_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{meta_path} is not valid JSON ({error}); the checkpoint is damaged") from None
    if not isinstance(metadata, dict) or metadata.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{meta_path} is not a rouba_env policy checkpoint (format {CHECKPOINT_FORMAT!r} expected)")
    expected = {"observation_version": int, "obs_size": int, "num_actions": int, "max_players": int,
                "hidden_sizes": list, "rules": dict}
    for key, kind in expected.items():
        if not isinstance(metadata.get(key), kind) or isinstance(metadata.get(key), bool):
            raise ValueError(f"{meta_path}: field {key!r} is missing or not a {kind.__name__} "
                             f"(got {metadata.get(key)!r}); the checkpoint is damaged")
    try:
        RulesConfig.from_dict(metadata["rules"])
    except (ValueError, TypeError) as error:
        raise ValueError(f"{meta_path}: its rules are invalid: {error}") from None
    return metadata


def load_network(path_or_name: str | Path) -> tuple[ActorCritic, dict]:
    """The network and metadata of a checkpoint, with clear errors for damaged or foreign files."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    folder = resolve_checkpoint(path_or_name)
    metadata = read_metadata(folder)
    if metadata.get("observation_version") != OBSERVATION_VERSION:
        raise ValueError(
            f"checkpoint {folder} uses observation encoding version {metadata.get('observation_version')}, "
            f"this rouba_env encodes version {OBSERVATION_VERSION}; retrain or use a matching rouba_env"
        )
    weights = folder / WEIGHTS_FILE
    if not weights.is_file():
        raise ValueError(f"checkpoint {folder} has no {WEIGHTS_FILE}")
    try:
        tensors = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as error:
        raise ValueError(f"{weights} is not a readable safetensors file ({error}); it may be truncated") from None
    network = ActorCritic(int(metadata["obs_size"]), int(metadata["num_actions"]), tuple(metadata["hidden_sizes"]))
    try:
        network.load_state_dict(tensors)
    except RuntimeError as error:
        raise ValueError(f"{weights} does not match the network its metadata describes: {error}") from None
    network.eval()
    return network, metadata


def load_policy(path_or_name: str | Path, rules: RulesConfig | None = None, max_players: int | None = None,
                deterministic: bool = False) -> NetworkPolicy:
    """A `Policy` from a checkpoint path or shipped name.

    ``rules`` defaults to the checkpoint's own. Rules it was not trained for
    (other variant flags, or more seats than its padding) are an error.
    """
    network, metadata = load_network(path_or_name)
    trained = RulesConfig.from_dict(metadata["rules"])
    trained_max = int(metadata["max_players"])
    rules = trained if rules is None else rules
    differences = [name for name in RULES_THAT_MUST_MATCH if getattr(rules, name) != getattr(trained, name)]
    if differences:
        raise ValueError(f"checkpoint {path_or_name!r} was trained with other rules: {differences} differ "
                         f"(trained: { {d: getattr(trained, d) for d in differences} })")
    if rules.num_players > trained_max:
        raise ValueError(f"checkpoint {path_or_name!r} plays at most {trained_max} players, not {rules.num_players}")
    return NetworkPolicy(network, rules, max_players, network_players=trained_max, deterministic=deterministic,
                         name=f"checkpoint:{path_or_name}")


def checkpoint_player(rules: RulesConfig, max_players: int | None, argument: str | None = None,
                      deterministic: str = "true") -> NetworkPolicy:
    """The ``checkpoint:PATH_OR_NAME[,deterministic=false]`` player spec (see `rouba_env.players.base`).

    By default the policy plays its most likely legal action, as in the trainer's
    evaluations; ``deterministic=false`` samples from its distribution instead.
    """
    if argument is None:
        raise ValueError("a checkpoint spec needs a path or name: checkpoint:PATH or checkpoint:2p")
    if deterministic not in ("true", "false"):
        raise ValueError(f"deterministic must be true or false, got {deterministic!r}")
    return load_policy(argument, rules, max_players, deterministic=deterministic == "true")

