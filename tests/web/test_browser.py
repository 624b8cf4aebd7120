"""The page in a real browser: Debian's headless Chromium driven by selenium.

Needs the Debian packages ``chromium`` and ``chromium-driver`` (selenium is
pointed at them; it downloads nothing). Screenshots of both views are written
to ``web_play.png`` and ``web_replay.png`` in ``$ROUBA_SCREENSHOTS`` (the README's come from
``ROUBA_SCREENSHOTS=scripts/results``), else in the temporary folder.
"""

import os
import tempfile
from pathlib import Path

import pytest

from rouba_env.encoding.actions import ActionEncoding
from rouba_env.evaluation.duplicate import evaluate
from rouba_env.evaluation.records import load_record, record_files, replay_states, save_game_records
from rouba_env.rules import engine, scoring
from rouba_env.rules.cards import JOKER_RANK, card_face
from rouba_env.web.games import GameStore

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
RESULTS = Path(os.environ.get("ROUBA_SCREENSHOTS", "") or tempfile.gettempdir())
"""Where screenshots go: set ROUBA_SCREENSHOTS=scripts/results to refresh the README's pictures."""
WINDOW = "1280,800"
"""A common laptop screen: the board, the move choices and the move log must all be in view."""
WAIT_S = 60
SCREENSHOT_TURN = 4
"""The human's turn at which the play view is photographed (a card chosen, its targets shown)."""
DEAL_SEED = 2024
"""Seeds the games of the played test, so that the screenshot is the same each run."""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                       reason="needs Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver"),
]


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={WINDOW}", "--hide-scrollbars"):
        options.add_argument(argument)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SE_OFFLINE", "true")  # selenium-manager must never download a browser or driver
        driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
        yield driver
        driver.quit()


def wait_for(driver, condition, message):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(lambda d: condition(d), message)


def text_of(driver, element_id: str) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id).text


def played_rank(move: engine.Move) -> int:
    """Rank of the hand card a move plays (`JOKER_RANK` for a joker, whatever it is named)."""
    return JOKER_RANK if move.kind >= engine.JOKER_KIND_OFFSET else move.kind


def check_layout(browser, game):
    """Piles drawn as piles, readable disabled targets, and the move log above the fold."""
    from selenium.webdriver.common.by import By

    stacks = browser.find_elements(By.CSS_SELECTOR, "#play-board .pile .stack")
    assert sorted(int(s.get_attribute("data-size")) for s in stacks) == sorted(len(p) for p in game.state.piles)
    for stack in stacks:
        layers = len(stack.find_elements(By.CSS_SELECTOR, ".layer"))
        assert layers == min(4, max(0, int(stack.get_attribute("data-size")) - 1)), "a bigger pile, a taller stack"
    labels = {label.text.lower() for label in browser.find_elements(By.CSS_SELECTOR, "#play-board .part-label")}
    assert labels == {"pile", "hand"}, "pile and hand are told apart in words, not only by size"
    for button in browser.find_elements(By.CSS_SELECTOR, "#targets button.target"):
        if not button.is_enabled():
            assert float(button.value_of_css_property("opacity")) == 1.0, "disabled targets stay readable"
    log_top = browser.execute_script("return document.getElementById('log').getBoundingClientRect().top")
    assert log_top < browser.execute_script("return window.innerHeight"), "the move log is in view at 1280x800"


