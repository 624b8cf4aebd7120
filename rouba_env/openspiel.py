"""Rouba-monte as an OpenSpiel Python game: ``pyspiel.load_game("python_rouba_monte", {...})``.

Needs the ``openspiel`` extra (``pip install open_spiel``). Importing
this module registers the game. Parameters: ``num_players`` (2..8, default 2),
``rules`` (a preset name, default ``standard``, or ``mini`` / ``small`` to solve exactly) and, changing
the preset, ``ranks`` (1..13), ``suits`` (1..4), ``hand_size`` (0 keeps the preset's) and
``table_cards`` (-1 keeps the preset's).

* Chance: the game starts with one chance node per card, each choosing which
  of the remaining cards comes next in the shuffled deck (outcomes are the
  cards' positions in `RulesConfig.unshuffled_deck`); the deal then follows the rules, as
  `rouba_env.rules.engine.deal_from_deck` does (the rules core's deal).
* Players' actions are the project's action indices (`ActionEncoding`); the
  moves are played, and their legality decided, by the rules core on the
  state's `rouba_env.rules.engine.Position`, as at every `Table`.
* Returns: the margin reward (own pile minus the others' mean, over the cards
  in play): zero-sum at every table size.
* Observations: the project's observation vector (`ObservationEncoder`) as the
  observation tensor and the information-state tensor; the information-state
  string is the seat, its hand (by rank), the table first laid and every move so far, which is
  perfect recall in this game (every card a player held was played face up or is still in
  its hand, and hands are dealt only when all are empty).
* `RoubaMonteState.resample_from_infostate` draws the hidden cards consistently
  with what the player saw (`HiddenCardSampler`), so OpenSpiel's
  information-set MCTS bot can play it.

`rouba_env.players.openspiel_bots.OpenSpielPolicy` (specs ``openspiel:mcts`` and
``openspiel:ismcts``) seats OpenSpiel's MCTS or IS-MCTS bots at a project table.
"""

from __future__ import annotations

import numpy as np

try:
    import pyspiel
except ImportError as error:  # pragma: no cover (the extra's message)
    from rouba_env.extras import install_hint

    raise ImportError(f"rouba_env.openspiel needs the openspiel extra ({error.name} is missing): "
                      f"{install_hint('openspiel')}") from error

from rouba_env.compiled import ensure_compiled
from rouba_env.checks import check_number, is_int, shown
from rouba_env.encoding.actions import ActionEncoding
from rouba_env.encoding.observation import ObservationEncoder
from rouba_env.beliefs import HiddenCardSampler
from rouba_env.rules import engine, scoring
from rouba_env.rules.cards import rank_of
from rouba_env.rules.engine import NUM_RANK_SLOTS
from rouba_env.rules.config import MAX_PLAYERS, MIN_PLAYERS, PRESET_FIELDS, RulesConfig, make_rules
from rouba_env.rules.text import render_text

GAME_NAME = "python_rouba_monte"
KEEP_PRESET = {"ranks": 0, "suits": 0, "hand_size": 0, "table_cards": -1}
"""Parameters that change one field of the preset's rules, each with the default that keeps the preset's."""
DEFAULT_PARAMETERS = {"num_players": 2, "rules": "standard", **KEEP_PRESET}
_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python rouba-monte (Stealing Bundles)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMETERS,
)


def game_rules(params: dict) -> RulesConfig:
    """The `RulesConfig` of a game's parameters; ValueError naming a bad one."""
    unknown = set(params) - set(DEFAULT_PARAMETERS)
    if unknown:
        raise ValueError(f"{GAME_NAME} has no parameter(s) {sorted(unknown)}; known: {sorted(DEFAULT_PARAMETERS)}")
    preset = params.get("rules", DEFAULT_PARAMETERS["rules"])
    if preset not in PRESET_FIELDS:
        raise ValueError(f"rules must be one of {sorted(PRESET_FIELDS)}, got {preset!r}")
    changes = {name: int(params[name]) for name, keep in KEEP_PRESET.items() if params.get(name, keep) != keep}
    return make_rules(preset, num_players=int(params.get("num_players", DEFAULT_PARAMETERS["num_players"])), **changes)


