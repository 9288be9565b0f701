// Numbers in human units. The page is sent each value exactly as the CLI's JSON has it (integers
// beyond 2^53 as decimal strings) and its unit (sizing/ui/fields.py); this only writes it for a
// person: GiB for bytes, ms for short times, 6.74 B for counts, 59.3% for shares. The exact value
// is kept beside it (a table cell's data-value, a card's title).

const GIB = 2 ** 30;
const SI = [[1e24, "Y"], [1e21, "Z"], [1e18, "E"], [1e15, "P"], [1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "k"]];

export const isIntText = (v) => typeof v === "string" && /^-?\d+$/.test(v);
export const toNumber = (v) => (isIntText(v) ? Number(v) : v);

// 3 significant digits, no exponent below 1e21 (a person reads 0.0123 and 1,234)
export function sig(x, digits = 3) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e21 || a < 1e-4) return x.toExponential(digits - 1).replace("e+", "e");
  const places = Math.max(0, digits - 1 - Math.floor(Math.log10(a)));
  return x.toLocaleString("en-US", { maximumFractionDigits: places, minimumFractionDigits: 0 });
}
// 6.74 B, 15 T, 1.31 k: counts with a suffix (B for billions, as model sizes are written)
export function si(x, digits = 3) {
  const a = Math.abs(x);
  for (const [size, suffix] of SI) if (a >= size) return `${sig(x / size, digits)} ${suffix}`;
  return sig(x, digits);
}
const SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹";
const power = (e) => `10${String(e).replace("-", "⁻").replace(/\d/g, (d) => SUPERSCRIPT[d])}`;
export function flops(x) {
  if (Math.abs(x) < 1e3) return `${sig(x)} FLOPs`;
  const e = Math.floor(Math.log10(Math.abs(x)));
  return `${sig(x / 10 ** e)} × ${power(e)} FLOPs`;
}
export function bytes(x) {
  const a = Math.abs(x);
  if (a >= 1024 * GIB) return `${sig(x / (1024 * GIB))} TiB`;
  if (a >= GIB / 2) return `${sig(x / GIB)} GiB`;
  if (a >= 2 ** 20) return `${sig(x / 2 ** 20)} MiB`;
  if (a >= 1024) return `${sig(x / 1024)} KiB`;
  return `${x} B`;
}
export function seconds(x) {
  const a = Math.abs(x);
  if (a === 0) return "0 s";
  if (a < 1e-3) return `${sig(x * 1e6)} µs`;
  if (a < 1) return `${sig(x * 1e3)} ms`;
  if (a < 120) return `${sig(x)} s`;
  if (a < 7200) return `${sig(x / 60)} min`;
  if (a < 172800) return `${sig(x / 3600)} h`;
  return `${sig(x / 86400)} days`;
}
export function usd(x) {
  const a = Math.abs(x);
  if (a >= 1e6) return `$${si(x)}`;
  if (a >= 100) return `$${Math.round(x).toLocaleString("en-US")}`;
  return `$${sig(x)}`;
}
const percent = (x) => `${sig(x * 100)}%`;

const UNITS = {
  bytes, seconds, usd, flops,
  params: (x) => si(x),
  tokens: (x) => si(x),
  hours: (x) => `${si(x)} GPU-hours`,
  days: (x) => `${sig(x)} days`,
  kwh: (x) => (Math.abs(x) >= 1e3 ? `${sig(x / 1e3)} MWh` : `${sig(x)} kWh`),
  tco2: (x) => `${sig(x)} tCO2eq`,
  ratio: percent,
  times: (x) => `${sig(x)}×`,
  per_second: (x) => `${si(x)} /s`,
  tokens_per_second: (x) => `${si(x)} tok/s`,
  number: (x) => (Number.isInteger(x) ? x.toLocaleString("en-US") : sig(x, 4)),
};

// a value in its unit, for a person; text and switches as words
export function show(value, unit = "number") {
  if (value === null || value === undefined) return "–";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (unit === "text" || (typeof value === "string" && !isIntText(value))) return String(value);
  const x = toNumber(value);
  if (typeof x !== "number") return String(value);
  return (UNITS[unit] || UNITS.number)(x);
}
// the exact value, digits grouped (integers beyond 2^53 from their string, never rounded)
export function exact(value) {
  if (isIntText(value)) return BigInt(value).toLocaleString("en-US");
  if (typeof value === "number" && Number.isInteger(value)) return value.toLocaleString("en-US");
  return value === null || value === undefined ? "–" : String(value);
}
// a chart axis tick in the axis' unit (log axes: only the powers of ten are labelled)
export function tick(unit, log = false) {
  return (value) => {
    if (log) {
      const e = Math.log10(Math.abs(value));
      if (Math.abs(e - Math.round(e)) > 1e-9) return "";
    }
    if (unit === "bytes") return bytes(value);
    if (unit === "seconds") return seconds(value);
    if (unit === "usd") return usd(value);
    if (unit === "flops") return value === 0 ? "0" : log ? power(Math.round(Math.log10(Math.abs(value)))) : value.toExponential(1).replace("e+", "e");
    return si(value, 2);
  };
}
