// The settings page (/settings): how a player is told that a game awaits them, set without
// the API: e-mail (with its confirmation), the daily digest, reminders before a deadline,
// quiet hours, a webhook for the technical, notifications on this device (Web Push) and the
// list of devices that get them, this page's sound, and vacation. Everything is read from and
// written to the API (`PUT /api/me/notifications`, `/api/me/push`, `/api/me/vacation`) as any
// client would; a refusal is shown beside the field the server names.

import { h, replace, status } from "./dom.js";
import { get, call, post, session, refusalText, ApiError } from "./api.js";
import { frame, pushSupported, pushKey, pushChecked, thisDevice, subscribeHere, forgetHere } from "./common.js";
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
  if (input.matches("input, select")) input.setAttribute("aria-invalid", "true");
  input.focus();
  return true;
}

// `what`: words before the server's (its field's name then left out); whether it went beside.
function refused(form, message, error, not = "Not saved", what = "") {
  const name = error instanceof ApiError ? error.body.field : null;
  const said = refusalText(error).replace(/^[\w.[\]]+: /, "");
  const text = what ? `${what}${said.charAt(0).toLowerCase()}${said.slice(1)}` : refusalText(error);
  const beside = Boolean(name && showError(form, String(name), text));
  status(message, beside ? `${not}: see the field marked below.` : `${not}: ${text}`, "error");
  return beside;
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

// Web Push: a notification on this phone or computer while no page of the site is open
// (common.js subscribes the browser and keeps it subscribed), and the player's devices.
function deviceName() {
  const agent = navigator.userAgent;
  const browser = [["Edg/", "Edge"], ["OPR/", "Opera"], ["SamsungBrowser", "Samsung Internet"], ["Firefox/", "Firefox"],
    ["FxiOS", "Firefox"], ["CriOS", "Chrome"], ["Chrome/", "Chrome"], ["Safari/", "Safari"]].find(([mark]) => agent.includes(mark));
  const system = [["Android", "Android"], ["iPhone", "iPhone"], ["iPad", "iPad"], ["CrOS", "ChromeOS"],
    ["Windows", "Windows"], ["Mac OS X", "Mac"], ["Linux", "Linux"]].find(([mark]) => agent.includes(mark));
  const name = browser ? browser[1] : "Browser";
  return system ? `${name} on ${system[1]}` : name;
}

const SERVICES = { "fcm.googleapis.com": "Google", "updates.push.services.mozilla.com": "Mozilla", "web.push.apple.com": "Apple" };
const BLOCKED = "Notifications are blocked for this site in this browser. To allow them, open the site's settings "
  + "(the icon just left of the address, or the browser's Settings, then Site settings, then Notifications), "
  + "allow notifications, and press the button again.";

function pushSection(devices, key) {
  const said = h("div", { "aria-live": "polite" });
  const listed = h("div", {});
  const listHeading = h("h3", { tabindex: -1 }, "Devices that get your notifications");
  const heading = h("h2", { id: "push-heading" }, "Notifications on this device");
  const section = h("section", { class: "card-form push", "aria-labelledby": "push-heading" }, heading);
  const show = (now) => {
    const here = thisDevice();
    replace(listed, now.length ? h("ul", { class: "devices" }, now.map((device) => {
      const service = SERVICES[device.service] ? `${SERVICES[device.service]} (${device.service})` : device.service;
      const added = new Date(device.created).toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
      return h("li", {},
        h("p", { class: "device-name" }, h("strong", {}, device.name), here && here.id === device.id ? h("span", { class: "here" }, "this device") : null),
        h("p", { class: "hint" }, `Added ${added}, through ${service}`),
        device.current ? null : h("p", { class: "stale" }, "Subscribed with an old key: open this site on that device again to renew it."),
        h("button", { type: "button", "aria-label": `Remove ${device.name}`, onclick: () => remove(device) }, "Remove"));
    })) : h("p", { class: "hint" }, "None yet."));
  };
  const remove = async (device) => {
    try {
      await call("DELETE", `/api/me/push/${encodeURIComponent(device.id)}`).catch((error) => {
        if (error.status !== 404) throw error; // 404: removed already (elsewhere, or its service ended it)
      });
      const here = thisDevice();
      if (here && here.id === device.id) await forgetHere();
      show(await get("/api/me/push"));
      status(said, `"${device.name}" gets no more notifications.`, "info");
      listHeading.focus();
    } catch (error) {
      status(said, `Not removed: ${refusalText(error)}`, "error");
    }
  };
  show(devices);
  const intro = h("p", {}, "Get a notification on this phone or computer when it is your turn, even while no page of this site is open. Quiet hours apply to these too.");
  const devicesPart = [listHeading, listed];
  if (!pushSupported()) {
    replace(section, heading, h("p", { class: "status info" }, "This browser cannot get notifications while this site is closed. "
      + "On a phone, install the app (in the browser's menu: \u201cAdd to Home screen\u201d or \u201cInstall\u201d) and open it from there, "
      + "or use another browser, such as Chrome, Edge or Firefox."), devicesPart);
    return section;
  }
  if (!key) {
    replace(section, heading, h("p", { class: "status info" }, "Notifications on phones and computers are off on this server. E-mail and webhooks still work."), devicesPart);
    return section;
  }
  const name = h("input", { id: "push.name", maxlength: 60, autocomplete: "off", value: (thisDevice() || {}).name || deviceName() });
  const blocked = Notification.permission === "denied";
  const button = h("button", { type: "submit", class: "primary", "aria-describedby": blocked ? "push-error push-blocked" : "push-error" },
    "Notify me on this device");
  button.dataset.field = "push";
  const form = h("form", { novalidate: true, onsubmit: async (event) => {
    event.preventDefault();
    clearErrors(form);
    button.disabled = true;
    try {
      const answer = Notification.permission === "default" ? await Notification.requestPermission() : Notification.permission;
      if (answer !== "granted") {
        status(said, answer === "denied" ? BLOCKED : "You did not allow notifications yet: press the button again and choose \u201cAllow\u201d.", "error");
        return;
      }
      status(said, "Asking this browser\u2026", "info");
      const device = await subscribeHere(key, name.value.trim());
      show(await get("/api/me/push"));
      status(said, `Done: "${device.name}" gets your notifications.`, "ok");
    } catch (error) {
      button.disabled = false; // so that the refusal beside it can take the focus
      if (error instanceof ApiError) {
        const field = String(error.body.field || "");
        // the server's words name the push service already; the keys are this browser's
        const what = field.startsWith("push.keys") ? "This browser's keys were refused: " : "";
        if (refused(form, said, error, "Not turned on", what)) status(said, null); // beside the button, which has the focus
      } else {
        status(said, `This browser could not subscribe: ${error.message || error}`, "error");
      }
    } finally {
      button.disabled = false;
    }
  } },
    field("push.name", "Name of this device", name, "To tell your devices apart in the list below."),
    blocked ? h("p", { class: "hint", id: "push-blocked" }, BLOCKED) : null,
    h("div", { class: "field" }, button, h("p", { class: "field-error", id: "push-error", hidden: true })));
  replace(section, heading, intro, form, said, devicesPart);
  return section;
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
    await pushChecked(); // a page renews this device's subscription first if it must
    const [now, vacation, key] = await Promise.all([get("/api/me/notifications"), get("/api/me/vacation"), pushKey()]);
    replace(main, h("h1", {}, "Settings"), message, h("div", { class: "settings-page" }, notificationsForm(now, message),
      h("div", {}, pushSection(now.push, key), soundForm(), vacationForm(vacation, message))));
  } catch (error) {
    replace(main, h("h1", {}, "Settings"), message);
    status(message, error.status === 401 ? "Your sign-in is no longer valid: sign out and in again." : refusalText(error), "error");
  }
}

if (session()) await settings();
else replace(main, h("h1", {}, "Settings"), h("p", {}, "Sign in first: ", h("a", { href: "/#next=/settings" }, "pick a name or use a login link"), "."));
