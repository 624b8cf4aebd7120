"""Policy checkpoints on disk: finding, validating and reading them, without torch.

A checkpoint is a folder (or the path of its ``model.safetensors``) holding

* ``model.safetensors``: the network weights as raw float32 tensors.
  safetensors stores no code, so reading a checkpoint can never run any;
* ``metadata.json``: rules, observation-encoding version, padding, network
  sizes, training steps, the command that made it and its evaluation.

Everything is checked before anything big is allocated: the metadata file's
size and field types, the network sizes against what this version of
rouba_env can play, the tensor names, dtypes and shapes in the safetensors
header against the sizes the metadata promises, and finally that every weight
is finite. A crafted or damaged checkpoint fails at once with a
`CheckpointError` that says what is wrong. Shipped checkpoints (``2p``,
``mixed``) live in the repository's top-level ``checkpoints/`` folder, installed into the package.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from rouba_env.checks import is_int, shown
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import (
    OBSERVATION_VERSION, OBSERVATION_VERSIONS, ObservationEncoder, observation_layout,
)
from rouba_env.files import write_atomically
from rouba_env.players.features import rank_context_index, rank_feature_names
from rouba_env.rules.config import MAX_PLAYERS, RulesConfig
from rouba_env.rules.core import NUM_KINDS

WEIGHTS_FILE = "model.safetensors"
PRIVILEGED_VALUE_FILE = "privileged_value.safetensors"
"""Optional: the trainer's privileged critic (an MLP over the observation and the hidden cards), which a
search scores its leaves with; the metadata's ``privileged_value`` gives its widths."""
METADATA_FILE = "metadata.json"
CHECKPOINT_FORMAT = "rouba_env-policy-1"
"""Identifies our metadata files; bumped if their meaning changes."""
PACKAGE_DIR = Path(__file__).resolve().parent.parent
SHIPPED_FOLDERS = (PACKAGE_DIR / "checkpoints", PACKAGE_DIR.parent / "checkpoints")
"""Where the shipped policies are: inside the installed package (the wheel maps the repository's top-level
``checkpoints/`` there), else in the source tree's top-level ``checkpoints/`` (a clone, an editable install)."""


def shipped_dir() -> Path:
    """The folder of the shipped checkpoints (see `SHIPPED_FOLDERS`)."""
    for folder in SHIPPED_FOLDERS:
        if folder.is_dir():
            return folder
    return SHIPPED_FOLDERS[0]
SHIPPED_ALIASES = {"3p": "mixed", "4p": "mixed"}
"""Shipped names served by another shipped policy (one network plays 2, 3 and 4 players)."""
ALIAS_TABLE_SIZES = {"3p": 3, "4p": 4}
"""The table size a shipped alias stands for (``load_policy("3p")`` plays 3 players)."""
RUN_POLICY_DIR = "policy"
"""A training run folder's latest policy: ``checkpoint:runs/x`` means ``runs/x/policy``."""
MAX_METADATA_BYTES = 256 * 1024
"""A metadata file larger than this is refused unread."""
MAX_HIDDEN_LAYERS = 8
MAX_HIDDEN_WIDTH = 4096
"""Largest network a checkpoint may describe: a few tens of MB of weights at most."""
MAX_HEADER_BYTES = 1024 * 1024
"""A safetensors header (the JSON tensor index) larger than this is refused."""
SAFETENSORS_LENGTH_BYTES = 8
"""A safetensors file starts with its header length as an unsigned 64-bit little-endian integer."""
WEIGHT_DTYPE = "F32"
ARCHITECTURES = ("mlp", "rank")
"""Networks a checkpoint can hold: the plain MLP, or the rank-shared network (`players.network.RankNetwork`).
A checkpoint without the field is an MLP (those written before the field existed)."""
RANK_NETWORK_WIDTHS = 2
"""A rank-shared network's ``hidden_sizes``: (context width, token width)."""


