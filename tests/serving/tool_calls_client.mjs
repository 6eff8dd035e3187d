// Tool calls through the official OpenAI client, validated with ajv: tool_choice "required"
// (parallel and not) and a named function, whole and streamed, at temperature 1 on a
// random-weight model, many seeds. Every answer must finish with "tool_calls" and hold calls of
// the given functions (ids "call_...", type "function") whose arguments parse and validate against
// the function's parameters; the streamed delta.tool_calls pieces (the first of a call with its id
// and name, then argument fragments) must reassemble to the whole answer's calls for the same
// seed. Prints one JSON line: {checked, failures, calls}.
// Usage: node tool_calls_client.mjs BASE_URL API_KEY TEXT_MODEL SEEDS
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import OpenAI from 'openai';

const [baseURL, apiKey, model, seedCount] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

// Bounded parameters (strings with maxLength, arrays with maxItems), so that a random model ends
// every call well inside max_tokens; together they use objects, enums, bounded integers, nested
// objects, arrays, booleans, formats, optional members and $ref.
const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', maxLength: 10 },
          unit: { enum: ['celsius', 'fahrenheit'] },
          days: { type: 'integer', minimum: 1, maximum: 7 },
        },
        required: ['city', 'unit'],
        additionalProperties: false,
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'set_alarm',
      parameters: {
        $defs: { time: { type: 'object', properties: { hour: { type: 'integer', minimum: 0, maximum: 23 }, minute: { type: 'integer', minimum: 0, maximum: 59 } }, required: ['hour', 'minute'], additionalProperties: false } },
        type: 'object',
        properties: {
          at: { $ref: '#/$defs/time' },
          repeat: { type: 'boolean' },
          days: { type: 'array', items: { enum: ['mon', 'tue', 'wed'] }, maxItems: 3 },
          date: { type: 'string', format: 'date' },
        },
        required: ['at', 'repeat'],
        additionalProperties: false,
      },
    },
  },
  { type: 'function', function: { name: 'stop_all' } },  // no parameters: arguments {}
];
const validators = Object.fromEntries(
  tools.map((t) => [t.function.name, ajv.compile(t.function.parameters ?? { type: 'object', maxProperties: 0 })]));

const failures = [];
let checked = 0;
let calls = 0;

function checkCalls(what, choice, allowed, most) {
  checked++;
  const message = choice.message;
  if (choice.finish_reason !== 'tool_calls') failures.push(`${what}: finish_reason ${choice.finish_reason}`);
  const got = message.tool_calls ?? [];
  if (got.length < 1 || got.length > most) failures.push(`${what}: ${got.length} calls`);
  for (const call of got) {
    calls++;
    if (!/^call_[A-Za-z0-9]{24}$/.test(call.id)) failures.push(`${what}: id ${call.id}`);
    if (call.type !== 'function') failures.push(`${what}: type ${call.type}`);
    if (!allowed.includes(call.function.name)) failures.push(`${what}: called ${call.function.name}`);
    let args;
    try {
      args = JSON.parse(call.function.arguments);
    } catch (e) {
      failures.push(`${what}: arguments ${call.function.arguments} do not parse`);
      continue;
    }
    const validate = validators[call.function.name];
    if (validate && !validate(args)) {
      failures.push(`${what}: ${call.function.arguments} ${JSON.stringify(validate.errors)}`);
    }
  }
  return got;
}

// The streamed answer's calls reassembled from delta.tool_calls, checking OpenAI's piece shapes.
async function streamedCalls(what, body) {
  const stream = await client.chat.completions.create({ ...body, stream: true });
  const out = [];
  let finish = null;
  let content = '';
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.finish_reason) finish = choice.finish_reason;
    content += choice.delta?.content ?? '';
    for (const piece of choice.delta?.tool_calls ?? []) {
      if (piece.index === out.length) {
        if (!piece.id || !piece.function?.name) failures.push(`${what}: a call's first piece lacks its id or name`);
        out.push({ id: piece.id, type: piece.type, function: { name: piece.function.name, arguments: piece.function.arguments ?? '' } });
      } else if (piece.index < out.length && !piece.id && !piece.function?.name) {
        out[piece.index].function.arguments += piece.function?.arguments ?? '';
      } else {
        failures.push(`${what}: piece ${JSON.stringify(piece)} out of order`);
      }
    }
  }
  return { finish_reason: finish, message: { content, tool_calls: out } };
}

const sameCalls = (a, b) =>
  a.length === b.length &&
  a.every((c, k) => c.function.name === b[k].function.name && c.function.arguments === b[k].function.arguments);

const messages = [{ role: 'user', content: 'What should I do today?' }];
const names = tools.map((t) => t.function.name);
const cases = [
  { label: 'required', extra: { tool_choice: 'required' }, allowed: names, most: Infinity },
  { label: 'required_single', extra: { tool_choice: 'required', parallel_tool_calls: false }, allowed: names, most: 1 },
  ...names.map((name) => ({ label: `named_${name}`, extra: { tool_choice: { type: 'function', function: { name } } }, allowed: [name], most: 1 })),
];
for (let seed = 0; seed < Number(seedCount); seed++) {
  for (const c of cases) {
    const body = { model, messages, tools, temperature: 1, seed, max_tokens: 1500, ...c.extra };
    const what = `${c.label} seed ${seed}`;
    const whole = await client.chat.completions.create(body);
    const wholeCalls = checkCalls(what, whole.choices[0], c.allowed, c.most);
    const streamed = await streamedCalls(what + ' streamed', body);
    checkCalls(what + ' streamed', streamed, c.allowed, c.most);
    if (!sameCalls(wholeCalls, streamed.message.tool_calls)) {
      failures.push(`${what}: streamed ${JSON.stringify(streamed.message.tool_calls)} != whole ${JSON.stringify(wholeCalls)}`);
    }
  }
}
console.log(JSON.stringify({ checked, failures, calls }));
