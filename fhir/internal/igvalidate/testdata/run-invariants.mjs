// Evaluates FHIRPath invariants for the igvalidate tests with fhirpath.js
// (vendored beside this file, BSD-style licence in fhirpath/LICENSE.md).
// Input on stdin: {"tasks":[{"resource":0,"node":<json>,"base":"Observation.component","key":"ele-1","expression":"..."}],
// "resources":[<json>...]}. Output on stdout: one result per task,
// {"ok":true|false,"error":"..."} in order.
import { createRequire } from 'node:module';
import fhirpath from './fhirpath/esm/fhirpath.mjs';
const require = createRequire(import.meta.url);
// Expressions may call trace(), which logs: keep stdout for the answer.
console.log = () => {};
const r4 = require('./fhirpath/fhir-context/r4/index.js');

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const { tasks, resources } = JSON.parse(input);
const compiled = new Map();
const out = [];
for (const t of tasks) {
  const k = t.base + '\u0000' + t.expression;
  let fn = compiled.get(k);
  try {
    if (!fn) {
      fn = fhirpath.compile({ base: t.base, expression: t.expression }, r4);
      compiled.set(k, fn);
    }
    const root = resources[t.resource];
    const res = fn(t.node, { resource: root, rootResource: root });
    // An invariant holds when it evaluates to true (an empty result is
    // not a failure: the spec treats it as not applicable).
    const ok = res.length === 0 || (res.length === 1 && res[0] === true);
    out.push({ ok, value: JSON.stringify(res).slice(0, 200) });
  } catch (e) {
    out.push({ ok: false, error: String(e && e.message || e).slice(0, 300) });
  }
}
process.stdout.write(JSON.stringify(out));
