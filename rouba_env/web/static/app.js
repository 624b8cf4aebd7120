// The rouba-monte page: set up a game, play by clicking a card then a target, watch replays.
"use strict";

const JOKER_RANK = 13;
const DEFAULT_DELAY_MS = 700;
const BUSY_SIGN_AFTER_MS = 250;  // a request answered sooner shows no sign (no flicker on every move)
const WAITING_TEXT = "Waiting for the server\u2026";
const DEFAULT_RULES = "standard";
const params = new URLSearchParams(window.location.search);
const delayMs = params.has("delay") ? Math.max(0, Number(params.get("delay")) || 0) : DEFAULT_DELAY_MS;

const play = { view: null, selectedRank: null, busy: false, options: null };
const replay = { name: null, step: 0, steps: 0, seat: "full" };

function $(id) { return document.getElementById(id); }

function element(tag, attributes, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children || []) node.appendChild(child);
  return node;
}

function sleep(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

function say(text, isError) {
  const message = $("message");
  message.textContent = text || "";
  message.className = isError ? "error" : "";
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  // The busy sign: the page says it waits (and the pointer shows it) while a request is slow to answer.
  const sign = setTimeout(() => { document.body.setAttribute("aria-busy", "true"); say(WAITING_TEXT); },
    BUSY_SIGN_AFTER_MS);
  try {
    const response = await fetch(path, init);
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || `request failed (${response.status})`);
    return data;
  } finally {
    clearTimeout(sign);
    if (document.body.hasAttribute("aria-busy")) {
      document.body.removeAttribute("aria-busy");
      if ($("message").textContent === WAITING_TEXT) say("");
    }
  }
}

// ---------------------------------------------------------------- drawing

function cardNode(card, tag) {
  const node = element(tag || "span", { className: "card" });
  node.appendChild(card ? cardSVG(card) : cardBackSVG());
  return node;
}

function pileNode(seat) {
  const node = element("div", { className: "pile", "data-seat": seat.seat });
  node.appendChild(element("span", { className: "part-label", text: "pile" }));
  const stack = element("div", { className: "stack", "data-size": seat.pile_size });
  const layers = Math.min(4, Math.max(0, seat.pile_size - 1));  // more cards, a taller stack (at most 4 edges)
  for (let i = layers; i >= 1; i -= 1) {
    stack.appendChild(element("span", { className: `layer depth-${i}` }));
  }
  stack.appendChild(seat.pile_top ? cardNode(seat.pile_top) : element("span", { className: "card" }, [emptySlotSVG()]));
  node.appendChild(stack);
  const shows = seat.pile_top && seat.pile_top.suit === null && seat.pile_shows ? ` (as ${seat.pile_shows})` : "";
  node.appendChild(element("span", { className: "badge pile-size", text: `pile: ${seat.pile_size}${shows}` }));
  return node;
}

function handNode(seat, big) {
  const cards = element("div", { className: big ? "cards my-hand" : "cards hand-small" });
  if (seat.hand) for (const card of seat.hand) cards.appendChild(cardNode(card));
  else for (let i = 0; i < seat.hand_size; i += 1) cards.appendChild(cardNode(null));
  return cards;
}

function seatNode(view, seat, big) {
  const classes = ["seat"];
  if (view.current === seat.seat) classes.push("to-act");
  if (view.winners && view.winners.includes(seat.seat)) classes.push("winner");
  const node = element("div", { className: classes.join(" "), "data-seat": seat.seat });
  const dealer = view.dealer === seat.seat ? " · dealer" : "";
  node.appendChild(element("h3", { text: `${seat.name}${dealer} — ${seat.hand_size} in hand` }));
  const parts = element("div", { className: "parts" });
  parts.appendChild(pileNode(seat));
  parts.appendChild(element("div", { className: "hand-part" }, [element("span", { className: "part-label", text: "hand" }),
                                                                handNode(seat, big)]));
  node.appendChild(parts);
  return node;
}