def network_fits(hidden_sizes) -> bool:
    """True for hidden sizes a checkpoint may hold: 1..`MAX_HIDDEN_LAYERS` widths in 1..`MAX_HIDDEN_WIDTH`.

    The one test of a network's size: the loader applies it, and so do the writer and the trainer's
    settings, so nothing is trained or written that could not be loaded.
    """
    return (isinstance(hidden_sizes, (list, tuple)) and 1 <= len(hidden_sizes) <= MAX_HIDDEN_LAYERS
            and all(isinstance(h, int) and is_int(h) and 1 <= h <= MAX_HIDDEN_WIDTH for h in hidden_sizes))


class CheckpointError(ValueError):
    """A checkpoint cannot be used: missing, damaged, foreign, too big or for other rules."""


class CheckpointTableMismatch(CheckpointError):
    """A sound checkpoint, but trained for other rules or fewer seats than the table asks for."""


def resolve_checkpoint(path_or_name: str | Path) -> Path:
    """The checkpoint folder for a shipped name such as ``2p`` or a path (folder or weights file).

    A shipped name always means the shipped checkpoint, whatever the working folder holds; a local
    folder of that name is reached as a path (``./2p``). Surrounding spaces are never part of a name
    or path (as in player specs).
    """
    if not isinstance(path_or_name, (str, Path)) or not str(path_or_name).strip():
        raise CheckpointError(f"a checkpoint is a path or a shipped name, got {path_or_name!r}")
    text = path_or_name.strip() if isinstance(path_or_name, str) else str(path_or_name)
    if isinstance(path_or_name, str) and text in shipped_names():
        shipped = shipped_dir() / SHIPPED_ALIASES.get(text, text)
        if shipped.is_dir():
            return shipped
    path = Path(text)
    try:
        if path.is_file():
            path = path.parent
        if path.is_dir():
            if not (path / METADATA_FILE).exists() and (path / RUN_POLICY_DIR / METADATA_FILE).is_file():
                return path / RUN_POLICY_DIR  # a training run folder: its latest policy
            return path
    except OSError as error:  # a name over the file system's limit, say
        raise CheckpointError(f"cannot open checkpoint {shown(text)}: {error.strerror or error}") from None
    raise FileNotFoundError(f"no checkpoint at {shown(text)}: not a folder or file, nor a shipped checkpoint "
                            f"({shipped_names()})")


def shipped_names() -> list[str]:
    """Names that `load_policy` finds without a path."""
    folder = shipped_dir()
    names = sorted(p.name for p in folder.iterdir() if (p / METADATA_FILE).is_file()) if folder.is_dir() else []
    return names + sorted(SHIPPED_ALIASES)