def test_play_a_full_game_by_clicking(live_server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    server, _ = live_server(store=GameStore(save_folder=tmp_path / "saved", seed=DEAL_SEED))
    browser.get(server.url + "?delay=0")
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#opponents input"), "setup form")
    Select(browser.find_element(By.ID, "num-players")).select_by_value("3")
    inputs = browser.find_elements(By.CSS_SELECTOR, "#opponents input")
    assert len(inputs) == 2
    for box, spec in zip(inputs, ("heuristic", "greedy")):
        box.clear()
        box.send_keys(spec)
    browser.find_element(By.ID, "start").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "play-board").get_attribute("data-turn"), "first position")
    game = next(iter(server.store.games.values()))
    encoding = ActionEncoding(game.rules)
    human_turns = 0
    while not engine.is_terminal(game.state):
        turn = browser.find_element(By.ID, "play-board").get_attribute("data-turn")
        assert int(turn) == game.state.turn and game.state.current == game.human_seat
        legal = {encoding.decode(a): a for a in encoding.legal_actions(game.state)}
        hand = browser.find_elements(By.CSS_SELECTOR, "#play-board .my-hand button.card")
        assert sorted(int(b.get_attribute("data-code")) for b in hand) == sorted(game.state.hands[game.human_seat])
        playable = {played_rank(move) for move in legal}
        for button in hand:
            assert button.is_enabled() == (int(button.get_attribute("data-rank")) in playable)
        card = max((b for b in hand if b.is_enabled()),
                   key=lambda b: sum(played_rank(m) == int(b.get_attribute("data-rank")) for m in legal))
        rank = int(card.get_attribute("data-rank"))
        card.click()  # the hand is drawn again, with this card raised
        targets = browser.find_elements(By.CSS_SELECTOR, "#targets button.target")
        enabled = {int(b.get_attribute("data-action")) for b in targets if b.is_enabled()}
        expected = {action for move, action in legal.items() if played_rank(move) == rank}
        assert enabled == expected, "exactly the legal targets of the chosen card are enabled"
        assert all(b.get_attribute("data-action") is None for b in targets if not b.is_enabled())
        human_turns += 1
        if human_turns == 1:
            check_layout(browser, game)
        if human_turns == SCREENSHOT_TURN:
            RESULTS.mkdir(parents=True, exist_ok=True)
            browser.save_screenshot(str(RESULTS / "web_play.png"))
        next(b for b in targets if b.is_enabled()).click()
        wait_for(browser, lambda d: d.find_element(By.ID, "play-board").get_attribute("data-turn") != turn,
                 "the answer to a move")
    wait_for(browser, lambda d: "Game over" in text_of(d, "result"), "final scores")
    scores = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#result .final-scores td.score")]
    assert scores == [f"{points} cards" for points in scoring.scores(game.state)]
    assert human_turns >= SCREENSHOT_TURN
    log = browser.find_elements(By.CSS_SELECTOR, "#log li")
    assert len(log) == game.state.turn, "every move, the opponents' too, is shown"
    import re
    timed = [re.search(r"\(thought \d+(\.\d)? m?s\)$", item.text) is not None for item in log]
    assert timed == [seat != game.human_seat for seat, _ in game.moves], "each opponent's think time, not yours"
    saved = record_files(tmp_path / "saved")
    assert len(saved) == 1 and replay_states(load_record(tmp_path / "saved" / saved[0]))


