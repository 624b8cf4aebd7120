// Playing cards drawn as SVG: ranks, suits (as paths, no font needed), jokers and backs.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const CARD_WIDTH = 70;
const CARD_HEIGHT = 100;
const SUIT_NAMES = ["spades", "hearts", "diamonds", "clubs"];
const RED_SUITS = new Set([1, 2]);
// Suit outlines in a 100 x 100 box.
const SUIT_PATHS = {
  spades: "M50 6 C28 32 6 44 10 64 C14 80 36 82 46 70 L40 94 L60 94 L54 70 C64 82 86 80 90 64 C94 44 72 32 50 6 Z",
  hearts: "M50 92 C30 72 4 56 6 32 C8 12 36 6 50 28 C64 6 92 12 94 32 C96 56 70 72 50 92 Z",
  diamonds: "M50 4 L86 50 L50 96 L14 50 Z",
  clubs: "M50 8 A18 18 0 0 1 66 40 A18 18 0 1 1 56 66 L62 94 L38 94 L44 66 A18 18 0 1 1 34 40 A18 18 0 0 1 50 8 Z",
};

function svgElement(name, attributes) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes || {})) element.setAttribute(key, value);
  return element;
}

function suitShape(suit, x, y, size, color) {
  const scale = size / 100;
  const group = svgElement("g", { transform: `translate(${x - size / 2} ${y - size / 2}) scale(${scale})` });
  group.appendChild(svgElement("path", { d: SUIT_PATHS[SUIT_NAMES[suit]], fill: color }));
  return group;
}

function cardText(text, x, y, size, color, extra) {
  const element = svgElement("text", Object.assign({
    x, y, fill: color, "font-size": size, "font-family": "DejaVu Sans, Arial, sans-serif",
    "font-weight": "bold", "text-anchor": "middle",
  }, extra || {}));
  element.textContent = text;
  return element;
}

function cardFrame(svg, fill) {
  svg.appendChild(svgElement("rect", {
    x: 1, y: 1, width: CARD_WIDTH - 2, height: CARD_HEIGHT - 2, rx: 6, fill, stroke: "#333", "stroke-width": 1.5,
  }));
}

// An <svg> of one card: card = {code, face, rank_name, suit} as sent by the server (suit null: a joker).
function cardSVG(card) {
  const svg = svgElement("svg", { viewBox: `0 0 ${CARD_WIDTH} ${CARD_HEIGHT}`, role: "img" });
  svg.setAttribute("aria-label", card.face);
  cardFrame(svg, "#fffdf7");
  if (card.suit === null) {
    const color = "#7b2d9b";
    svg.appendChild(cardText("JOKER", 35, 20, 12, color));
    const star = svgElement("path", {
      d: "M35 30 L41 46 L58 46 L44 56 L49 73 L35 63 L21 73 L26 56 L12 46 L29 46 Z", fill: "#d9a400", stroke: color,
    });
    svg.appendChild(star);
    svg.appendChild(cardText("JOKER", 35, 91, 12, color));
    return svg;
  }
  const color = RED_SUITS.has(card.suit) ? "#c81e1e" : "#161616";
  svg.appendChild(cardText(card.rank_name, 13, 20, 16, color));
  svg.appendChild(suitShape(card.suit, 13, 30, 12, color));
  const corner = svgElement("g", { transform: `rotate(180 ${CARD_WIDTH / 2} ${CARD_HEIGHT / 2})` });
  corner.appendChild(cardText(card.rank_name, 13, 20, 16, color));
  corner.appendChild(suitShape(card.suit, 13, 30, 12, color));
  svg.appendChild(corner);
  if (["J", "Q", "K"].includes(card.rank_name)) {
    svg.appendChild(svgElement("rect", { x: 18, y: 22, width: 34, height: 56, rx: 3, fill: "none", stroke: color }));
    svg.appendChild(cardText(card.rank_name, 35, 56, 26, color));
    svg.appendChild(suitShape(card.suit, 35, 68, 12, color));
  } else {
    svg.appendChild(suitShape(card.suit, 36, 52, 32, color));
  }
  return svg;
}

// The back of a card (hidden hands, the deck).
function cardBackSVG() {
  const svg = svgElement("svg", { viewBox: `0 0 ${CARD_WIDTH} ${CARD_HEIGHT}`, role: "img" });
  svg.setAttribute("aria-label", "card back");
  cardFrame(svg, "#2456a6");
  svg.appendChild(svgElement("rect", { x: 7, y: 7, width: 56, height: 86, rx: 4, fill: "none", stroke: "#e8eefc", "stroke-width": 2 }));
  for (let i = 0; i < 6; i += 1) {
    svg.appendChild(svgElement("path", { d: `M35 ${16 + i * 12} l10 6 l-10 6 l-10 -6 Z`, fill: "#9fb9ea" }));
  }
  return svg;
}

// An empty place (an empty pile).
function emptySlotSVG() {
  const svg = svgElement("svg", { viewBox: `0 0 ${CARD_WIDTH} ${CARD_HEIGHT}`, role: "img" });
  svg.setAttribute("aria-label", "empty");
  svg.appendChild(svgElement("rect", {
    x: 2, y: 2, width: CARD_WIDTH - 4, height: CARD_HEIGHT - 4, rx: 6, fill: "none", stroke: "#9fcfb0",
    "stroke-dasharray": "5 4", "stroke-width": 1.5,
  }));
  return svg;
}
