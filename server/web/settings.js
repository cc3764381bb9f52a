// The settings page (/settings): how a player is told that a game awaits them, set without
// the API: e-mail (with its confirmation), the daily digest, reminders before a deadline,
// quiet hours, a webhook for the technical, this page's sound, and vacation. Everything is
// read from and written to the API (`PUT /api/me/notifications`, `/api/me/vacation`) as any
// client would; a refusal is shown beside the field the server names.

import { h, replace, status } from "./dom.js";
import { get, call, post, session, refusalText, ApiError } from "./api.js";
import { frame } from "./common.js";
import { soundWanted, wantSound } from "./awaiting.js";

const main = frame("Settings");
const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const ZONES = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [ZONE, "UTC"];

function zoneSelect(id, chosen) {
  const zones = ZONES.includes(chosen) ? ZONES : [chosen, ...ZONES];
  return h("select", { id, name: id }, zones.map((zone) => h("option", { value: zone, selected: zone === chosen }, zone.replaceAll("_", " "))));
}

function hourSelect(id, chosen) {
  return h("select", { id, name: id }, Array.from({ length: 24 }, (_, hour) =>
    h("option", { value: hour, selected: hour === chosen }, `${String(hour).padStart(2, "0")}:00`)));
}

// One input with its label, its hint and the place its error goes (`data-field`: the
// request's field it sets, as the server names it in a refusal).
function field(id, label, input, hint) {
  input.dataset.field = id;
  const error = h("p", { class: "field-error", id: `${id}-error`, hidden: true });
  input.setAttribute("aria-describedby", `${id}-error${hint ? ` ${id}-hint` : ""}`);
  return h("div", { class: "field" }, h("label", { for: input.id }, label), input,
    hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null, error);
}

// A checkbox that turns a whole setting on, with the place the setting's own refusal goes.
function check(name, input, label) {
  input.dataset.field = name;
  input.setAttribute("aria-describedby", `${name}-error`);
  return h("div", { class: "field" }, h("label", {}, input, ` ${label}`),
    h("p", { class: "field-error", id: `${name}-error`, hidden: true }));
}