function middleNode(view) {
  const deck = element("div", { className: "deck" });
  deck.appendChild(view.deck_count > 0 ? cardNode(null) : element("span", { className: "card" }, [emptySlotSVG()]));
  deck.appendChild(element("span", { className: "badge deck-count", text: `deck: ${view.deck_count}` }));
  const table = element("div", { className: "table-cards" });
  for (const card of view.table) table.appendChild(cardNode(card));
  if (!view.table.length) table.appendChild(element("span", { text: "(table empty)" }));
  return element("div", { className: "middle" }, [deck, table]);
}

// Seats in turn order starting left of ``bottom``; ``bottom`` itself goes last (drawn at the bottom).
function seatsAround(view, bottom) {
  const order = [];
  for (let i = 1; i <= view.num_players; i += 1) order.push(view.seats[(bottom + i) % view.num_players]);
  return order;
}

function renderBoard(container, view, bottom) {
  container.replaceChildren();
  const seats = seatsAround(view, bottom);
  const mine = seats.pop();
  container.appendChild(element("div", { className: "row opponents" }, seats.map((s) => seatNode(view, s, false))));
  container.appendChild(middleNode(view));
  container.appendChild(element("div", { className: "row mine" }, [seatNode(view, mine, true)]));
}

function scoresNode(view, names) {
  const rows = view.scores.map((points, seat) => element("tr", {}, [
    element("td", { text: names[seat] }), element("td", { className: "score", text: `${points} cards` }),
  ]));
  return element("table", { className: "final-scores" }, rows);
}

// ---------------------------------------------------------------- playing

function groupFor(rank) {
  return (play.view.legal || []).find((group) => group.rank === rank);
}

function renderPlay(view, interactive) {
  play.view = view;
  renderBoard($("play-board"), view, view.human_seat);
  const hand = $("play-board").querySelector(".row.mine .cards");
  hand.replaceChildren();
  const mySeat = view.seats[view.human_seat];
  for (const card of mySeat.hand || []) {
    const button = cardNode(card, "button");
    button.type = "button";
    button.dataset.rank = card.rank;
    button.dataset.code = card.code;
    button.disabled = !interactive || !groupFor(card.rank);
    if (play.selectedRank === card.rank) button.classList.add("selected");
    button.addEventListener("click", () => { play.selectedRank = card.rank; renderPlay(play.view, true); });
    hand.appendChild(button);
  }
  renderTargets(interactive);
  renderResult(view);
}

function placeButtons(group) {
  const view = play.view;
  const me = view.human_seat;
  const moves = group ? group.moves : [];
  if (group && group.rank === JOKER_RANK) {
    return moves.map((move) => ({ label: move.label, move }));
  }
  const find = (place, seat) => moves.find((m) => m.place === place && (seat === undefined || m.seat === seat));
  const choices = [
    { label: "capture from the table", move: find("table") },
    { label: "put it on the table", move: find("discard") },
  ];
  if (view.rules.jokers && !view.rules.take_all) choices.push({ label: "capture the table joker", move: find("table_joker") });
  choices.push({ label: "onto your own pile", move: find("pile", me) });
  for (const seat of seatsAround(view, me).slice(0, -1)) {
    choices.push({ label: `steal ${seat.name}'s pile`, move: find("pile", seat.seat) });
  }
  return choices.map((choice) => (choice.move ? { label: choice.move.label, move: choice.move } : choice));
}

function renderTargets(interactive) {
  const targets = $("targets");
  targets.replaceChildren();
  const title = $("choice-title");
  const view = play.view;
  if (!interactive || view.finished) {
    title.textContent = view.finished ? "" : (view.current === null ? "" : "waiting for the other players…");
    return;
  }
  const group = play.selectedRank === null ? null : groupFor(play.selectedRank);
  if (!group) {
    play.selectedRank = null;
    title.textContent = "Your turn: choose a card.";
    return;
  }
  title.textContent = `Play your ${group.rank === JOKER_RANK ? "joker" : group.rank_name}:`;
  for (const choice of placeButtons(group)) {
    const button = element("button", { type: "button", className: "target", text: choice.label });
    if (choice.move) {
      button.dataset.action = choice.move.action;
      button.addEventListener("click", () => sendMove(choice.move.action));
    } else {
      button.disabled = true;
    }
    targets.appendChild(button);
  }
}