class GameSetup:
    """What a game's states share: its rules, the project's encodings, the unshuffled deck and the size of
    the information-state tensor."""

    def __init__(self, params: dict):
        self.rules = game_rules({**DEFAULT_PARAMETERS, **params})
        self.actions = ActionEncoding(self.rules)
        self.encoder = ObservationEncoder(self.rules)
        self.deck = self.rules.unshuffled_deck()
        self.max_moves = self.rules.total_cards - self.rules.table_cards
        """Most moves a game can have: each plays one card from a hand, and only the deck fills hands."""
        self.move_size = self.rules.num_players + self.actions.size
        """One move of the history block: the mover's seat relative to the observer, one-hot, then its action."""
        self.history_size = NUM_RANK_SLOTS + self.max_moves * self.move_size
        """The perfect-recall block: the ranks first laid on the table, then every move so far."""

    def history_block(self, state: "RoubaMonteState", player: int) -> np.ndarray:
        """float32[history_size]: what a perfect-recall view adds to the observation (`history_size`)."""
        block = np.zeros(self.history_size, np.float32)
        for rank in state.laid:
            block[rank] += 1.0
        n = self.rules.num_players
        for index, (seat, action) in enumerate(state.moves):
            start = NUM_RANK_SLOTS + index * self.move_size
            block[start + (seat - player) % n] = 1.0
            block[start + n + action] = 1.0
        return block


def setup_of(game: pyspiel.Game) -> GameSetup:
    """The game's `GameSetup` (pyspiel may hand states a fresh wrapper of the game, without its attributes)."""
    setup = getattr(game, "setup", None)
    return setup if setup is not None else GameSetup(dict(game.get_parameters()))