def test_step_through_a_replay(live_server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    result = evaluate(["heuristic", "greedy", "random"], games=3, num_players=3, seed=9, record_moves=True)
    folder = tmp_path / "replays"
    save_game_records(result, folder)
    name = record_files(folder)[0]
    states = replay_states(load_record(folder / name))
    server, _ = live_server(replays=folder)
    browser.get(server.url + "?tab=replay")

    def at_step(step):
        wait_for(browser, lambda d: d.find_element(By.ID, "replay-board").get_attribute("data-step") == str(step),
                 f"step {step}")
        assert text_of(browser, "replay-step") == f"step {step} / {len(states) - 1}"
        deck = browser.find_element(By.CSS_SELECTOR, "#replay-board .deck-count").text
        assert deck == f"deck: {len(states[step].deck)}"
        table = browser.find_elements(By.CSS_SELECTOR, "#replay-board .table-cards svg")
        assert sorted(t.get_attribute("aria-label") for t in table) == sorted(
            card_face(card) for card in states[step].table_cards)

    at_step(0)
    assert not browser.find_element(By.ID, "play-view").is_displayed(), "one tab at a time"
    options = [option.text for option in Select(browser.find_element(By.ID, "replay-file")).options]
    assert len(options) == 3 and all(sorted(text.split(" · ")[0].split(" vs ")) == ["greedy", "heuristic", "random"]
                                     for text in options), options
    assert all(("won" in text or "tie" in text) and text[-16:-12].isdigit() for text in options), options
    assert not browser.find_element(By.ID, "replay-back").is_enabled()
    for step in range(1, 8):
        browser.find_element(By.ID, "replay-forward").click()
        at_step(step)
    browser.find_element(By.ID, "replay-back").click()
    at_step(6)
    faces = browser.find_elements(By.CSS_SELECTOR, "#replay-board .seat svg[aria-label='card back']")
    assert not faces, "the full state shows every hand"
    Select(browser.find_element(By.ID, "replay-seat")).select_by_value("1")
    hidden = len(states[6].hands[0]) + len(states[6].hands[2])
    seat_backs = "#replay-board .seat svg[aria-label='card back']"  # the seats' own backs, not any back on the board
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, seat_backs)) == hidden, "seat view")
    assert len(browser.find_elements(By.CSS_SELECTOR, seat_backs)) == hidden
    RESULTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(RESULTS / "web_replay.png"))
    browser.find_element(By.ID, "replay-last").click()
    at_step(len(states) - 1)
    assert not browser.find_element(By.ID, "replay-forward").is_enabled()
    assert "Final scores" in text_of(browser, "replay-result")



def test_the_form_starts_with_the_command_lines_choices_and_a_seed_deals_that_game(live_server, browser):
    from selenium.webdriver.common.by import By

    preselect = {"opponents": ["greedy", "random"], "rules": "jokers", "seat": 1, "seed": 77}
    server, _ = live_server(preselect=preselect)
    browser.get(server.url + "?delay=0")
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#opponents input")) == 2, "preselected seats")
    assert browser.find_element(By.ID, "num-players").get_attribute("value") == "3"
    assert [box.get_attribute("value") for box in browser.find_elements(By.CSS_SELECTOR, "#opponents input")] == [
        "greedy", "random"]
    assert browser.find_element(By.ID, "rules").get_attribute("value") == "jokers"
    assert browser.find_element(By.ID, "seat").get_attribute("value") == "1"
    assert browser.find_element(By.ID, "seed").get_attribute("value") == "77"
    browser.find_element(By.ID, "start").click()
    wait_for(browser, lambda d: server.store.games, "a game")
    game = next(iter(server.store.games.values()))
    assert game.human_seat == 1 and game.rules.jokers and game.rules.num_players == 3
    import numpy as np

    from rouba_env.rules.seeding import DEAL_SEED_BOUND

    expected = int(np.random.default_rng(np.random.SeedSequence(77)).integers(0, DEAL_SEED_BOUND))
    assert game.deal_seed == expected, "the seed on the form chose the deal"


class HeldStore(GameStore):
    """A store whose new games wait until the test lets them go: a slow server, on cue."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        import threading

        self.asked, self.go = threading.Event(), threading.Event()

    def create(self, body):
        self.asked.set()
        assert self.go.wait(WAIT_S), "the test never let the new game go"
        return super().create(body)


def test_the_page_shows_a_busy_sign_while_the_server_is_slow_to_answer(live_server, browser):
    from selenium.webdriver.common.by import By

    store = HeldStore()
    server, _ = live_server(store=store)
    browser.get(server.url + "?delay=0")
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#opponents input"), "the form")
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("aria-busy") is None
    browser.find_element(By.ID, "start").click()
    assert store.asked.wait(WAIT_S), "the page asked for a new game"
    wait_for(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("aria-busy") == "true",
             "the busy sign while the server holds the answer")
    assert "Waiting for the server" in text_of(browser, "message")
    store.go.set()
    wait_for(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("aria-busy") is None,
             "the sign gone with the answer")
    wait_for(browser, lambda d: "Waiting" not in text_of(d, "message") and text_of(d, "message"), "the game's word")