function renderResult(view) {
  const result = $("result");
  result.replaceChildren();
  if (!view.finished) return;
  const names = view.seats.map((s) => s.name);
  const winners = view.winners.map((seat) => names[seat]);
  let verdict;
  if (winners.length > 1) verdict = `Tie between ${winners.join(" and ")}.`;
  else verdict = view.winners[0] === view.human_seat ? "You win!" : `${winners[0]} wins.`;
  result.appendChild(element("h2", { text: `Game over. ${verdict}` }));
  result.appendChild(scoresNode(view, names));
  if (view.saved) result.appendChild(element("p", { text: `Saved as ${view.saved}` }));
}

// An opponent's think time as the log shows it: milliseconds under a second, else seconds.
function formatThink(seconds) {
  return seconds < 1 ? `thought ${Math.round(seconds * 1000)} ms` : `thought ${seconds.toFixed(1)} s`;
}

function logEvent(event) {
  const log = $("log");
  const thought = event.think_seconds === null || event.think_seconds === undefined ? "" : ` (${formatThink(event.think_seconds)})`;
  log.appendChild(element("li", { text: `${event.name}: ${event.description}${thought}` }));
  log.scrollTop = log.scrollHeight;
}

// Show the moves one by one (the opponents' with a pause), then the position to play.
async function showEvents(view) {
  play.busy = true;
  play.selectedRank = null;
  for (const event of view.events) {
    logEvent(event);
    if (event.seat === view.human_seat) continue;
    say(`${event.name}: ${event.description}`);
    renderPlay(Object.assign({}, event.view, { human_seat: view.human_seat, rules: view.rules, legal: [] }), false);
    await sleep(delayMs);
  }
  play.busy = false;
  renderPlay(view, true);
  $("play-board").dataset.turn = view.turn;
  say(view.finished ? "Game over." : "Your turn.");
}

async function sendMove(action) {
  if (play.busy) return;
  play.busy = true;
  try {
    const view = await api("POST", `/api/games/${play.view.game_id}/moves`, { action });
    await showEvents(view);
  } catch (error) {
    play.busy = false;
    say(error.message, true);
  }
}

async function startGame(event) {
  event.preventDefault();
  if (play.busy) return;
  const opponents = [...$("opponents").querySelectorAll("input")].map((input) => input.value.trim());
  const body = {
    num_players: Number($("num-players").value), opponents, rules: $("rules").value, seat: Number($("seat").value),
  };
  const seed = $("seed").value.trim();
  if (seed !== "") body.seed = Number(seed);  // the same deal every time this seed is used
  $("log").replaceChildren();
  try {
    play.busy = true;
    const view = await api("POST", "/api/games", body);
    await showEvents(view);
  } catch (error) {
    play.busy = false;
    say(error.message, true);
  }
}

function fillSetup() {
  const options = play.options;
  const count = $("num-players");
  for (let n = options.min_players; n <= options.max_players; n += 1) count.appendChild(element("option", { value: n, text: n }));
  for (const name of options.rules) $("rules").appendChild(element("option", { value: name, text: name }));
  $("rules").value = options.rules.includes(DEFAULT_RULES) ? DEFAULT_RULES : options.rules[0];
  const suggestions = [...options.players, ...(options.checkpoints || []).map((name) => `checkpoint:${name}`)];
  const notes = options.player_notes || {};
  for (const spec of new Set(suggestions)) {
    $("player-specs").appendChild(element("option", notes[spec] ? { value: spec, label: `${spec}: ${notes[spec]}` } : { value: spec }));
  }
  count.addEventListener("change", fillSeats);
  const chosen = options.preselect || {};  // rouba-play --web --opponents ... --rules ... --seat ... --seed ...
  if (chosen.opponents) count.value = String(chosen.opponents.length + 1);
  if (chosen.rules) $("rules").value = chosen.rules;
  fillSeats(chosen.opponents || []);
  if (chosen.seat !== undefined) $("seat").value = String(chosen.seat);
  if (chosen.seed !== undefined) $("seed").value = String(chosen.seed);
}

