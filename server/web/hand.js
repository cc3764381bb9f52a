// Your hand, your options and your turn so far on the play page, as buttons: each card of
// the hand (a legal one marked, and choosable only while the step asks for a card), every
// other legal command of the step in words, and the staged turn with Confirm and the undos. Every legal command has a button here, so that a choice is
// always within reach whatever the board shows (the dock keeps these on a phone's screen).

import { h } from "./dom.js";
import { sameCommand } from "./board.js";

// The hand's buttons; `legal` the commands the viewer may choose now (none while it may not),
// `step` the step asked (null while the viewer may not choose).
export function handButtons(hand, cards, { legal, step, onCommand }) {
  return h("ul", { class: "cards hand-cards" }, hand.map((card) => {
    const command = { type: "play_card", card };
    const allowed = legal.some((each) => sameCommand(each, command));
    return h("li", {}, h("button", {
      type: "button",
      class: `card-chip ${step === "play_card" ? (allowed ? "legal" : "other") : ""}`,
      disabled: step !== "play_card",
      dataset: { card },
      "aria-label": `Play ${card}: ${cards.words(card)}`,
      onclick: () => onCommand(command),
    }, h("span", { class: "chip-id" }, card), " ", h("span", { class: "chip-words" }, cards.words(card))));
  }));
}

// The step's other legal commands, one button each, in words (`describe`).
export function optionButtons(legal, describe, onCommand) {
  const others = legal.filter((command) => command.type !== "play_card");
  if (!others.length) return null;
  return [h("h2", {}, "Your options"), h("div", { class: "buttons options-list" }, others.map((command) =>
    h("button", { type: "button", class: "legal", dataset: { command: JSON.stringify(command) }, onclick: () => onCommand(command) }, describe(command))))];
}

// "Your turn so far": the staged commands in words (`staged`), and Confirm and the undos
// (`ended`: the last one turned up a card, so confirm before staging more).
export function stagedTurn(staged, { ended, busy, onConfirm, onUndo, onClear }) {
  const none = !staged.length || busy;
  return [
    h("h2", {}, "Your turn so far"),
    staged.length
      ? h("ol", { class: "staged" }, staged.map((words) => h("li", {}, words)))
      : h("p", { class: "hint" }, "Choose on the board or below; nothing is sent until you confirm."),
    ended ? h("p", { class: "hint" }, "Confirm to see what comes next (a card is turned up).") : null,
    h("div", { class: "buttons" },
      h("button", { type: "button", class: "primary", disabled: none, onclick: onConfirm }, "Confirm and send"),
      h("button", { type: "button", disabled: none, onclick: onUndo }, "Undo the last"),
      h("button", { type: "button", disabled: none, onclick: onClear }, "Undo all")),
  ];
}
