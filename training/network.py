"""The trainer's torch actor-critic network, and saving it as a checkpoint that plays without torch.

`ActorCritic`'s and `RankActorCritic`'s (both `Actor`s) ``state_dict`` names and layouts are
the ones `rouba_env.players.checkpoint` expects and
`rouba_env.players.network.MLP` / `RankNetwork` run in numpy, so a saved
policy plays the same actions in either.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from rouba_env.players.features import extended_index, rank_context_index, rank_feature_index
from rouba_env.players.network import MASKED_LOGIT, MLP, NetworkPolicy, RankNetwork
from rouba_env.players.checkpoint import (
    load_checkpoint, read_privileged_value, resolve_checkpoint, write_checkpoint,
)
from rouba_env.rules.core import NUM_KINDS
from rouba_env.rules.engine import NUM_RANK_SLOTS
from rouba_env.rules.config import RulesConfig

ORTHOGONAL_HIDDEN_GAIN = float(np.sqrt(2))
POLICY_HEAD_GAIN = 0.01
"""A small policy head starts near uniform over the legal actions."""
VALUE_HEAD_GAIN = 1.0


class Actor(nn.Module):
    """What every trainer network offers, so no caller asks which kind it holds: ``forward(obs, hidden=None)``
    gives (logits[B, A], value[B]); ``forward_with_hands(obs, hidden=None)`` adds the hand head's guesses;
    ``actor`` is the part that plays and is saved; ``reads_hidden`` says whether training must pass the
    hidden cards (``hidden``: what the observation hides, `ObservationEncoder.hidden`). A plain actor's value
    reads the observation alone, so it takes ``hidden`` and leaves it."""

    @property
    def actor(self) -> "Actor":
        return self

    @property
    def reads_hidden(self) -> bool:
        return hasattr(self, HAND_HEAD)

    def forward(self, obs: torch.Tensor, hidden: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits[B, A], value[B]) for observations[B, D]."""
        logits, value, _ = self._forward(obs, with_hands=False)
        return logits, value

    def forward_with_hands(self, obs: torch.Tensor,
                           hidden: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(logits, value, predicted hidden cards[B, H]) in one pass (needs `add_hand_head`)."""
        return self._forward(obs, with_hands=True)

    def forward_with_action_values(self, obs: torch.Tensor,
                                   hidden: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(logits, value, action values[B, A]) in one pass (needs `add_action_value_head`): the action-value
        head's estimate of each action's return, read by the mirror-fit update."""
        return self._forward(obs, with_hands=False, with_action_values=True)

    def privileged_action_values(self, obs: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """[B, A] every action's value given the hidden cards too: only a `PrivilegedCritic` with action
        values has them."""
        raise ValueError("only a privileged critic (critic privileged) has action values that see the hidden cards")

    privileged = False
    """Whether a critic that sees the hidden cards gives the value in training (`PrivilegedCritic`)."""

    def critic_tensors(self) -> dict[str, np.ndarray] | None:
        """A privileged critic's weights, saved beside the actor; None without one."""
        return None

    def hand_head_tensors(self) -> dict[str, np.ndarray] | None:
        """A rank network's hand head's weights, saved beside the actor for a search's determinizations;
        None without one."""
        if self.architecture != "rank" or not hasattr(self, HAND_HEAD):
            return None
        return {name: tensor.detach().cpu().numpy().astype(np.float32, copy=True)
                for name, tensor in getattr(self, HAND_HEAD).state_dict().items()}

    def _forward(self, obs: torch.Tensor, with_hands: bool, with_action_values: bool = False):
        raise NotImplementedError


class ActorCritic(Actor):
    """An MLP trunk (ReLU) with a policy head (one logit per action) and a value head."""

    def __init__(self, obs_size: int, num_actions: int, hidden_sizes: tuple[int, ...] = (256, 256)):
        super().__init__()
        layers: list[nn.Module] = []
        width = obs_size
        for size in hidden_sizes:
            linear = nn.Linear(width, size)
            nn.init.orthogonal_(linear.weight, gain=ORTHOGONAL_HIDDEN_GAIN)
            nn.init.zeros_(linear.bias)
            layers += [linear, nn.ReLU()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, num_actions)
        nn.init.orthogonal_(self.policy_head.weight, gain=POLICY_HEAD_GAIN)
        nn.init.zeros_(self.policy_head.bias)
        self.value_head = nn.Linear(width, 1)
        nn.init.orthogonal_(self.value_head.weight, gain=VALUE_HEAD_GAIN)
        nn.init.zeros_(self.value_head.bias)
        self.obs_size, self.num_actions, self.hidden_sizes = obs_size, num_actions, tuple(hidden_sizes)

    architecture = "mlp"
    policy_layers = ("policy_head",)
    """The layers whose outputs are the logits, linearly: scaling them scales every logit (`soften_policy`)."""

    def add_hand_head(self, hidden_size: int) -> None:
        """An auxiliary head predicting what the observation hides (`HAND_HEAD`), read from the trunk."""
        self.hand_head = _linear(self.trunk[-2].out_features, hidden_size, VALUE_HEAD_GAIN)

    def add_action_value_head(self) -> None:
        """A head estimating every action's return (`ACTION_VALUE_HEAD`), read from the trunk."""
        self.action_value_head = _linear(self.trunk[-2].out_features, self.num_actions, VALUE_HEAD_GAIN)

    def _forward(self, obs: torch.Tensor, with_hands: bool, with_action_values: bool = False):
        features = self.trunk(obs)
        logits, value = self.policy_head(features), self.value_head(features).squeeze(-1)
        if with_action_values:
            return logits, value, self.action_value_head(features)
        return logits, value, self.hand_head(features) if with_hands else None


def _mlp(inputs: int, widths: tuple[int, ...], outputs: int) -> nn.Sequential:
    """ReLU hidden layers of ``widths`` and a linear output layer (a privileged critic's value or action values)."""
    layers: list[nn.Module] = []
    for size in widths:
        layers += [_linear(inputs, size, ORTHOGONAL_HIDDEN_GAIN), nn.ReLU()]
        inputs = size
    return nn.Sequential(*layers, _linear(inputs, outputs, VALUE_HEAD_GAIN))


def _linear(inputs: int, outputs: int, gain: float, bias: bool = True) -> nn.Linear:
    layer = nn.Linear(inputs, outputs, bias=bias)
    nn.init.orthogonal_(layer.weight, gain=gain)
    if bias:
        nn.init.zeros_(layer.bias)
    return layer


class RankActorCritic(Actor):
    """The rank-shared actor-critic (one token per rank slot, shared weights); see `rouba_env.players.network.RankNetwork`.

    ``hidden_sizes`` is (context width, token width).
    """

    architecture = "rank"
    policy_layers = ("natural_head", "joker_head", "joker_context")
    """The layers whose outputs are the logits, linearly: scaling them scales every logit (`soften_policy`)."""

    def __init__(self, obs_size: int, num_actions: int, hidden_sizes: tuple[int, ...], max_players: int):
        super().__init__()
        if len(hidden_sizes) != 2:
            raise ValueError(f"a rank network's hidden_sizes are (context width, token width), got {hidden_sizes}")
        context, token = hidden_sizes
        first, second = rank_feature_index(max_players)
        self.register_buffer("first", torch.as_tensor(extended_index(first, obs_size)), persistent=False)
        self.register_buffer("second", torch.as_tensor(extended_index(second, obs_size)), persistent=False)
        context_index = rank_context_index(max_players)
        self.register_buffer("context_index", torch.as_tensor(context_index), persistent=False)
        features, targets = first.shape[1], num_actions // NUM_KINDS
        gain = ORTHOGONAL_HIDDEN_GAIN
        self.context = _linear(len(context_index), context, gain)
        self.token = _linear(features, token, gain)
        self.token_context = _linear(context, token, gain, bias=False)
        self.mix = _linear(token, token, gain)
        self.mix_pool = _linear(token, token, gain, bias=False)
        self.mix_context = _linear(context, token, gain, bias=False)
        self.natural_head = _linear(token, targets, POLICY_HEAD_GAIN)
        self.joker_head = _linear(token, targets, POLICY_HEAD_GAIN)
        self.joker_context = _linear(token, targets, POLICY_HEAD_GAIN, bias=False)
        self.value_head = _linear(token + context, 1, VALUE_HEAD_GAIN)
        self.obs_size, self.num_actions, self.hidden_sizes = obs_size, num_actions, tuple(hidden_sizes)
        self.max_players = max_players

    def add_hand_head(self, hidden_size: int) -> None:
        """An auxiliary head predicting what the observation hides (`HAND_HEAD`): from each rank's token,
        that rank's count in every seat's hand and in the deck."""
        self.hand_head = _linear(self.token.out_features, hidden_size // NUM_RANK_SLOTS, VALUE_HEAD_GAIN)

    def add_action_value_head(self) -> None:
        """A head estimating every action's return (`ACTION_VALUE_HEAD`), shaped as the policy's heads: from
        each rank's token, that rank's actions' values (natural and joker), the joker's context added."""
        token, targets = self.token.out_features, self.num_actions // NUM_KINDS
        self.action_value_head = nn.ModuleDict({
            "natural": _linear(token, targets, VALUE_HEAD_GAIN), "joker": _linear(token, targets, VALUE_HEAD_GAIN),
            "joker_context": _linear(token, targets, VALUE_HEAD_GAIN, bias=False)})

    def _forward(self, obs: torch.Tensor, with_hands: bool, with_action_values: bool = False):
        logits, value, tokens = self._tokens(obs)
        if with_action_values:
            return logits, value, self._by_action(tokens, *self.action_value_head.values())
        if not with_hands:
            return logits, value, None
        per_rank = self.hand_head(tokens)  # [B, R, seats + deck]
        return logits, value, per_rank.transpose(1, 2).reshape(obs.shape[0], -1)

    def _tokens(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        batch = obs.shape[0]
        extended = torch.cat([obs, obs.new_zeros(batch, 1), obs.new_ones(batch, 1)], dim=1)
        features = (extended.index_select(1, self.first.reshape(-1))  # [B, R, F]; a flat index_select is
                    * extended.index_select(1, self.second.reshape(-1))).view(batch, *self.first.shape)  # the fastest
        context = torch.relu(self.context(obs[:, self.context_index]))
        tokens = torch.relu(self.token(features) + self.token_context(context)[:, None, :])
        pooled = self.mix_pool(tokens.mean(dim=1)) + self.mix_context(context)
        tokens = torch.relu(self.mix(tokens) + pooled[:, None, :])
        logits = self._by_action(tokens, self.natural_head, self.joker_head, self.joker_context)
        value = self.value_head(torch.cat([tokens.mean(dim=1), context], dim=1))
        return logits, value.squeeze(-1), tokens

    @staticmethod
    def _by_action(tokens: torch.Tensor, natural_head: nn.Module, joker_head: nn.Module,
                   joker_context: nn.Module) -> torch.Tensor:
        """[B, A]: one output per action from the rank tokens (the last token is the joker's context)."""
        ranks = tokens[:, :-1]
        natural = natural_head(ranks)
        joker = joker_head(ranks) + joker_context(tokens[:, -1])[:, None, :]
        return torch.cat([natural, joker], dim=1).reshape(tokens.shape[0], -1)


CRITICS = ("shared", "privileged")
"""Where the value comes from: the actor's own value head, or a critic that also sees the hidden cards."""
PRIVILEGED_CRITIC_WIDTHS = (256, 256)


class PrivilegedCritic(nn.Module):
    """An actor whose value, in training, comes from a critic that also sees what the observation hides.

    Asymmetric actor-critic: the critic (an MLP) reads the observation and the hidden cards (every
    hand and the deck per rank, `ObservationEncoder.hidden`), so it scores a position with far less
    noise than a critic that must guess them; the actor reads the observation only, and only the
    actor is saved as a checkpoint (it plays without the hidden cards, as it must).
    ``forward(obs)`` without ``hidden`` gives the actor's own logits and value (a snapshot playing).
    """

    def __init__(self, actor: "ActorCritic | RankActorCritic", hidden_size: int,
                 widths: tuple[int, ...] = PRIVILEGED_CRITIC_WIDTHS):
        super().__init__()
        self.actor = actor
        self.critic = _mlp(actor.obs_size + hidden_size, widths, 1)
        if hasattr(actor, ACTION_VALUE_HEAD):  # the mirror fit's actor learns its action values from these
            self.privileged_action_value_head = _mlp(actor.obs_size + hidden_size, widths, actor.num_actions)
        self.hidden_size = hidden_size
        self.architecture, self.obs_size, self.num_actions = actor.architecture, actor.obs_size, actor.num_actions
        self.hidden_sizes = actor.hidden_sizes

    reads_hidden = True
    privileged = True

    def forward(self, obs: torch.Tensor, hidden: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        logits, value = self.actor(obs)
        return logits, self._value(obs, hidden, value)

    def forward_with_hands(self, obs: torch.Tensor,
                           hidden: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, value, hands = self.actor.forward_with_hands(obs)
        return logits, self._value(obs, hidden, value), hands

    def forward_with_action_values(self, obs: torch.Tensor,
                                   hidden: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(logits, the critic's value, the actor's own action values), the actor's value without ``hidden``."""
        logits, value, action_values = self.actor.forward_with_action_values(obs)
        return logits, self._value(obs, hidden, value), action_values

    def privileged_action_values(self, obs: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """[B, A] every action's value given the hidden cards: averaged over the histories an information set
        holds, it is the set's action value, which the actor's action-value head learns from it."""
        if not hasattr(self, PRIVILEGED_ACTION_VALUE_HEAD):
            raise ValueError("this privileged critic has no action values (they come with policy_objective "
                             "mirror_fit)")
        if hidden is None:
            raise ValueError("a privileged critic's action values need the hidden cards (hidden=None given)")
        return self.privileged_action_value_head(torch.cat([obs, hidden], dim=1))

    def _value(self, obs: torch.Tensor, hidden: torch.Tensor | None, own: torch.Tensor) -> torch.Tensor:
        """The critic's value given the hidden cards; without them the actor's own (a snapshot playing)."""
        return own if hidden is None else self.critic(torch.cat([obs, hidden], dim=1)).squeeze(-1)

    def critic_tensors(self) -> dict[str, np.ndarray]:
        """The critic's weights as a checkpoint stores them beside the actor."""
        return {name: tensor.detach().cpu().numpy().astype(np.float32, copy=True)
                for name, tensor in self.critic.state_dict().items()}


TrainerNetwork = Actor | PrivilegedCritic
"""A trainer's network: both kinds answer the same calls (`Actor`'s), so no caller dispatches on the kind."""


def playing_network(network: TrainerNetwork) -> Actor:
    """The part of a trainer's network that plays and is saved (a `PrivilegedCritic`'s actor)."""
    return network.actor


def make_network(architecture: str, obs_size: int, num_actions: int, *, hidden_sizes: tuple[int, ...],
                 max_players: int, critic: str = "shared", hidden_size: int = 0,
                 hand_head: bool = False, action_values: bool = False) -> TrainerNetwork:
    """The trainer's network for ``TrainConfig.architecture``, ``critic``, ``hand_coef`` (a hand head) and
    ``policy_objective`` (an action-value head for the mirror fit)."""
    if architecture == "rank":
        actor: Actor = RankActorCritic(obs_size, num_actions, hidden_sizes, max_players)
    elif architecture == "mlp":
        actor = ActorCritic(obs_size, num_actions, hidden_sizes)
    else:
        raise ValueError(f"architecture must be mlp or rank, got {architecture!r}")
    if hand_head:
        actor.add_hand_head(hidden_size)
    if action_values:
        actor.add_action_value_head()
    if critic == "privileged":
        return PrivilegedCritic(actor, hidden_size)
    if critic != "shared":
        raise ValueError(f"critic must be one of {CRITICS}, got {critic!r}")
    return actor


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions' logits set to `MASKED_LOGIT`."""
    return torch.where(mask.bool(), logits, torch.full_like(logits, MASKED_LOGIT))


HAND_HEAD = "hand_head"
"""The auxiliary hand-prediction head's name: trained with the network, never saved in a checkpoint
(a player needs no guess of the hands to play; the head only shapes what the network learns)."""
ACTION_VALUE_HEAD = "action_value_head"
"""The action-value head's name: it serves the mirror-fit update in training and is never saved (a player
plays by its policy)."""
PRIVILEGED_ACTION_VALUE_HEAD = "privileged_action_value_head"
"""A privileged critic's action values (seeing the hidden cards), the mirror-fit actor's head's teacher: like
that head, training only (kept in a run's checkpoint.pt for resuming, never in a player's checkpoint folder)."""
TRAINING_ONLY_HEADS = (HAND_HEAD, ACTION_VALUE_HEAD)


def _training_only(name: str) -> bool:
    return name.startswith(tuple(head + "." for head in TRAINING_ONLY_HEADS))


def network_tensors(network: ActorCritic) -> dict[str, np.ndarray]:
    """The network's playing weights as float32 numpy arrays on the CPU (checkpoint names; no training-only head)."""
    return {name: tensor.detach().cpu().numpy().astype(np.float32, copy=True)
            for name, tensor in network.state_dict().items() if not _training_only(name)}


def numpy_policy(network: ActorCritic | RankActorCritic, rules: RulesConfig, max_players: int,
                 *,
                 name: str = "learner", deterministic: bool = True) -> NetworkPolicy:
    """A CPU numpy copy of the network as a `NetworkPolicy`: greedy (for evaluation games) unless
    ``deterministic`` is False (it then samples, as the trainer's rollouts do)."""
    network = playing_network(network)
    tensors = network_tensors(network)
    if network.architecture == "rank":
        twin = RankNetwork(tensors, max_players)
    else:
        twin = MLP(tensors, len(network.hidden_sizes))
    return NetworkPolicy(twin, rules, None, network_players=max_players, deterministic=deterministic, name=name)


def save_policy(folder: str | Path, network: ActorCritic | RankActorCritic, rules: RulesConfig,
                *,
                max_players: int | None, extra: dict | None = None) -> Path:
    """Write the network (its actor; a privileged critic's own file beside it) as a checkpoint folder."""
    critic = network.critic_tensors()  # shipped beside the actor, for a search's leaves; it never plays
    network = playing_network(network)
    hands = network.hand_head_tensors()
    return write_checkpoint(folder, network_tensors(network), rules, max_players=max_players,
                            hidden_sizes=network.hidden_sizes, extra=extra,
                            architecture=network.architecture, privileged_value=critic, hand_head=hands)


def load_checkpoint_weights(network: nn.Module, path_or_name: str) -> None:
    """Copy a checkpoint's network into the trainer's ``network`` of the same shape: the actor, and the
    privileged critic where both have one (an exploiter that starts as a copy of its target).

    A ValueError names the tensors that do not fit; an action-value head and a privileged critic's action
    values (never saved) and a hand head (saved beside the actor for a search's determinizations, not among
    its tensors) keep their fresh weights.
    """
    tensors, metadata = load_checkpoint(path_or_name)
    actor = playing_network(network)
    try:
        missing, unexpected = actor.load_state_dict({name: torch.as_tensor(array) for name, array in tensors.items()},
                                                    strict=False)
    except RuntimeError as error:
        raise ValueError(f"checkpoint {path_or_name} does not fit the network: {str(error).splitlines()[-1]}") from None
    missing = [name for name in missing if not _training_only(name)]
    if missing or unexpected:
        raise ValueError(f"checkpoint {path_or_name} does not fit the network: missing {missing}, "
                         f"unexpected {unexpected}")
    if network.privileged:
        critic = read_privileged_value(resolve_checkpoint(path_or_name), metadata)
        if critic is not None:
            network.critic.load_state_dict({name: torch.as_tensor(array) for name, array in critic.items()})


def soften_policy(network: nn.Module, temperature: float) -> None:
    """Divide every logit of ``network``'s policy by ``temperature`` (its policy layers' weights and biases):
    the most likely move stays the most likely, so greedy play is unchanged, while sampling spreads over
    the other moves as much as the temperature says (an exploiter's copy of its target then explores)."""
    actor = playing_network(network)
    with torch.no_grad():
        for name in actor.policy_layers:
            for parameter in getattr(actor, name).parameters():
                parameter.div_(temperature)
