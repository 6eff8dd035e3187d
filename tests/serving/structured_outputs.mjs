// Structured outputs through the official OpenAI client (response_format), validated with ajv:
// every schema below (together they use every keyword docs/structured-outputs.md supports) on
// /v1/chat/completions whole and streamed, and some on /v1/completions, at temperature 1 on a
// random-weight model. Each output must finish with "stop", parse, and validate; streamed text
// must equal the whole one for the same seed. Also: a tiny max_tokens finishes with "length",
// and bad formats are 400s naming the field. Prints one JSON line: {checked, failures, ...}.
// Usage: node structured_outputs.mjs BASE_URL API_KEY TEXT_MODEL
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import OpenAI from 'openai';

const [baseURL, apiKey, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

// Bounded schemas (strings with maxLength, arrays with maxItems...), so that even a random model
// finishes every document well inside max_tokens; the exceptions are format email (its local part
// has no bound: format takes no maxLength) and json_object (any string), which may run out of
// max_tokens: then they must finish with "length" (listed in ran_out), never "stop".
const str = (extra = {}) => ({ type: 'string', maxLength: 8, ...extra });
const schemas = {
  object_closed: { type: 'object', properties: { name: str(), age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false },
  object_optional: { type: 'object', properties: { a: { type: 'integer' }, b: str(), c: { type: 'boolean' } }, required: ['b'], additionalProperties: false },
  array_items: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 99 }, maxItems: 5 },
  array_bounds: { type: 'array', items: str(), minItems: 2, maxItems: 3 },
  tuple: { type: 'array', prefixItems: [str(), { type: 'integer' }], items: false },
  tuple_then_items: { type: 'array', prefixItems: [{ type: 'boolean' }], items: { type: 'null' }, minItems: 2, maxItems: 4 },
  string_bounded: { type: 'string', minLength: 2, maxLength: 6 },
  number: { type: 'number' },
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  null: { type: 'null' },
  type_union: { type: ['integer', 'null', 'boolean'] },
  enum_strings: { enum: ['red', 'green', 'blue'] },
  enum_mixed: { enum: [1, 'two', null, true, { k: [1, 2] }] },
  const: { const: 'fixed' },
  const_object: { type: 'object', properties: { v: { const: 3 } }, required: ['v'], additionalProperties: false },
  any_of: { anyOf: [{ type: 'string', maxLength: 3 }, { type: 'integer', minimum: 0 }] },
  one_of_tagged: {
    oneOf: [
      { type: 'object', properties: { kind: { const: 'circle' }, r: { type: 'number', minimum: 0, maximum: 10 } }, required: ['kind', 'r'], additionalProperties: false },
      { type: 'object', properties: { kind: { const: 'square' }, side: { type: 'integer', minimum: 1, maximum: 100 } }, required: ['kind', 'side'], additionalProperties: false },
    ],
  },
  ref_defs: {
    $defs: { point: { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer' } }, required: ['x', 'y'], additionalProperties: false } },
    type: 'object', properties: { from: { $ref: '#/$defs/point' }, to: { $ref: '#/$defs/point' } }, required: ['from', 'to'], additionalProperties: false,
  },
  ref_recursive_list: {
    $defs: { node: { type: 'object', properties: { v: { type: 'integer', minimum: 0, maximum: 9 }, next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } }, required: ['v', 'next'], additionalProperties: false } },
    $ref: '#/$defs/node',
  },
  ref_recursive_root: {
    type: 'object', properties: { name: { type: 'string', maxLength: 4 }, child: { anyOf: [{ $ref: '#' }, { type: 'null' }] } }, required: ['name', 'child'], additionalProperties: false,
  },
  min_max_length: { type: 'object', properties: { code: { type: 'string', minLength: 3, maxLength: 3 } }, required: ['code'], additionalProperties: false },
  format_date: { type: 'string', format: 'date' },
  format_date_time: { type: 'string', format: 'date-time' },
  format_uuid: { type: 'string', format: 'uuid' },
  format_email: { type: 'object', properties: { email: { type: 'string', format: 'email' } }, required: ['email'], additionalProperties: false },
  pattern_anchored: { type: 'string', pattern: '^[A-Z]{2}-\\d{3,5}$' },
  pattern_alternation: { type: 'string', pattern: '^(cat|dog)s?$' },
  pattern_classes: { type: 'string', pattern: '^[a-f0-9]{4}(?:x|yz){0,2}$' },
  integer_range: { type: 'integer', minimum: -20, maximum: 300 },
  number_range: { type: 'number', minimum: -1.5, maximum: 2.5 },
  integer_minimum_object: { type: 'object', properties: { n: { type: 'integer', minimum: 5, maximum: 1000 } }, required: ['n'], additionalProperties: false },
  nested: {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, maxItems: 3 },
      when: { type: 'string', format: 'date' },
      score: { type: 'number', minimum: 0, maximum: 1 },
      owner: { type: 'object', properties: { name: str(), admin: { type: 'boolean' } }, required: ['name', 'admin'], additionalProperties: false },
    },
    required: ['id', 'tags', 'when', 'score', 'owner'],
    additionalProperties: false,
  },
  annotations: { title: 'T', description: 'd', type: 'object', properties: { x: { type: 'integer', default: 3, examples: [1] } }, required: ['x'], additionalProperties: false },
};

