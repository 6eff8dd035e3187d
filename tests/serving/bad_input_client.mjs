// The bad inputs through the official OpenAI client, each followed by a look at /metrics;
// then one good request. Prints what it got as one JSON line.
// Usage: node bad_input_client.mjs BASE_URL API_KEY TEXT_MODEL
import OpenAI from 'openai';

const [baseURL, apiKey, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const messages = [{ role: 'user', content: 'hello' }];
const schemaFormat = (schema) => ({ type: 'json_schema', json_schema: { name: 'answer', schema } });

// A schema nested 40 objects deep, and one of 300 KiB.
let deep = { type: 'string' };
for (let i = 0; i < 40; ++i) deep = { type: 'object', properties: { a: deep }, required: ['a'] };
const large = { type: 'object', properties: {} };
for (let i = 0; i < 3000; ++i) large.properties[`field_${i}_${'x'.repeat(80)}`] = { type: 'string' };

const bad = {
  unknown_schema_keyword: { chat: true, body: { model, messages, max_tokens: 4,
    response_format: schemaFormat({ type: 'object', not: { type: 'string' } }) } },
  schema_too_deep: { chat: true, body: { model, messages, max_tokens: 4, response_format: schemaFormat(deep) } },
  schema_too_large: { chat: true, body: { model, messages, max_tokens: 4, response_format: schemaFormat(large) } },
  tool_without_name: { chat: true, body: { model, messages, max_tokens: 4,
    tools: [{ type: 'function', function: { parameters: { type: 'object' } } }] } },
  completion_logprobs_21: { chat: false, body: { model, prompt: 'hello', max_tokens: 4, logprobs: 21 } },
  chat_top_logprobs_21: { chat: true, body: { model, messages, max_tokens: 4, logprobs: true, top_logprobs: 21 } },
  streamed_logprobs_21: { chat: false, body: { model, prompt: 'hello', max_tokens: 4, logprobs: 21, stream: true } },
  n_129: { chat: true, body: { model, messages, max_tokens: 4, n: 129 } },
};

// The server's gauges that would show a leak: requests running or waiting, KV blocks held.
async function gauges() {
  const text = await (await fetch(baseURL.replace(/\/v1$/, '') + '/metrics')).text();
  const value = (name) => Number(text.split('\n').find((l) => l.startsWith(name + '{')).split(' ').pop());
  return {
    running: value('vllm:num_requests_running'),
    waiting: value('vllm:num_requests_waiting'),
    kv_usage: value('vllm:kv_cache_usage_perc'),
  };
}

const out = {};
for (const [name, { chat, body }] of Object.entries(bad)) {
  let answer;
  try {
    const r = await (chat ? client.chat.completions.create(body) : client.completions.create(body));
    answer = { status: 200, body: body.stream ? 'stream' : r };
  } catch (e) {
    answer = { status: e.status, param: e.param, message: e.message };
  }
  out[name] = { ...answer, after: await gauges() };
}
const good = await client.chat.completions.create({ model, messages, max_tokens: 4, temperature: 0 });
out.good_after = { finish_reason: good.choices[0].finish_reason, usage: good.usage, after: await gauges() };
console.log(JSON.stringify(out));