def read_metadata(folder: Path) -> dict:
    """The validated metadata of a checkpoint folder."""
    meta_path = folder / METADATA_FILE
    if not meta_path.exists():
        raise CheckpointError(f"{folder} is not a rouba_env checkpoint: {METADATA_FILE} is missing")
    if not meta_path.is_file():
        raise CheckpointError(f"{meta_path} is not a regular file (a device, a folder or a pipe); the checkpoint "
                              f"is damaged or not ours")
    try:
        with open(meta_path, "rb") as stream:  # at most the limit, whatever size the file reports
            raw = stream.read(MAX_METADATA_BYTES + 1)
    except OSError as error:
        raise CheckpointError(f"{meta_path} cannot be read: {error.strerror or error}") from None
    if len(raw) > MAX_METADATA_BYTES:
        raise CheckpointError(f"{meta_path} is larger than the {MAX_METADATA_BYTES} bytes a metadata file may "
                              f"have; the checkpoint is damaged or not ours")
    try:
        metadata = json.loads(raw)
    except (ValueError, RecursionError) as error:  # bad JSON, bad UTF-8, a number of thousands of digits
        raise CheckpointError(f"{meta_path} is not valid JSON ({type(error).__name__}); the checkpoint is damaged") from None
    if not isinstance(metadata, dict) or metadata.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{meta_path} is not a rouba_env policy checkpoint (format {CHECKPOINT_FORMAT!r} expected)")
    for key in ("observation_version", "obs_size", "num_actions", "max_players"):
        value = metadata.get(key)
        if not isinstance(value, int) or not is_int(value):
            raise CheckpointError(f"{meta_path}: field {key!r} must be an int, got {shown(value)}; the checkpoint "
                                  f"is damaged")
    if not isinstance(metadata.get("rules"), dict):
        raise CheckpointError(f"{meta_path}: field 'rules' must be an object, got {metadata.get('rules')!r}")
    try:
        rules = RulesConfig.from_dict(metadata["rules"])
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{meta_path}: its rules are invalid: {error}") from None
    if metadata["observation_version"] not in OBSERVATION_VERSIONS:
        raise CheckpointError(
            f"checkpoint {folder} uses observation encoding version {metadata['observation_version']}, "
            f"this rouba_env reads versions {list(OBSERVATION_VERSIONS)}; retrain or use a matching rouba_env"
        )
    max_players = metadata["max_players"]
    if not rules.num_players <= max_players <= MAX_PLAYERS:
        raise CheckpointError(f"{meta_path}: max_players={max_players} must lie in {rules.num_players}..{MAX_PLAYERS}")
    layout = observation_layout(max_players, metadata["observation_version"])
    expected = {"obs_size": max(block.stop for block in layout.values()),
                "num_actions": ActionEncoding(rules, max_players).size}
    for key, value in expected.items():
        if metadata[key] != value:
            raise CheckpointError(f"{meta_path}: {key}={metadata[key]} but {max_players}-seat padding needs {value}")
    hidden = metadata.get("hidden_sizes")
    if not network_fits(hidden):
        raise CheckpointError(f"{meta_path}: hidden_sizes must be a list of 1..{MAX_HIDDEN_LAYERS} ints in "
                              f"1..{MAX_HIDDEN_WIDTH}, got {shown(hidden)}")
    architecture = metadata.get("architecture", "mlp")
    if architecture not in ARCHITECTURES:
        raise CheckpointError(f"{meta_path}: architecture must be one of {list(ARCHITECTURES)}, got {architecture!r}")
    if architecture == "rank" and len(hidden or ()) != RANK_NETWORK_WIDTHS:
        raise CheckpointError(f"{meta_path}: a rank network's hidden_sizes are (context width, token width), "
                              f"got {hidden!r}")
    return metadata


# ------------------------------------------------------------ tensor names
# The one table of checkpoint tensor names: torch's ``state_dict`` names of the trainer's networks, which
# the writers check against (`write_checkpoint`) and every reader looks up through these functions.

POLICY_HEAD, VALUE_HEAD = "policy_head", "value_head"
"""The MLP's heads (and the rank network's value head)."""
MLP_TRUNK = "trunk"
"""The MLP's hidden layers: a torch ``Sequential`` of Linear, ReLU, Linear, ReLU, ..."""
RANK_CONTEXT, RANK_TOKEN, RANK_TOKEN_CONTEXT = "context", "token", "token_context"
RANK_MIX, RANK_MIX_POOL, RANK_MIX_CONTEXT = "mix", "mix_pool", "mix_context"
RANK_NATURAL_HEAD, RANK_JOKER_HEAD, RANK_JOKER_CONTEXT = "natural_head", "joker_head", "joker_context"
"""The rank network's layers (`rouba_env.players.network.RankNetwork`)."""


def weight_of(layer: str) -> str:
    """The name of a layer's weight tensor (``[out, in]``, torch's layout)."""
    return f"{layer}.weight"


def bias_of(layer: str) -> str:
    """The name of a layer's bias tensor."""
    return f"{layer}.bias"


def mlp_hidden_layer(index: int) -> str:
    """The MLP's ``index``-th hidden Linear layer (every other entry of its trunk: a ReLU sits between)."""
    return f"{MLP_TRUNK}.{2 * index}"


def critic_layer(index: int) -> str:
    """The privileged critic's ``index``-th Linear layer (a ``Sequential`` of Linear and ReLU, saved alone)."""
    return f"{2 * index}"


