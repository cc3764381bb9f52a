// The game's own card list (it travels in the game's first event: the card data is a
// reconstruction and a game may be played with another file), and cards told in words.

export class Cards {
  constructor(gameData) {
    this.byId = new Map();
    for (const card of (gameData && gameData.cards) || []) this.byId.set(card.id, card);
    this.routes = gameData ? gameData.trade_routes : null;
    this.delegates = gameData ? gameData.delegates || null : null;
    this.nobles = new Map(((gameData && gameData.nobles) || []).map((noble) => [noble.id, noble.label]));
    // Each city's prestige tokens [high, low] (R8), by name.
    this.tokens = new Map(((gameData && gameData.cities) || []).map((city) => [city.name, city.prestige_tokens]));
  }

  info(id) {
    return this.byId.get(id) || { id, city: id ? id.split("-")[0] : "?", crests: 0, star: false, portraits: [], action: null };
  }

  // "Ferrara, 2 crests, star": what a person needs to choose a card.
  words(id) {
    if (!id) return "no card";
    const card = this.info(id);
    const parts = [card.city, `${card.crests} crest${card.crests === 1 ? "" : "s"}`];
    if (card.star) parts.push("star");
    if (card.portraits && card.portraits.length) parts.push(`portrait ${card.portraits.join("")}`);
    if (card.action) parts.push(card.action.replaceAll("_", " "));
    return parts.join(", ");
  }

  // A short face: the crests as marks, the star, the action.
  marks(id) {
    const card = this.info(id);
    let text = "\u25C6".repeat(Math.max(0, card.crests || 0));
    if (card.star) text += "\u2605";
    if (card.portraits && card.portraits.length) text += ` ${card.portraits.join("")}`;
    if (card.action === "move_top_floor") text += " \u21C4";
    else if (card.action) text += " +";
    return text;
  }
}

export function gameDataOf(events) {
  for (const item of events) {
    if (item.event && item.event.type === "game_created") return item.event.game_data;
  }
  return null;
}