class RoubaMonteGame(pyspiel.Game):
    """The game: rules from the parameters, sizes from the project's encodings."""

    def __init__(self, params: dict | None = None):
        params = {**DEFAULT_PARAMETERS, **(params or {})}
        self.setup = GameSetup(params)
        self.rules = self.setup.rules
        ensure_compiled()
        cards = self.rules.total_cards
        info = pyspiel.GameInfo(
            num_distinct_actions=self.setup.actions.size,
            max_chance_outcomes=cards,
            num_players=self.rules.num_players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=2 * cards,
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> "RoubaMonteState":
        return RoubaMonteState(self)

    def deserialize_state(self, text: str) -> "RoubaMonteState":
        """The state a `RoubaMonteState.serialize` string describes, replayed action by action through the rules.

        The string is the action history, one integer per line (the form OpenSpiel's C++ games use);
        every action is checked as it is applied, so only a reachable state can come out. A damaged
        or crafted string is a ValueError naming the line; nothing in it is ever executed.
        """
        return replay_history(self, parse_history(text))

    def make_py_observer(self, iig_obs_type=None, params=None) -> "RoubaMonteObserver":
        return RoubaMonteObserver(setup_of(self), iig_obs_type, params)


MAX_SERIALIZED_CHARACTERS = 1 << 20
"""Longest state string `RoubaMonteGame.deserialize_state` reads (a whole game is a few hundred characters)."""


def parse_history(text) -> list[int]:
    """The actions of a serialized state, one integer per line; ValueError naming a bad line."""
    if not isinstance(text, str):
        raise ValueError(f"a serialized state is a string, got {type(text).__name__}")
    if len(text) > MAX_SERIALIZED_CHARACTERS:
        raise ValueError(f"a serialized state has at most {MAX_SERIALIZED_CHARACTERS} characters, got {len(text)}")
    actions = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if not (line.isascii() and line.isdigit()) or len(line) > 18:
            raise ValueError(f"line {number} of the serialized state is not an action index: {shown(line)} "
                             f"(a state is its action history, one non-negative integer per line)")
        actions.append(int(line))
    return actions


def replay_history(game: "RoubaMonteGame", actions: list[int]) -> "RoubaMonteState":
    """A new state with ``actions`` applied in order, each checked against the legal set first."""
    state = game.new_initial_state()
    for number, action in enumerate(actions, start=1):
        try:
            state.apply_action(action)
        except ValueError as error:
            raise ValueError(f"action {number} of the serialized state: {error}") from None
    return state


class RoubaMonteState(pyspiel.State):
    """A position: the deck's order chosen so far by chance, then the game on the rules core (`position`)."""

    def __init__(self, game: RoubaMonteGame, engine_state: engine.GameState | None = None,
                 *,
                 moves: list[tuple[int, int]] | None = None, setup: GameSetup | None = None,
                 laid: tuple[int, ...] = ()):
        super().__init__(game)
        self.game_ = setup or setup_of(game)
        """The game's rules, encodings and deck."""
        self.game_object = game
        self.order: list[int] = []
        """Positions in the unshuffled deck chosen by the chance nodes, in deck order."""
        self.position: engine.Position | None = None
        """The game on the rules core once dealt (None at a chance node): what moves are played on."""
        self._engine_state: engine.GameState | None = None
        self.engine_state = engine_state
        self.moves = list(moves or [])
        """(seat, action) of every move: the public history."""
        self.laid = tuple(laid)
        """Ranks of the table first laid, sorted: public, and part of every information state."""
        self.resampled = False
        """True for a world drawn by `resample_from_infostate` (and its clones): it has no chance history."""

    @property
    def engine_state(self) -> engine.GameState | None:
        """The game as a card-level `GameState` (None at a chance node), read from `position` when asked."""
        if self._engine_state is None and self.position is not None:
            self._engine_state = self.position.state()
        return self._engine_state

    @engine_state.setter
    def engine_state(self, state: engine.GameState | None) -> None:
        self._engine_state = state
        self.position = None if state is None else engine.Position.of(state)

    # -- OpenSpiel API ---------------------------------------------------

    def current_player(self) -> int:
        if self.position is None:
            return pyspiel.PlayerId.CHANCE
        if engine.is_terminal(self.position):
            return pyspiel.PlayerId.TERMINAL
        return self.position.current

    def _legal_actions(self, player: int) -> list[int]:
        if self.position is None:
            raise ValueError("a chance node has no player actions")
        return self.game_.actions.legal_actions(self.position)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        remaining = sorted(set(range(len(self.game_.deck))) - set(self.order))
        return [(position, 1.0 / len(remaining)) for position in remaining]

    def _apply_action(self, action: int) -> None:
        if is_int(action):
            action = int(action)
        position = self.position
        if position is None:
            remaining = len(self.game_.deck) - len(self.order)
            if not is_int(action) or not 0 <= action < len(self.game_.deck) or action in self.order:
                raise ValueError(f"chance outcome {shown(action)} is not legal: the deck's next card is one of the "
                                 f"{remaining} positions not chosen yet, in 0..{len(self.game_.deck) - 1}")
            self.order.append(action)
            if len(self.order) == len(self.game_.deck):
                deck = [self.game_.deck[position] for position in self.order]
                self.position = engine.Position.deal(self.game_.rules, deck)
                self._engine_state = self.position.state()
                self.laid = tuple(sorted(rank_of(card) for card in self._engine_state.table_cards))
            return
        if engine.is_terminal(position):
            raise ValueError(f"action {shown(action)}: the game is over")
        legal = self._legal_actions(position.current)
        if not is_int(action) or action not in legal:
            raise ValueError(f"action {shown(action)} is not legal for player {position.current}; "
                             f"legal actions: {legal}")
        seat = position.current
        position.play(self.game_.actions.decode(action))
        self._engine_state = None
        self.moves.append((seat, action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal card {action}"
        player = self.checked_player(player)
        return f"p{player} {self.game_.actions.describe(self.engine_state, action)}" \
            if self.engine_state is not None and not engine.is_terminal(self.engine_state) else f"p{player} {action}"

    def is_terminal(self) -> bool:
        return self.position is not None and engine.is_terminal(self.position)

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.game_.rules.num_players
        return scoring.final_rewards(scoring.ZERO_SUM_REWARD, scoring.scores(self.engine_state),
                                     self.game_.rules.total_cards)

    def checked_player(self, player) -> int:
        """``player`` checked (a seat 0..n-1; None: the seat to act), the same words on every channel."""
        n = self.game_.rules.num_players
        if player is None:
            player = self.current_player()
            if player < 0:
                where = "a chance node" if player == pyspiel.PlayerId.CHANCE else "the game is over"
                raise ValueError(f"no player is to act ({where}): name a player in 0..{n - 1}")
            return player
        if not is_int(player) or not 0 <= int(player) < n:
            raise ValueError(f"player must be a seat in 0..{n - 1}, got {shown(player)}")
        return int(player)

    def serialize(self) -> str:
        """The action history, one integer per line: `RoubaMonteGame.deserialize_state` replays it.

        A resampled world is refused: its hidden cards were drawn, not dealt, so no history of chance
        outcomes leads to it (its ``history()`` holds only the actions applied since it was drawn).
        """
        if self.resampled:
            raise ValueError("this state was drawn by resample_from_infostate: no deal leads to it, so it has no "
                             "history to serialize; serialize the state it was drawn from")
        return "".join(f"{action}\n" for action in self.history())

    def information_state_string(self, player: int | None = None) -> str:
        player = self.checked_player(player)
        # Ranks, not card codes: suits never matter in this game, and a resampled world may swap them.
        hand = sorted(rank_of(card) for card in self.engine_state.hands[player]) if self.engine_state else []
        history = " ".join(f"{seat}:{action}" for seat, action in self.moves)
        return f"seat {player}; hand {hand}; table {list(self.laid)}; moves {history}"

    def observation_string(self, player: int | None = None) -> str:
        player = self.checked_player(player)
        return " ".join(f"{value:g}" for value in self.observation_tensor(player))

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        """The observation vector, then the ranks first laid and every move so far (`GameSetup.history_block`):
        perfect recall, the tensor form of `information_state_string`, of a size fixed by the rules."""
        player = self.checked_player(player)
        return self.observation_tensor(player) + self.game_.history_block(self, player).tolist()

    def observation_tensor(self, player: int | None = None) -> list[float]:
        player = self.checked_player(player)
        if self.engine_state is None:
            return [0.0] * self.game_.encoder.size
        return self.game_.encoder.encode(self.engine_state, player).tolist()

    def resample_from_infostate(self, player: int, probability_sampler) -> "RoubaMonteState":
        """A state the player cannot tell from this one: the hidden cards drawn again, consistently."""
        player = self.checked_player(player)
        if self.engine_state is None:
            raise ValueError("resample_from_infostate needs a dealt game: at the chance nodes nobody holds cards yet")
        draw = probability_sampler()
        if check_number("probability_sampler()", draw, 0.0) >= 1.0:
            raise ValueError(f"probability_sampler() must return a number in [0, 1), got {shown(draw)}")
        seed = int(float(draw) * 2**32)
        sampler = HiddenCardSampler(self.game_.rules, self.game_.encoder.encode(self.engine_state, player))
        world = sampler.sample(np.random.default_rng(seed))
        world.turn, world.last_move = self.engine_state.turn, self.engine_state.last_move
        world.last_capturer = self.engine_state.last_capturer
        drawn = RoubaMonteState(self.game_object, world, moves=self.moves, setup=self.game_, laid=self.laid)
        drawn.resampled = True
        return drawn

    def __str__(self) -> str:
        if self.engine_state is None:
            return f"dealing: {len(self.order)} of {len(self.game_.deck)} cards placed"
        return render_text(self.engine_state, viewer=None if self.is_terminal() else self.engine_state.current)


PRIVATE_BLOCKS = ("hand",)
"""The observation blocks only the observer knows; every other block is public."""


class RoubaMonteObserver:
    """OpenSpiel's observer interface over the project's observation layout, honouring ``iig_obs_type``.

    A view of public information and the observer's own cards (``None``, OpenSpiel's default) is the
    project's observation vector, ``"observation"``; its string is the observation or, with
    ``perfect_recall``, the information state. Other views are built from the named layout, as Kuhn
    poker's observer is: ``"public"`` (every block but the observer's hand) when ``public_info``;
    ``"private"``: nothing (``NONE``) or every seat's hand from the observer's point of view
    (``ALL_PLAYERS``). With ``perfect_recall`` every view adds ``"history"`` (the ranks first laid and
    every move so far, `GameSetup.history_block`) and its string holds every move: the information-state
    tensor OpenSpiel's algorithms read is the observation plus that block.
    """

    def __init__(self, setup: GameSetup, iig_obs_type, params):
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        self.setup = setup
        kind = iig_obs_type
        self.default = kind is None or (kind.public_info and kind.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER)
        """The project's whole vector (what `RoubaMonteState.observation_tensor` gives, from Python or from
        OpenSpiel's C++; with ``perfect_recall``, followed by the history: `information_state_tensor`)."""
        self.public = True if kind is None else bool(kind.public_info)
        self.private = pyspiel.PrivateInfoType.SINGLE_PLAYER if kind is None else kind.private_info
        self.perfect_recall = False if kind is None else bool(kind.perfect_recall)
        layout, encoder = setup.encoder.layout, setup.encoder
        self._public_index = np.concatenate([np.arange(block.start, block.stop) for name, block in layout.items()
                                             if name not in PRIVATE_BLOCKS])
        self._hand = layout["hand"]
        seats = encoder.max_players * NUM_RANK_SLOTS
        if self.default:
            self.dict = {"observation": np.zeros(encoder.size, np.float32)}
        else:
            self.dict = {}
            if self.public:
                self.dict["public"] = np.zeros(len(self._public_index), np.float32)
            if self.private == pyspiel.PrivateInfoType.SINGLE_PLAYER:
                self.dict["private"] = np.zeros(NUM_RANK_SLOTS, np.float32)
            elif self.private == pyspiel.PrivateInfoType.ALL_PLAYERS:
                self.dict["private"] = np.zeros(seats, np.float32)
        if self.perfect_recall:
            self.dict["history"] = np.zeros(setup.history_size, np.float32)
        pieces = list(self.dict.values())
        self.tensor = np.concatenate(pieces) if pieces else np.zeros(0, np.float32)

    def set_from(self, state: RoubaMonteState, player: int) -> None:
        vector = np.asarray(state.observation_tensor(player), dtype=np.float32)
        if self.default:
            self.dict["observation"][:] = vector
        else:
            if "public" in self.dict:
                self.dict["public"][:] = vector[self._public_index]
            if self.private == pyspiel.PrivateInfoType.SINGLE_PLAYER:
                self.dict["private"][:] = vector[self._hand]
            elif self.private == pyspiel.PrivateInfoType.ALL_PLAYERS:
                hidden = np.zeros(self.setup.encoder.hidden_size, np.float32) if state.engine_state is None \
                    else self.setup.encoder.hidden(state.engine_state, player)
                self.dict["private"][:] = hidden[: len(self.dict["private"])]
        if self.perfect_recall:
            self.dict["history"][:] = self.setup.history_block(state, state.checked_player(player))
        pieces = list(self.dict.values())
        if pieces:
            self.tensor[:] = np.concatenate(pieces)

    def string_from(self, state: RoubaMonteState, player: int) -> str:
        if self.default:
            return state.information_state_string(player) if self.perfect_recall else state.observation_string(player)
        player = state.checked_player(player)
        engine_state = state.engine_state
        if self.private == pyspiel.PrivateInfoType.ALL_PLAYERS and engine_state is not None:
            hands = "; ".join(f"hand {seat} {sorted(rank_of(card) for card in hand)}"
                              for seat, hand in enumerate(engine_state.hands))
        elif self.private == pyspiel.PrivateInfoType.SINGLE_PLAYER:
            hand = sorted(rank_of(card) for card in engine_state.hands[player]) if engine_state else []
            hands = f"hand {hand}"
        else:
            hands = "no private cards"
        if self.perfect_recall:
            history = " ".join(f"{seat}:{action}" for seat, action in state.moves)
            return f"seat {player}; {hands}; moves {history}"
        public = " ".join(f"{value:g}" for value in self.dict["public"]) if "public" in self.dict else ""
        return f"seat {player}; {hands}; public {public}"


pyspiel.register_game(_GAME_TYPE, RoubaMonteGame)

GAME_AND_STATE_TAG = "[rouba_monte game and state]"
"""First line of `serialize_game_and_state`'s text."""


def serialize_game_and_state(game: RoubaMonteGame, state: RoubaMonteState) -> str:
    """The game's parameters and the state's action history as text (`deserialize_game_and_state` reads it)."""
    return f"{GAME_AND_STATE_TAG}\n{game}\n{state.serialize()}"


def deserialize_game_and_state(text: str) -> tuple[RoubaMonteGame, RoubaMonteState]:
    """(game, state) from `serialize_game_and_state`'s text, the state replayed through the rules.

    Unlike ``pyspiel.deserialize_game_and_state`` (OpenSpiel's generic path for Python games, which
    unpickles), nothing in the text is executed; a crafted or damaged text is a ValueError.
    """
    if not isinstance(text, str):
        raise ValueError(f"a serialized game and state is a string, got {type(text).__name__}")
    tag, _, rest = text.partition("\n")
    game_string, _, history = rest.partition("\n")
    if tag != GAME_AND_STATE_TAG:
        raise ValueError(f"not a serialized {GAME_NAME} game and state: its first line must be {GAME_AND_STATE_TAG!r}")
    if not (game_string.startswith(f"{GAME_NAME}(") and game_string.endswith(")")):
        raise ValueError(f"the game line must name {GAME_NAME}(...), got {shown(game_string)}")
    try:
        game = pyspiel.load_game(game_string)
    except (pyspiel.SpielError, RuntimeError, ValueError) as error:
        raise ValueError(f"bad game line {shown(game_string)}: {error}") from None
    return game, game.deserialize_state(history)