function fillSeats(given) {
  const n = Number($("num-players").value);
  const seat = $("seat");
  const box = $("opponents");
  const kept = Array.isArray(given) && given.length ? given : [...box.querySelectorAll("input")].map((input) => input.value);
  seat.replaceChildren(...Array.from({ length: n }, (_, i) => element("option", { value: i, text: `player ${i}` })));
  box.replaceChildren();
  for (let i = 0; i < n - 1; i += 1) {
    const input = element("input", { list: "player-specs", value: kept[i] || "heuristic", "aria-label": `opponent ${i + 1}` });
    box.appendChild(element("label", { text: `Opponent ${i + 1}` }, [input]));
  }
}

// ---------------------------------------------------------------- replays

async function loadReplayList() {
  const select = $("replay-file");
  try {
    const data = await api("GET", "/api/replays");
    const label = (game) => `${game.players.length ? game.players.join(" vs ") : game.file} · ${game.result} · ${game.date}`;
    select.replaceChildren(...data.games.map((game) => element("option", { value: game.file, text: label(game) })));
    if (data.games.length) {
      replay.name = data.games[0].file;
      replay.step = 0;
      await showReplayStep();
    } else {
      say("No game records in the replay folder.");
    }
  } catch (error) {
    say(error.message, true);
  }
}

async function showReplayStep() {
  const query = `step=${replay.step}&view=${encodeURIComponent(replay.seat)}`;
  try {
    const view = await api("GET", `/api/replays/${encodeURIComponent(replay.name)}?${query}`);
    replay.steps = view.steps;
    const seatSelect = $("replay-seat");
    if (seatSelect.options.length !== view.num_players + 1) {
      seatSelect.replaceChildren(element("option", { value: "full", text: "full state" }),
        ...view.seats.map((s) => element("option", { value: s.seat, text: `seat of ${s.name}` })));
      seatSelect.value = replay.seat;
    }
    renderBoard($("replay-board"), view, view.viewer === null ? 0 : view.viewer);
    $("replay-board").dataset.step = view.step;
    $("replay-step").textContent = `step ${view.step} / ${view.steps}`;
    const previous = view.previous_move ? `last: ${view.previous_move.name}: ${view.previous_move.description}` : "the deal";
    const next = view.next_move ? ` · next: ${view.next_move.name}: ${view.next_move.description}` : "";
    $("replay-move").textContent = previous + next;
    $("replay-first").disabled = $("replay-back").disabled = view.step === 0;
    $("replay-last").disabled = $("replay-forward").disabled = view.step === view.steps;
    const result = $("replay-result");
    result.replaceChildren();
    if (view.finished) {
      result.appendChild(element("h2", { text: "Final scores" }));
      result.appendChild(scoresNode(view, view.seats.map((s) => s.name)));
    }
    say("");
  } catch (error) {
    say(error.message, true);
  }
}

function replayGo(step) {
  replay.step = Math.max(0, Math.min(replay.steps, step));
  showReplayStep();
}

// ---------------------------------------------------------------- start

function showTab(name) {
  $("play-view").hidden = name !== "play";
  $("replay-view").hidden = name !== "replay";
  $("tab-play").classList.toggle("active", name === "play");
  $("tab-replay").classList.toggle("active", name === "replay");
  if (name === "replay" && replay.name === null) loadReplayList();
}

async function init() {
  $("setup").addEventListener("submit", startGame);
  $("tab-play").addEventListener("click", () => showTab("play"));
  $("tab-replay").addEventListener("click", () => showTab("replay"));
  $("replay-file").addEventListener("change", (e) => { replay.name = e.target.value; replayGo(0); });
  $("replay-seat").addEventListener("change", (e) => { replay.seat = e.target.value; showReplayStep(); });
  $("replay-first").addEventListener("click", () => replayGo(0));
  $("replay-back").addEventListener("click", () => replayGo(replay.step - 1));
  $("replay-forward").addEventListener("click", () => replayGo(replay.step + 1));
  $("replay-last").addEventListener("click", () => replayGo(replay.steps));
  try {
    play.options = await api("GET", "/api/options");
    fillSetup();
    if (!play.options.replays) $("tab-replay").hidden = true;
    if (params.get("tab") === "replay") showTab("replay");
    say("Choose the table and press New game.");
  } catch (error) {
    say(error.message, true);
  }
}

document.addEventListener("DOMContentLoaded", init);
