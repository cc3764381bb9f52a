// The dock of the play page: whose turn it is, and on your turn your hand, the step's choices
// and Confirm. On a phone it is a bar at the foot of the screen, the board scrolling above it
// (style.css), so that the choices of a turn are on screen the moment it starts; on a desktop
// it heads the side column. The page leaves room for it under its last line
// (`--dock-height`), and a place on the board that a step asks for is brought into the room
// it leaves.

import { h } from "./dom.js";

export class Dock {
  constructor(...parts) {
    this.node = h("div", { class: "dock" }, ...parts);
    this.brought = null;
    new ResizeObserver(() => {
      document.body.style.setProperty("--dock-height", `${this.node.offsetHeight}px`);
    }).observe(this.node);
  }

  // Whether it is a bar over the foot of the screen (a phone) rather than in the page.
  get docked() {
    return getComputedStyle(this.node).position === "fixed";
  }

  // Scroll `node` (a city's tile) wholly into the window above the dock, once for each `key`
  // (a step): choosing a card never leaves the place you choose next off the screen.
  bring(node, key) {
    if (!node || key === this.brought) return;
    this.brought = key;
    const box = node.getBoundingClientRect();
    const top = 8;
    const bottom = window.innerHeight - (this.docked ? this.node.offsetHeight : 0) - 8;
    if (box.top < top) window.scrollBy(0, box.top - top);
    else if (box.bottom > bottom) window.scrollBy(0, Math.min(box.top - top, box.bottom - bottom));
  }
}