def expected_shapes(metadata: dict) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape of the actor-critic network the metadata describes (torch's ``state_dict`` names)."""
    if metadata.get("architecture", "mlp") == "rank":
        return rank_network_shapes(metadata)
    shapes: dict[str, tuple[int, ...]] = {}
    width = metadata["obs_size"]
    for layer, size in enumerate(metadata["hidden_sizes"]):
        shapes[weight_of(mlp_hidden_layer(layer))] = (size, width)
        shapes[bias_of(mlp_hidden_layer(layer))] = (size,)
        width = size
    shapes[weight_of(POLICY_HEAD)] = (metadata["num_actions"], width)
    shapes[bias_of(POLICY_HEAD)] = (metadata["num_actions"],)
    shapes[weight_of(VALUE_HEAD)] = (1, width)
    shapes[bias_of(VALUE_HEAD)] = (1,)
    return shapes


def rank_network_shapes(metadata: dict) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape of the rank-shared network (`rouba_env.players.network.RankNetwork`)."""
    context, token = metadata["hidden_sizes"]
    version = metadata["observation_version"]
    features = len(rank_feature_names(metadata["max_players"], version))
    targets = metadata["num_actions"] // NUM_KINDS
    return {
        weight_of(RANK_CONTEXT): (context, len(rank_context_index(metadata["max_players"], version))),
        bias_of(RANK_CONTEXT): (context,),
        weight_of(RANK_TOKEN): (token, features), weight_of(RANK_TOKEN_CONTEXT): (token, context),
        bias_of(RANK_TOKEN): (token,),
        weight_of(RANK_MIX): (token, token), weight_of(RANK_MIX_POOL): (token, token),
        weight_of(RANK_MIX_CONTEXT): (token, context), bias_of(RANK_MIX): (token,),
        weight_of(RANK_NATURAL_HEAD): (targets, token), bias_of(RANK_NATURAL_HEAD): (targets,),
        weight_of(RANK_JOKER_HEAD): (targets, token), weight_of(RANK_JOKER_CONTEXT): (targets, token),
        bias_of(RANK_JOKER_HEAD): (targets,),
        weight_of(VALUE_HEAD): (1, token + context), bias_of(VALUE_HEAD): (1,),
    }


def check_weights_header(weights: Path, shapes: dict[str, tuple[int, ...]]) -> None:
    """Read only the safetensors header and check names, dtypes, shapes and offsets against ``shapes``."""
    file_size = weights.stat().st_size
    with weights.open("rb") as stream:
        prefix = stream.read(SAFETENSORS_LENGTH_BYTES)
        if len(prefix) < SAFETENSORS_LENGTH_BYTES:
            raise CheckpointError(f"{weights} is too short to be a safetensors file; it may be truncated")
        (header_size,) = struct.unpack("<Q", prefix)
        if header_size > min(MAX_HEADER_BYTES, file_size - SAFETENSORS_LENGTH_BYTES):
            raise CheckpointError(f"{weights}: its header claims {header_size} bytes; the file is damaged or truncated")
        try:
            header = json.loads(stream.read(header_size))
        except (ValueError, RecursionError):  # bad JSON, bad UTF-8, a number of thousands of digits
            raise CheckpointError(f"{weights}: its header is not valid JSON; the file is damaged") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{weights}: its header is not a tensor index; the file is damaged")
    header.pop("__metadata__", None)
    if set(header) != set(shapes):
        missing, extra = sorted(set(shapes) - set(header)), sorted(set(header) - set(shapes))
        raise CheckpointError(f"{weights} does not hold the network its metadata describes "
                              f"(missing {missing}, unexpected {extra})")
    data_size = file_size - SAFETENSORS_LENGTH_BYTES - header_size
    for name, shape in shapes.items():
        entry = header[name]
        if not isinstance(entry, dict) or entry.get("dtype") != WEIGHT_DTYPE or entry.get("shape") != list(shape):
            raise CheckpointError(f"{weights}: tensor {name} is {entry!r}, expected {WEIGHT_DTYPE} of shape "
                                  f"{list(shape)}")
        offsets = entry.get("data_offsets")
        length = 4 * int(np.prod(shape))
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(isinstance(o, int) for o in offsets)
                or offsets[1] - offsets[0] != length or not 0 <= offsets[0] <= offsets[1] <= data_size):
            raise CheckpointError(f"{weights}: tensor {name} lies outside the file; it is damaged or truncated")


def privileged_value_shapes(metadata: dict) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape of the privileged critic the metadata's ``privileged_value`` describes; a
    CheckpointError if that entry is malformed. Layers ``0, 2, ...`` (torch ``Sequential`` names) are
    Linear layers with ReLU between them, the last one gives the value."""
    entry = metadata.get("privileged_value")
    widths = entry.get("widths") if isinstance(entry, dict) else None
    hidden_size = entry.get("hidden_size") if isinstance(entry, dict) else None
    if (not isinstance(widths, list) or not network_fits(widths) or not isinstance(hidden_size, int)
            or not 1 <= hidden_size <= MAX_HIDDEN_WIDTH):
        raise CheckpointError(f"the metadata's privileged_value must be {{'widths': [1..{MAX_HIDDEN_LAYERS} ints], "
                              f"'hidden_size': int}}, got {shown(entry)}")
    shapes: dict[str, tuple[int, ...]] = {}
    width = metadata["obs_size"] + hidden_size
    for layer, size in enumerate([*widths, 1]):
        shapes[weight_of(critic_layer(layer))], shapes[bias_of(critic_layer(layer))] = (size, width), (size,)
        width = size
    return shapes


HAND_HEAD_FILE = "hand_head.safetensors"
"""Optional: a rank network's hand head (``weight``, ``bias``: from each rank's token, that rank's count in
every seat's hand and the deck), which a search can draw its determinizations by."""


HAND_HEAD_WEIGHT, HAND_HEAD_BIAS = "weight", "bias"
"""The hand head's two tensors (a single Linear layer, saved alone)."""


def hand_head_shapes(metadata: dict) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape of the hand head of a rank network's metadata (one output per seat and the deck)."""
    if metadata.get("architecture", "mlp") != "rank":
        raise CheckpointError("a hand head ships with rank networks only (architecture rank)")
    outputs = metadata["max_players"] + 1
    return {HAND_HEAD_WEIGHT: (outputs, metadata["hidden_sizes"][1]), HAND_HEAD_BIAS: (outputs,)}


def read_hand_head(folder: str | Path, metadata: dict) -> dict[str, np.ndarray] | None:
    """The checkpoint's hand head (`HAND_HEAD_FILE`) as float32 arrays, or None if it has none."""
    if not metadata.get("hand_head"):
        return None
    return _read_tensors(Path(folder) / HAND_HEAD_FILE, hand_head_shapes(metadata))


def read_privileged_value(folder: str | Path, metadata: dict) -> dict[str, np.ndarray] | None:
    """The checkpoint's privileged critic (`PRIVILEGED_VALUE_FILE`) as float32 arrays, or None if it has none."""
    if "privileged_value" not in metadata:
        return None
    return _read_tensors(Path(folder) / PRIVILEGED_VALUE_FILE, privileged_value_shapes(metadata))


def read_weights(folder: Path, metadata: dict) -> dict[str, np.ndarray]:
    """The checkpoint's tensors as float32 numpy arrays, after checking the header; finite values only."""
    return _read_tensors(folder / WEIGHTS_FILE, expected_shapes(metadata))


def _read_tensors(weights: Path, shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    if not weights.is_file():
        raise CheckpointError(f"checkpoint {weights.parent} has no {weights.name}")
    check_weights_header(weights, shapes)
    try:
        tensors = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as error:
        raise CheckpointError(f"{weights} is not a readable safetensors file ({error}); it may be truncated") from None
    for name, tensor in tensors.items():
        if not np.isfinite(tensor).all():
            raise CheckpointError(f"{weights}: tensor {name} holds non-finite values (NaN or infinity)")
    return tensors


def load_checkpoint(path_or_name: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """(tensors, metadata) of a checkpoint path or shipped name, fully validated."""
    folder = resolve_checkpoint(path_or_name)
    metadata = read_metadata(folder)
    return read_weights(folder, metadata), metadata


def _write_tensors(path: Path, what: str, tensors: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]]) -> None:
    """One extra safetensors file of a checkpoint, after checking its tensors' shapes (a ValueError naming them)."""
    from safetensors.numpy import save

    if {name: tuple(array.shape) for name, array in tensors.items()} != shapes:
        raise ValueError(f"{what} tensors must have the shapes {shapes}")
    write_atomically(path, save({name: np.ascontiguousarray(array, dtype=np.float32) for name, array in tensors.items()}))


def write_checkpoint(folder: str | Path, tensors: dict[str, np.ndarray], rules: RulesConfig,
                     *,
                     max_players: int | None, hidden_sizes: tuple[int, ...], extra: dict | None = None,
                     architecture: str = "mlp", privileged_value: dict[str, np.ndarray] | None = None,
                     hand_head: dict[str, np.ndarray] | None = None) -> Path:
    """Write ``model.safetensors`` (and `PRIVILEGED_VALUE_FILE` when given), then ``metadata.json``, each atomically.

    ``privileged_value``: a privileged critic's tensors (``0.weight``, ``0.bias``, ``2.weight``, ...: Linear
    layers over the observation and `ObservationEncoder.hidden`, the last one of width 1). ``hand_head``: a
    rank network's hand head (`hand_head_shapes`).
    """
    if architecture not in ARCHITECTURES:
        raise ValueError(f"architecture must be one of {list(ARCHITECTURES)}, got {architecture!r}")
    if not network_fits(list(hidden_sizes)):
        raise ValueError(f"hidden_sizes must be 1..{MAX_HIDDEN_LAYERS} widths in 1..{MAX_HIDDEN_WIDTH} (what a "
                         f"checkpoint may hold), got {shown(list(hidden_sizes))}")
    from safetensors.numpy import save

    folder = Path(folder)
    max_players = rules.num_players if max_players is None else max_players
    metadata = {
        "format": CHECKPOINT_FORMAT,
        "observation_version": OBSERVATION_VERSION,
        "rules": rules.to_dict(),
        "max_players": max_players,
        "obs_size": ObservationEncoder(rules, max_players).size,
        "num_actions": ActionEncoding(rules, max_players).size,
        "hidden_sizes": [int(size) for size in hidden_sizes],
        "architecture": architecture,
        **(extra or {}),
    }
    shapes = expected_shapes(metadata)
    if {name: tuple(array.shape) for name, array in tensors.items()} != shapes:
        raise ValueError(f"tensors do not match hidden_sizes={list(hidden_sizes)}: expected shapes {shapes}")
    if privileged_value is not None:
        layers = len(privileged_value) // 2
        metadata["privileged_value"] = {
            "widths": [int(privileged_value[f"{2 * layer}.bias"].shape[0]) for layer in range(layers - 1)],
            "hidden_size": int(privileged_value["0.weight"].shape[1]) - metadata["obs_size"]}
        _write_tensors(folder / PRIVILEGED_VALUE_FILE, "privileged_value", privileged_value,
                       privileged_value_shapes(metadata))
    if hand_head is not None:
        metadata["hand_head"] = True
        _write_tensors(folder / HAND_HEAD_FILE, "hand_head", hand_head, hand_head_shapes(metadata))
    arrays = {name: np.ascontiguousarray(array, dtype=np.float32) for name, array in tensors.items()}
    write_atomically(folder / WEIGHTS_FILE, save(arrays))
    write_atomically(folder / METADATA_FILE, json.dumps(metadata, indent=2) + "\n")
    return folder