function clearErrors(form) {
  for (const error of form.querySelectorAll(".field-error")) { error.hidden = true; error.textContent = ""; }
  for (const input of form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
}

// The server names the field of a refusal (`reminder_hours[1]`, `quiet_hours.time_zone`,
// `digest`): shown beside the closest input that sets it.
function showError(form, name, message) {
  const inputs = [...form.querySelectorAll("[data-field]")];
  const named = (path) => inputs.find((node) => node.dataset.field === path)
    || inputs.find((node) => node.dataset.field.startsWith(`${path}.`));
  let path = name;
  let input = named(path);
  while (!input) {
    const shorter = path.replace(/(\[\d+\]|\.[^.[]+)$/, "");
    if (shorter === path) return false;
    path = shorter;
    input = named(path);
  }
  const error = form.querySelector(`#${CSS.escape(input.dataset.field)}-error`);
  error.textContent = message.replace(/^[\w.[\]]+: /, "");
  error.hidden = false;
  input.setAttribute("aria-invalid", "true");
  input.focus();
  return true;
}

function refused(form, message, error) {
  const name = error instanceof ApiError ? error.body.field : null;
  const beside = name && showError(form, String(name), refusalText(error));
  status(message, beside ? "Not saved: see the field marked below." : `Not saved: ${refusalText(error)}`, "error");
}

function reminderHours(text, form) {
  const parts = text.split(/[,\s]+/).filter(Boolean);
  const hours = parts.map(Number);
  const wrong = parts.find((part, i) => !Number.isFinite(hours[i]));
  if (wrong !== undefined) {
    showError(form, "reminder_hours", `"${wrong}" is not a number of hours`);
    return null;
  }
  return hours;
}

function notificationsForm(now, message) {
  const email = h("input", { id: "email.address", type: "email", autocomplete: "email", value: now.email ? now.email.address : "" });
  const digestOn = h("input", { type: "checkbox", id: "digest-on", checked: Boolean(now.digest) });
  const digestHour = hourSelect("digest.hour", now.digest ? now.digest.hour : 8);
  const digestZone = zoneSelect("digest.time_zone", now.digest ? now.digest.time_zone : ZONE);
  const reminders = h("input", { id: "reminder_hours", inputmode: "decimal", value: now.reminder_hours.join(", ") });
  const quietOn = h("input", { type: "checkbox", id: "quiet-on", checked: Boolean(now.quiet_hours) });
  const quiet = now.quiet_hours || { start: "22:00", end: "07:00", time_zone: ZONE };
  const quietStart = h("input", { type: "time", id: "quiet_hours.start", value: quiet.start });
  const quietEnd = h("input", { type: "time", id: "quiet_hours.end", value: quiet.end });
  const quietZone = zoneSelect("quiet_hours.time_zone", quiet.time_zone);
  const webhook = h("input", { id: "webhook.url", type: "url", value: now.webhook ? now.webhook.url : "", placeholder: "https://" });
  const secret = h("div", { "aria-live": "polite" });
  const emailSays = (info) => (info ? (info.confirmed ? "Confirmed." : `We sent a link to ${info.address}: nothing else is sent until you follow it.`) : "No address yet.");
  const webhookState = now.webhook && !now.webhook.enabled ? `Turned off: ${now.webhook.disabled_reason || "it failed too often"}. Save it again to turn it on.` : null;
  // What a setting turned off would send is not asked for (and not sent).
  const follow = (box, inputs) => {
    const set = () => { for (const input of inputs) input.disabled = !box.checked; };
    box.addEventListener("change", set);
    set();
  };
  follow(digestOn, [digestHour, digestZone]);
  follow(quietOn, [quietStart, quietEnd, quietZone]);
  const form = h("form", { class: "card-form settings", "aria-label": "Notifications", novalidate: true, onsubmit: async (event) => {
    event.preventDefault();
    clearErrors(form);
    const hours = reminderHours(reminders.value, form);
    if (!hours) { status(message, "Not saved: see the field marked below.", "error"); return; }
    const body = { reminder_hours: hours };
    if (email.value.trim()) body.email = { address: email.value.trim() };
    if (digestOn.checked) body.digest = { hour: Number(digestHour.value), time_zone: digestZone.value };
    if (quietOn.checked) body.quiet_hours = { start: quietStart.value, end: quietEnd.value, time_zone: quietZone.value };
    if (webhook.value.trim()) body.webhook = { url: webhook.value.trim() };
    try {
      const saved = await call("PUT", "/api/me/notifications", body);
      status(message, "Saved.", "info");
      if (saved.webhook && saved.webhook.secret) {
        replace(secret, h("p", { class: "status info", role: "status" }, "Your webhook's signing secret, shown this once: ",
          h("code", {}, saved.webhook.secret)));
      }
      form.querySelector("#email\\.address-hint").textContent = emailSays(saved.email);
      if (saved.email && !saved.email.confirmed && (!now.email || now.email.address !== saved.email.address)) {
        status(message, `Saved. We sent a link to ${saved.email.address}: follow it to get e-mail.`, "info");
      }
    } catch (error) {
      refused(form, message, error);
    }
  } },
    h("h2", {}, "How you are told"),
    h("fieldset", {}, h("legend", {}, "E-mail"),
      field("email.address", "Your e-mail address", email, emailSays(now.email)),
      check("digest", digestOn, "One e-mail a day listing the games that await you, instead of one per turn"),
      field("digest.hour", "Sent at", digestHour),
      field("digest.time_zone", "In the time zone", digestZone)),
    h("fieldset", {}, h("legend", {}, "Reminders"),
      field("reminder_hours", "In a timed game, remind me this many hours before my deadline", reminders, "Hours, separated by commas: for example 24, 1. Empty: no reminders.")),
    h("fieldset", {}, h("legend", {}, "Quiet hours"),
      check("quiet_hours", quietOn, "Hold notifications back during these hours (sent when they end)"),
      field("quiet_hours.start", "From", quietStart),
      field("quiet_hours.end", "Until", quietEnd),
      field("quiet_hours.time_zone", "In the time zone", quietZone)),
    h("details", { class: "technical", open: Boolean(now.webhook) }, h("summary", {}, "Webhook (for programs)"),
      field("webhook.url", "Send each notice as a signed JSON POST to", webhook, webhookState || "docs/notifications.md says what is sent and how it is signed."),
      secret),
    h("button", { type: "submit", class: "primary" }, "Save"));
  return form;
}

function soundForm() {
  const sound = h("input", { type: "checkbox", id: "sound", checked: soundWanted(), onchange: () => wantSound(sound.checked) });
  return h("section", { class: "card-form", "aria-label": "In this browser" }, h("h2", {}, "In this browser"),
    h("p", {}, "While a page of this site is open, its tab shows how many games await you, and a line appears when one becomes your turn."),
    h("div", { class: "field" }, h("label", {}, sound, " Also play a short sound")));
}

function vacationForm(info, message) {
  const days = h("input", { type: "number", id: "days", min: 1, max: info.allowance_days, value: 7, inputmode: "numeric" });
  const left = Math.max(0, info.allowance_days - info.used_days);
  const section = h("section", { class: "card-form", "aria-label": "Vacation" }, h("h2", {}, "Vacation"));
  const shown = (now) => {
    const form = h("form", { novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(form);
      try {
        shown(await post("/api/me/vacation", { days: Number(days.value) }));
        status(message, "You are on vacation: your clocks stand still.", "info");
      } catch (error) {
        refused(form, message, error);
      }
    } },
      field("days", "Days from now", days, `Your clocks stand still in every timed game; the others see until when. ${left.toFixed(1).replace(/\.0$/, "")} of ${info.allowance_days} days left this year.`),
      h("button", { type: "submit" }, "Go on vacation"));
    const back = h("button", { type: "button", onclick: async () => {
      try {
        shown(await call("DELETE", "/api/me/vacation"));
        status(message, "Welcome back: your clocks run again.", "info");
      } catch (error) {
        status(message, refusalText(error), "error");
      }
    } }, "Come back now");
    replace(section, h("h2", {}, "Vacation"),
      now.until ? h("p", {}, `On vacation until ${new Date(now.until).toLocaleString()}. `, back) : form);
  };
  shown(info);
  return section;
}

async function settings() {
  const message = h("div", { "aria-live": "assertive" });
  try {
    const [now, vacation] = await Promise.all([get("/api/me/notifications"), get("/api/me/vacation")]);
    replace(main, h("h1", {}, "Settings"), message,
      h("div", { class: "settings-page" }, notificationsForm(now, message), h("div", {}, soundForm(), vacationForm(vacation, message))));
  } catch (error) {
    replace(main, h("h1", {}, "Settings"), message);
    status(message, error.status === 401 ? "Your sign-in is no longer valid: sign out and in again." : refusalText(error), "error");
  }
}

if (session()) await settings();
else replace(main, h("h1", {}, "Settings"), h("p", {}, "Sign in first: ", h("a", { href: "/#next=/settings" }, "pick a name or use a login link"), "."));