const out = { checked: 0, failures: [], schemas: Object.keys(schemas).length };
const fail = (what) => out.failures.push(what);
const messages = [{ role: 'user', content: 'Reply in JSON.' }];

const unbounded = new Set(['format_email', 'json_object']);
out.ran_out = [];
function check(name, where, text, finish, validate) {
  out.checked += 1;
  if (finish === 'length' && unbounded.has(name)) return out.ran_out.push(`${name} ${where}`);
  if (finish !== 'stop') return fail(`${name} ${where}: finish_reason ${finish}: ${text}`);
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail(`${name} ${where}: does not parse (${e.message}): ${text}`);
  }
  if (!validate(value)) fail(`${name} ${where}: ${ajv.errorsText(validate.errors)}: ${text}`);
}

async function chat(request, stream) {
  if (!stream) {
    const r = await client.chat.completions.create(request);
    return { text: r.choices[0].message.content, finish: r.choices[0].finish_reason };
  }
  let text = '';
  let finish = null;
  for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) {
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
  }
  return { text, finish };
}

async function completion(request, stream) {
  if (!stream) {
    const r = await client.completions.create(request);
    return { text: r.choices[0].text, finish: r.choices[0].finish_reason };
  }
  let text = '';
  let finish = null;
  for await (const chunk of await client.completions.create({ ...request, stream: true })) {
    for (const choice of chunk.choices) {
      text += choice.text ?? '';
      finish = choice.finish_reason ?? finish;
    }
  }
  return { text, finish };
}

const formatOf = (name, schema) => ({ type: 'json_schema', json_schema: { name, schema, strict: true } });
let seed = 1;
for (const [name, schema] of Object.entries(schemas)) {
  const validate = ajv.compile(schema);
  for (const s of [seed, seed + 1]) {
    const request = { model, messages, max_tokens: 400, temperature: 1, seed: s, response_format: formatOf(name, schema) };
    const whole = await chat(request, false);
    check(name, `chat seed ${s}`, whole.text, whole.finish, validate);
    const streamed = await chat(request, true);
    check(name, `chat stream seed ${s}`, streamed.text, streamed.finish, validate);
    if (streamed.text !== whole.text) fail(`${name} seed ${s}: streamed ${streamed.text} != whole ${whole.text}`);
  }
  seed += 2;
}
// /v1/completions takes response_format too (as vLLM's does).
for (const name of ['object_closed', 'one_of_tagged', 'nested']) {
  const request = { model, prompt: 'JSON:', max_tokens: 400, temperature: 1, seed: 7, response_format: formatOf(name, schemas[name]) };
  const validate = ajv.compile(schemas[name]);
  for (const stream of [false, true]) {
    const r = await completion(request, stream);
    check(name, `completion${stream ? ' stream' : ''}`, r.text, r.finish, validate);
  }
}
// json_object: any object.
for (const s of [1, 2, 3]) {
  for (const stream of [false, true]) {
    const r = await chat({ model, messages, max_tokens: 400, temperature: 1, seed: s, response_format: { type: 'json_object' } }, stream);
    check('json_object', `seed ${s}${stream ? ' stream' : ''}`, r.text, r.finish, ajv.compile({ type: 'object' }));
  }
}
// max_tokens inside the document: "length", never a "stop" on invalid JSON.
out.length = [];
for (const stream of [false, true]) {
  const r = await chat({ model, messages, max_tokens: 3, temperature: 1, seed: 1, response_format: formatOf('nested', schemas.nested) }, stream);
  out.length.push(r.finish);
}

// Bad formats: each a 400 naming the field.
async function status(extra) {
  try {
    await client.chat.completions.create({ model, messages, max_tokens: 4, ...extra });
    return { status: 200 };
  } catch (e) {
    return { status: e.status, param: e.param ?? e.error?.param ?? null, message: e.message };
  }
}
let deep = { type: 'integer' };
for (let i = 0; i < 40; i += 1) deep = { type: 'array', items: deep };
const large = { enum: Array.from({ length: 30000 }, (_, i) => `value-${i}`) };
out.bad = {
  unknown_keyword: await status({ response_format: formatOf('x', { type: 'string', not: { const: 'a' } }) }),
  too_deep: await status({ response_format: formatOf('x', deep) }),
  too_large: await status({ response_format: formatOf('x', large) }),
  unknown_type: await status({ response_format: { type: 'yaml' } }),
  no_name: await status({ response_format: { type: 'json_schema', json_schema: { schema: { type: 'integer' } } } }),
  no_schema: await status({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }),
  unknown_field: await status({ response_format: { type: 'json_object', schema: {} } }),
  guided_json: await status({ guided_json: { type: 'integer' } }),
  with_ignore_eos: await status({ ignore_eos: true, response_format: { type: 'json_object' } }),
};
console.log(JSON.stringify(out));
