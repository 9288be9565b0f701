// The form of a question, drawn from the CLI's own option specs (/api/lists: sizing/cli/spec_table.py),
// grouped as the specs say, the advanced ones folded away. A value typed once is kept for every
// question that takes the same option (the page's one `values` map). An option whose `needs`
// do not hold (memory's training options with Inference on, serve's searched ones with a rate)
// is disabled, with the reason beside it, and never sent.

const SPLIT = /[\s,]+/;

function termHolds(term, get) {
  const m = /^(!?)([a-z][a-z0-9-]*)(?:=([A-Za-z0-9_.|-]+)|>(-?[0-9.]+))?$/.exec(term);
  if (!m) return true;
  const [, not, key, values, above] = m;
  const v = get(key);
  let holds;
  if (values !== undefined) holds = values.split("|").includes(v);
  else if (above !== undefined) holds = v !== "" && Number(v) > Number(above);
  else holds = v !== "" && v !== "0";
  return not ? !holds : holds;
}
function termWords(term, specs) {
  const m = /^(!?)([a-z][a-z0-9-]*)(?:=([A-Za-z0-9_.|-]+)|>(-?[0-9.]+))?$/.exec(term);
  const label = specs.find((s) => s.key === m[2])?.label || m[2];
  if (m[3] !== undefined) return `${label} is ${m[3].split("|").join(" or ")}`;
  if (m[4] !== undefined) return `${label} above ${m[4]}`;
  return m[1] ? `without ${label}` : `with ${label}`;
}

function control(spec, value, lists) {
  let input;
  if (spec.flag) {
    input = document.createElement("input");
    input.type = "checkbox";
    input.checked = value === undefined ? spec.default : ["1", "true", "on"].includes(value);
  } else if (spec.choices || (spec.names && lists[spec.names])) {
    input = document.createElement("select");
    const names = spec.choices || lists[spec.names].map((row) => row.name);
    input.add(new Option(spec.default != null ? `default (${spec.default})` : "default", ""));
    for (const name of names) input.add(new Option(String(name), String(name)));
    input.value = value ?? "";
    if (input.value !== (value ?? "")) input.add(new Option(value, value, true, true)); // a typed value kept
  } else {
    input = document.createElement("input");
    input.type = "text";
    input.autocomplete = "off";
    if (["integer", "number", "quantity"].includes(spec.kind)) input.inputMode = spec.kind === "integer" ? "numeric" : "decimal";
    input.placeholder = spec.default != null ? `default ${spec.default}` : spec.multiple ? "several: 8, 16" : "";
    input.value = value ?? "";
  }
  input.name = spec.key;
  input.id = `opt-${spec.key}`;
  input.dataset.default = String(spec.default);
  return input;
}

function optionRow(spec, values, lists) {
  const row = document.createElement("div");
  row.className = spec.flag ? "opt check" : "opt";
  row.dataset.key = spec.key;
  const label = document.createElement("label");
  const input = control(spec, values.get(spec.key), lists);
  label.htmlFor = input.id;
  const help = document.createElement("p");
  help.className = "help";
  help.id = `help-${spec.key}`;
  help.textContent = `${spec.help} (${spec.flags[0]})`;
  input.setAttribute("aria-describedby", help.id);
  if (spec.flag) { label.append(input, " ", spec.label); row.append(label, help); }
  else { label.textContent = spec.label; row.append(label, input, help); }
  return row;
}

// the options of `tab`, in the groups' order; the advanced ones of a group in a folded <details>
export function buildForm(form, specs, groups, values, lists) {
  form.replaceChildren();
  for (const group of groups) {
    const mine = specs.filter((s) => s.group === group.key && s.key !== "format");
    if (!mine.length) continue;
    const set = document.createElement("fieldset");
    const legend = document.createElement("legend");
    legend.textContent = group.label;
    set.append(legend);
    for (const spec of mine.filter((s) => !s.advanced)) set.append(optionRow(spec, values, lists));
    const advanced = mine.filter((s) => s.advanced);
    if (advanced.length) {
      const more = document.createElement("details");
      more.className = "advanced";
      const summary = document.createElement("summary");
      summary.textContent = `More ${group.label.toLowerCase()} options (${advanced.length})`;
      more.append(summary, ...advanced.map((s) => optionRow(s, values, lists)));
      if (advanced.some((s) => values.has(s.key) && values.get(s.key) !== "")) more.open = true;
      set.append(more);
    }
    form.append(set);
  }
  applyNeeds(form, specs);
}

// the form's current value of an option ("" when not given, "1"/"0" for a switch)
export function valueOf(input) {
  if (input.type === "checkbox") return input.checked ? "1" : "0";
  return input.value.trim();
}

// disable what the current choices rule out (spec.needs), saying why
export function applyNeeds(form, specs) {
  const get = (key) => {
    const input = form.elements.namedItem(key);
    return input && !input.disabled ? valueOf(input) : "";
  };
  for (let pass = 0; pass < 2; pass++) { // a disabled option can disable another in turn
    for (const spec of specs) {
      const input = form.elements.namedItem(spec.key);
      if (!input || !spec.needs.length) continue;
      const failing = spec.needs.filter((t) => !termHolds(t, get));
      input.disabled = failing.length > 0;
      const row = input.closest(".opt");
      row.classList.toggle("disabled", input.disabled);
      let why = row.querySelector(".why");
      if (!why) { why = document.createElement("p"); why.className = "why"; row.append(why); }
      why.textContent = failing.length ? `Applies only ${failing.map((t) => termWords(t, specs)).join(", ")}.` : "";
    }
  }
}

// the request's (key, value) pairs for the options: what is given and not ruled out
export function optionPairs(form, specs) {
  const pairs = [];
  for (const spec of specs) {
    const input = form.elements.namedItem(spec.key);
    if (!input || input.disabled) continue;
    const value = valueOf(input);
    if (input.type === "checkbox") {
      if ((value === "1") !== (spec.default === true)) pairs.push([spec.key, value]);
    } else if (value !== "") {
      for (const one of spec.multiple ? value.split(SPLIT).filter(Boolean) : [value]) pairs.push([spec.key, one]);
    }
  }
  return pairs;
}

// mark the field an error names (the CLI's line names its flag: "--seq-len (-3) must be ...")
export function markError(form, specs, message) {
  clearErrors(form);
  const flags = message.match(/--[a-z][a-z0-9-]*/g) || [];
  for (const flag of flags) {
    const spec = specs.find((s) => s.flags.includes(flag));
    const input = spec && form.elements.namedItem(spec.key);
    if (!input) continue;
    input.setAttribute("aria-invalid", "true");
    const note = document.createElement("p");
    note.className = "field-error";
    note.id = `error-${spec.key}`;
    note.textContent = message;
    input.closest(".opt").append(note);
    input.setAttribute("aria-describedby", `${note.id} help-${spec.key}`);
    const folded = input.closest("details");
    if (folded) folded.open = true;
    return spec.key;
  }
  return null;
}
export function clearErrors(form) {
  for (const note of form.querySelectorAll(".field-error")) note.remove();
  for (const input of form.querySelectorAll("[aria-invalid]")) {
    input.removeAttribute("aria-invalid");
    input.setAttribute("aria-describedby", `help-${input.name}`);
  }
}
